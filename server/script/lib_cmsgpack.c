/* lib_cmsgpack.c - the cmsgpack library of Redis's scripts: MessagePack pack and unpack.
 *
 * cmsgpack.pack(v, ...) encodes each value and joins them; unpack(s) decodes every value of
 * s; unpack_one(s [, offset]) and unpack_limit(s, limit [, offset]) decode one or limit values
 * from a 0-based offset and return the next offset first (-1 once s is consumed). Encoding
 * follows Redis's lua_cmsgpack: the smallest integer form for numbers that are integers
 * (int64), float32 when a double survives the round trip, else float64; strings as str
 * (fixstr, str8, str16, str32); a table whose keys are exactly 1..n as an array, any other as
 * a map; tables nested deeper than 16 (circular ones) and other types as nil. Decoding
 * accepts every form that encoding writes plus bin8/16/32 (as strings) and nests at most
 * CMSGPACK_MAX_DEPTH deep. Loop thread. */
#include "server/script/libs.h"

#include "common/buf.h"

#include <lauxlib.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define CMSGPACK_MAX_NESTING 16 /* deeper tables encode as nil, as Redis's */
#define CMSGPACK_MAX_DEPTH 1000 /* deeper input is refused */

/* ---- encoding: into a buf_t (nothing in it raises a Lua error, so nothing leaks) ---- */

static void put_be(buf_t *b, unsigned char tag, uint64_t v, int bytes)
{
    buf_push(b, (char)tag);
    for (int i = bytes - 1; i >= 0; i--) buf_push(b, (char)(v >> (8 * i)));
}

static void enc_int(buf_t *b, int64_t n)
{
    if (n >= 0) {
        if (n <= 127)
            buf_push(b, (char)n);
        else if (n <= 0xff)
            put_be(b, 0xcc, (uint64_t)n, 1);
        else if (n <= 0xffff)
            put_be(b, 0xcd, (uint64_t)n, 2);
        else if (n <= 0xffffffffLL)
            put_be(b, 0xce, (uint64_t)n, 4);
        else
            put_be(b, 0xcf, (uint64_t)n, 8);
    } else {
        if (n >= -32)
            buf_push(b, (char)(signed char)n);
        else if (n >= -128)
            put_be(b, 0xd0, (uint64_t)n, 1);
        else if (n >= -32768)
            put_be(b, 0xd1, (uint64_t)n, 2);
        else if (n >= -2147483648LL)
            put_be(b, 0xd2, (uint64_t)n, 4);
        else
            put_be(b, 0xd3, (uint64_t)n, 8);
    }
}

static void enc_double(buf_t *b, double d)
{
    float f = (float)d;
    if (d == (double)f) {
        uint32_t u;
        memcpy(&u, &f, 4);
        put_be(b, 0xca, u, 4);
    } else {
        uint64_t u;
        memcpy(&u, &d, 8);
        put_be(b, 0xcb, u, 8);
    }
}

static int is_int64(lua_Number n)
{
    return !isinf(n) && !isnan(n) && n >= -9223372036854775808.0 && n < 9223372036854775808.0 &&
           (lua_Number)(int64_t)n == n;
}

static void enc_string(buf_t *b, const char *s, size_t len)
{
    if (len < 32)
        buf_push(b, (char)(0xa0 | len));
    else if (len <= 0xff)
        put_be(b, 0xd9, len, 1);
    else if (len <= 0xffff)
        put_be(b, 0xda, len, 2);
    else
        put_be(b, 0xdb, len, 4);
    buf_append(b, s, len);
}

static void enc_header(buf_t *b, size_t n, unsigned char fix, unsigned char t16, unsigned char t32)
{
    if (n <= 15)
        buf_push(b, (char)(fix | n));
    else if (n <= 0xffff)
        put_be(b, t16, n, 2);
    else
        put_be(b, t32, n, 4);
}

/* 1 if the table on top has exactly the keys 1..n */
static int is_array(lua_State *L)
{
    lua_Number count = 0, max = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        lua_Number n;
        if (lua_type(L, -1) != LUA_TNUMBER || (n = lua_tonumber(L, -1)) <= 0 ||
            (lua_Number)(long long)n != n) {
            lua_pop(L, 1);
            return 0;
        }
        if (n > max) max = n;
        count++;
    }
    return max == count;
}

static void enc_value(lua_State *L, buf_t *b, int level);

static void enc_table(lua_State *L, buf_t *b, int level)
{
    if (is_array(L)) {
        size_t n = lua_objlen(L, -1);
        enc_header(b, n, 0x90, 0xdc, 0xdd);
        for (size_t j = 1; j <= n; j++) {
            lua_rawgeti(L, -1, (int)j);
            enc_value(L, b, level + 1);
        }
        return;
    }
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        n++;
    }
    enc_header(b, n, 0x80, 0xde, 0xdf);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2);
        enc_value(L, b, level + 1); /* the key */
        enc_value(L, b, level + 1); /* the value */
    }
}

/* Encodes the value on top and pops it. */
static void enc_value(lua_State *L, buf_t *b, int level)
{
    size_t len;
    const char *s;
    int t = lua_type(L, -1);
    /* deep (or circular) tables, and tables past what the stack holds, are nil */
    if (t == LUA_TTABLE && (level == CMSGPACK_MAX_NESTING || !lua_checkstack(L, 4))) t = LUA_TNIL;
    switch (t) {
    case LUA_TSTRING:
        s = lua_tolstring(L, -1, &len);
        enc_string(b, s, len);
        break;
    case LUA_TBOOLEAN:
        buf_push(b, (char)(lua_toboolean(L, -1) ? 0xc3 : 0xc2));
        break;
    case LUA_TNUMBER: {
        lua_Number n = lua_tonumber(L, -1);
        if (is_int64(n))
            enc_int(b, (int64_t)n);
        else
            enc_double(b, (double)n);
        break;
    }
    case LUA_TTABLE:
        enc_table(L, b, level);
        break;
    default:
        buf_push(b, (char)0xc0);
        break;
    }
    lua_pop(L, 1);
}

static int mp_pack(lua_State *L)
{
    int nargs = lua_gettop(L);
    if (nargs == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
    if (!lua_checkstack(L, 8))
        return luaL_argerror(L, 0, "Too many arguments for MessagePack pack.");
    buf_t b;
    buf_init(&b);
    for (int i = 1; i <= nargs; i++) {
        lua_pushvalue(L, i);
        enc_value(L, &b, 0);
    }
    lua_pushlstring(L, b.data ? b.data : "", b.len);
    buf_deinit(&b);
    return 1;
}

/* ---- decoding ---- */

typedef struct cur {
    const unsigned char *p;
    size_t left;
    int err; /* 1: missing bytes, 2: bad format, 3: too deep */
} cur_t;

static int need(cur_t *c, size_t n)
{
    if (c->left < n) {
        c->err = 1;
        return 0;
    }
    return 1;
}

static uint64_t get_be(cur_t *c, int bytes)
{
    uint64_t v = 0;
    for (int i = 0; i < bytes; i++) v = (v << 8) | c->p[i];
    c->p += bytes;
    c->left -= (size_t)bytes;
    return v;
}

static void dec_value(lua_State *L, cur_t *c, int depth);

static void dec_string(lua_State *L, cur_t *c, size_t len)
{
    if (!need(c, len)) return;
    lua_pushlstring(L, (const char *)c->p, len);
    c->p += len;
    c->left -= len;
}

static void dec_array(lua_State *L, cur_t *c, uint64_t n, int depth)
{
    lua_newtable(L);
    for (uint64_t i = 1; i <= n && !c->err; i++) {
        dec_value(L, c, depth + 1);
        if (c->err) return;
        lua_rawseti(L, -2, (int)i);
    }
}

static void dec_map(lua_State *L, cur_t *c, uint64_t n, int depth)
{
    lua_newtable(L);
    for (uint64_t i = 0; i < n && !c->err; i++) {
        dec_value(L, c, depth + 1);
        if (c->err) return;
        dec_value(L, c, depth + 1);
        if (c->err) return;
        if (lua_isnil(L, -2)) { /* a nil key cannot be stored: dropped */
            lua_pop(L, 2);
            continue;
        }
        lua_rawset(L, -3);
    }
}

/* Pushes one decoded value (on error: c->err set, what was pushed is left for the caller to
 * discard). */
static void dec_value(lua_State *L, cur_t *c, int depth)
{
    if (depth > CMSGPACK_MAX_DEPTH || !lua_checkstack(L, 4)) {
        c->err = 3;
        return;
    }
    if (!need(c, 1)) return;
    unsigned char t = *c->p++;
    c->left--;
    static const int sizes[] = {1, 2, 4, 8};
    if (t <= 0x7f)
        lua_pushnumber(L, t);
    else if (t >= 0xe0)
        lua_pushnumber(L, (signed char)t);
    else if ((t & 0xe0) == 0xa0)
        dec_string(L, c, t & 0x1f);
    else if ((t & 0xf0) == 0x90)
        dec_array(L, c, t & 0x0f, depth);
    else if ((t & 0xf0) == 0x80)
        dec_map(L, c, t & 0x0f, depth);
    else if (t == 0xc0)
        lua_pushnil(L);
    else if (t == 0xc2 || t == 0xc3)
        lua_pushboolean(L, t == 0xc3);
    else if (t >= 0xcc && t <= 0xcf) {
        int n = sizes[t - 0xcc];
        if (need(c, (size_t)n)) lua_pushnumber(L, (lua_Number)get_be(c, n));
    } else if (t >= 0xd0 && t <= 0xd3) {
        int n = sizes[t - 0xd0];
        if (need(c, (size_t)n)) {
            uint64_t v = get_be(c, n);
            int shift = 64 - 8 * n;
            int64_t s = shift ? (int64_t)(v << shift) >> shift : (int64_t)v;
            lua_pushnumber(L, (lua_Number)s);
        }
    } else if (t == 0xca) {
        if (need(c, 4)) {
            uint32_t u = (uint32_t)get_be(c, 4);
            float f;
            memcpy(&f, &u, 4);
            lua_pushnumber(L, f);
        }
    } else if (t == 0xcb) {
        if (need(c, 8)) {
            uint64_t u = get_be(c, 8);
            double d;
            memcpy(&d, &u, 8);
            lua_pushnumber(L, d);
        }
    } else if (t == 0xd9 || t == 0xda || t == 0xdb || (t >= 0xc4 && t <= 0xc6)) {
        int n = t >= 0xd9 ? sizes[t - 0xd9] : sizes[t - 0xc4];
        if (need(c, (size_t)n)) dec_string(L, c, get_be(c, n));
    } else if (t == 0xdc || t == 0xdd) {
        int n = t == 0xdc ? 2 : 4;
        if (need(c, (size_t)n)) dec_array(L, c, get_be(c, n), depth);
    } else if (t == 0xde || t == 0xdf) {
        int n = t == 0xde ? 2 : 4;
        if (need(c, (size_t)n)) dec_map(L, c, get_be(c, n), depth);
    } else {
        c->err = 2;
    }
}

static int unpack_full(lua_State *L, int limit, int offset)
{
    size_t len;
    const char *s = luaL_checklstring(L, 1, &len);
    int decode_all = !limit && !offset;
    if (offset < 0 || limit < 0)
        return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.", offset,
                          (int)len);
    if ((size_t)offset > len)
        return luaL_error(L, "Start offset %d greater than input length %d.", offset, (int)len);
    if (decode_all) limit = INT_MAX;
    cur_t c = {(const unsigned char *)s + offset, len - (size_t)offset, 0};
    int top = lua_gettop(L), cnt;
    for (cnt = 0; c.left > 0 && cnt < limit; cnt++) {
        dec_value(L, &c, 0);
        if (c.err == 1) return luaL_error(L, "Missing bytes in input.");
        if (c.err == 2) return luaL_error(L, "Bad data format in input.");
        if (c.err == 3) return luaL_error(L, "too many items");
        lua_settop(L, top + cnt + 1);
    }
    if (!decode_all) {
        if (!lua_checkstack(L, 1)) return luaL_error(L, "too many items");
        lua_pushinteger(L, c.left == 0 ? -1 : (lua_Integer)(len - c.left));
        lua_insert(L, top + 1);
        cnt++;
    }
    return cnt;
}

static int mp_unpack(lua_State *L)
{
    return unpack_full(L, 0, 0);
}

static int mp_unpack_one(lua_State *L)
{
    int offset = (int)luaL_optinteger(L, 2, 0);
    lua_settop(L, 1);
    return unpack_full(L, 1, offset);
}

static int mp_unpack_limit(lua_State *L)
{
    int limit = (int)luaL_checkinteger(L, 2);
    int offset = (int)luaL_optinteger(L, 3, 0);
    lua_settop(L, 1);
    return unpack_full(L, limit, offset);
}

int script_open_cmsgpack(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"pack", mp_pack},
        {"unpack", mp_unpack},
        {"unpack_one", mp_unpack_one},
        {"unpack_limit", mp_unpack_limit},
        {NULL, NULL},
    };
    luaL_register(L, "cmsgpack", fns);
    lua_pushliteral(L, "lua-cmsgpack");
    lua_setfield(L, -2, "_NAME");
    lua_pushliteral(L, "lua-cmsgpack 0.4.0");
    lua_setfield(L, -2, "_VERSION");
    return 1;
}
