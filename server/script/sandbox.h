/* sandbox.h - read-only globals and libraries, no binary chunks (sandbox.c). Loop thread. */
#ifndef CTE_SERVER_SCRIPT_SANDBOX_H
#define CTE_SERVER_SCRIPT_SANDBOX_H

#include <lua.h>
#include <stddef.h>

/* After the libraries are open: removes loadfile, dofile and print and wraps the base
 * functions that could get past a read-only table or load a binary chunk. */
void sandbox_prepare(lua_State *L);
/* Last: turns every table among the globals, and the globals themselves, read-only. */
void sandbox_protect(lua_State *L);
/* Replaces the table on top with a read-only proxy of it; with missing_fails, reading a
 * name it lacks fails as reading a missing global does. */
void sandbox_protect_table(lua_State *L, int missing_fails);
/* Makes the globals read through the table on top (popped) instead of the real globals, or
 * through the real globals again when it is nil: FUNCTION LOAD runs a library's code with
 * only its load-time API visible. */
void sandbox_read_globals_from(lua_State *L);
/* Loads a text chunk with the protected globals as its environment: 0 with the function on
 * the stack, -1 with the message. */
int sandbox_load(lua_State *L, const char *chunk, size_t len, const char *name);
/* Sets the real global name to the value on top (popped), past the protection. */
void sandbox_set_global(lua_State *L, const char *name);
/* Pushes the protected globals table (_G as scripts see it). */
void sandbox_push_globals(lua_State *L);

#endif
