/* sandbox.c - what makes a Lua state safe for scripts (see engine.h, engine_state_new).
 *
 * Debian's Lua 5.1 has no read-only tables (Redis patches its own copy), so they are built
 * from proxies: the globals and each library table are empty tables whose metatable reads
 * through to the real table (__index) and refuses every write (__newindex), with a locked
 * __metatable. Globals also refuse reading a name that does not exist, as Redis does. The
 * functions that could get past a proxy are wrapped: rawset and setmetatable refuse protected
 * tables, getfenv never hands out the real globals, setfenv cannot change a thread's; loading
 * refuses binary chunks (Redis's Lua parses every chunk as text). Loop thread. */
#include "server/script/sandbox.h"

#include <lauxlib.h>
#include <lua.h>
#include <string.h>

#define REG_PROTECTED "cte.protected" /* weak set of protected tables */
#define REG_REAL_G "cte.real_G"
#define REG_PROXY_G "cte.proxy_G"
#define REG_LOCKED "cte.locked"
#define READONLY_MSG "Attempt to modify a readonly table"

/* with the script's position, as Redis's VM reports a write to a read-only table */
static int ro_newindex(lua_State *L)
{
    return luaL_error(L, READONLY_MSG);
}

/* without a position, as Redis's rawset and setmetatable report it */
static int ro_refuse(lua_State *L)
{
    lua_pushliteral(L, READONLY_MSG);
    return lua_error(L);
}

/* __index of the real globals (and of the load-time API): the name does not exist */
static int globals_index(lua_State *L)
{
    if (!lua_isstring(L, 2))
        return luaL_error(L, "Script attempted to access nonexistent global variable");
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      lua_tostring(L, 2));
}

/* 1 if the value at idx is a protected table. */
static int is_protected(lua_State *L, int idx)
{
    if (!lua_istable(L, idx)) return 0;
    lua_getfield(L, LUA_REGISTRYINDEX, REG_PROTECTED);
    lua_pushvalue(L, idx > 0 || idx <= LUA_REGISTRYINDEX ? idx : idx - 1);
    lua_rawget(L, -2);
    int yes = lua_toboolean(L, -1);
    lua_pop(L, 2);
    return yes;
}

static void mark_protected(lua_State *L, int idx)
{
    lua_getfield(L, LUA_REGISTRYINDEX, REG_PROTECTED);
    lua_pushvalue(L, idx > 0 ? idx : idx - 1);
    lua_pushboolean(L, 1);
    lua_rawset(L, -3);
    lua_pop(L, 1);
}

/* Replaces the table on top with its read-only proxy, which reads through to it. */
static void push_proxy(lua_State *L, int unused)
{
    lua_newtable(L); /* proxy */
    lua_newtable(L); /* its metatable */
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, ro_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_getfield(L, LUA_REGISTRYINDEX, REG_LOCKED);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    mark_protected(L, -1);
    lua_replace(L, -2); /* proxy in place of real */
}

/* ---- wrapped base functions ---- */

static int sb_rawset(lua_State *L)
{
    if (is_protected(L, 1)) return ro_refuse(L);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

static int sb_setmetatable(lua_State *L)
{
    if (is_protected(L, 1)) return ro_refuse(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

static int sb_getfenv(lua_State *L)
{
    int n = lua_gettop(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, n, 1);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_REAL_G);
    if (lua_rawequal(L, -1, -2)) {
        lua_pop(L, 2);
        lua_getfield(L, LUA_REGISTRYINDEX, REG_PROXY_G);
    } else {
        lua_pop(L, 1);
    }
    return 1;
}

static int sb_setfenv(lua_State *L)
{
    if (lua_isnumber(L, 1) && lua_tonumber(L, 1) == 0) return ro_refuse(L);
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

int sandbox_load(lua_State *L, const char *chunk, size_t len, const char *name)
{
    if (len > 0 && chunk[0] == LUA_SIGNATURE[0]) {
        lua_pushstring(L, "binary chunks are not allowed");
        return -1;
    }
    if (luaL_loadbuffer(L, chunk, len, name)) return -1;
    lua_getfield(L, LUA_REGISTRYINDEX, REG_PROXY_G);
    lua_setfenv(L, -2);
    return 0;
}

/* loadstring(s [, name]) without binary chunks: nil and a message when refused */
static int sb_loadstring(lua_State *L)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    const char *name = luaL_optstring(L, 2, s);
    if (sandbox_load(L, s, len, name) == 0) return 1;
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

/* load(fn [, name]): the pieces fn returns, joined, then as loadstring */
static int sb_load(lua_State *L)
{
    luaL_checktype(L, 1, LUA_TFUNCTION);
    const char *name = luaL_optstring(L, 2, "=(load)");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (;;) {
        lua_pushvalue(L, 1);
        lua_call(L, 0, 1);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            break;
        }
        if (!lua_isstring(L, -1)) return luaL_error(L, "reader function must return a string");
        luaL_addvalue(&b);
    }
    luaL_pushresult(&b);
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (sandbox_load(L, s, len, name) == 0) return 1;
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
}

/* Replaces global name (a base function) with fn, which gets the original as upvalue 1. */
static void wrap_global(lua_State *L, const char *name, lua_CFunction fn)
{
    lua_getglobal(L, name);
    lua_pushcclosure(L, fn, 1);
    lua_setglobal(L, name);
}

void sandbox_prepare(lua_State *L)
{
    lua_newtable(L);
    lua_newtable(L);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_PROTECTED);
    /* the locked metatable getmetatable shows for a protected table */
    lua_newtable(L);
    lua_newtable(L);
    lua_pushcfunction(L, ro_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, -2);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_LOCKED);
    lua_getfield(L, LUA_REGISTRYINDEX, REG_LOCKED);
    mark_protected(L, -1);
    lua_pop(L, 1);
    static const char *const gone[] = {"loadfile", "dofile", "print"};
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++) {
        lua_pushnil(L);
        lua_setglobal(L, gone[i]);
    }
    wrap_global(L, "rawset", sb_rawset);
    wrap_global(L, "setmetatable", sb_setmetatable);
    wrap_global(L, "getfenv", sb_getfenv);
    wrap_global(L, "setfenv", sb_setfenv);
    lua_pushcfunction(L, sb_loadstring);
    lua_setglobal(L, "loadstring");
    lua_pushcfunction(L, sb_load);
    lua_setglobal(L, "load");
}

/* Gives the table on top the metatable that fails reads of missing names. */
static void set_missing_error(lua_State *L)
{
    lua_newtable(L);
    lua_pushcfunction(L, globals_index);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
}

void sandbox_protect(lua_State *L)
{
    /* every table among the globals (the libraries) becomes a proxy */
    lua_pushvalue(L, LUA_GLOBALSINDEX);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        if (lua_istable(L, -1) && !lua_rawequal(L, -1, -3)) {
            lua_pushvalue(L, -2); /* key */
            lua_insert(L, -2);
            push_proxy(L, 0);
            lua_rawset(L, -4); /* changes a value of an existing key: allowed in lua_next */
            lua_pushvalue(L, -1);
        }
        lua_pop(L, 1);
    }
    /* strings' metatable: its __index is the real string table */
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_getfield(L, LUA_REGISTRYINDEX, REG_LOCKED);
        lua_setfield(L, -2, "__metatable");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    /* the globals: the proxy reads through the real table, whose own metatable fails reads
     * of missing names; the proxy is _G */
    lua_pushvalue(L, -1);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_REAL_G);
    push_proxy(L, 0); /* stack: proxy */
    lua_getfield(L, LUA_REGISTRYINDEX, REG_REAL_G);
    set_missing_error(L);
    lua_pushvalue(L, -2);
    lua_setfield(L, -2, "_G"); /* real._G = proxy */
    lua_pop(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_PROXY_G);
}

void sandbox_protect_table(lua_State *L, int missing_fails)
{
    if (missing_fails) set_missing_error(L);
    push_proxy(L, 0);
}

void sandbox_read_globals_from(lua_State *L)
{
    if (lua_isnil(L, -1)) {
        lua_pop(L, 1);
        lua_getfield(L, LUA_REGISTRYINDEX, REG_REAL_G);
    }
    lua_getfield(L, LUA_REGISTRYINDEX, REG_PROXY_G);
    lua_getmetatable(L, -1); /* the hidden metatable (lua_getmetatable ignores __metatable) */
    lua_pushvalue(L, -3);
    lua_setfield(L, -2, "__index");
    lua_pop(L, 3);
}

void sandbox_set_global(lua_State *L, const char *name)
{
    lua_getfield(L, LUA_REGISTRYINDEX, REG_REAL_G);
    lua_insert(L, -2);
    lua_setfield(L, -2, name);
    lua_pop(L, 1);
}

void sandbox_push_globals(lua_State *L)
{
    lua_getfield(L, LUA_REGISTRYINDEX, REG_PROXY_G);
}
