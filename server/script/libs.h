/* libs.h - the Lua libraries we write ourselves, as Redis ships them: cmsgpack (MessagePack
 * pack/unpack, lib_cmsgpack.c) and struct (pack/unpack/size, lib_struct.c). Each opener
 * registers its table as a global and leaves it on the stack, like luaopen_*. */
#ifndef CTE_SERVER_SCRIPT_LIBS_H
#define CTE_SERVER_SCRIPT_LIBS_H

#include <lua.h>

int script_open_cmsgpack(lua_State *L);
int script_open_struct(lua_State *L);

#endif
