/* bridge.c - Lua <-> RESP conversions (see bridge.h).
 *
 * The reply reader is a recursive descent over our own commands' output (complete and well
 * formed: it only guards against running off the end). The writer follows Redis 7.0's
 * luaReplyToRedisReply field by field, in its order of checks (err, ok, double, big_number,
 * map, set, verbatim_string, then array). Loop thread. */
#include "server/script/bridge.h"

#include "resp/resp.h"

#include <lauxlib.h>
#include <stdlib.h>
#include <string.h>

/* ---- reply -> Lua ---- */

typedef struct rd {
    const char *p, *end;
    int ok;
} rd_t;

/* The line at r->p (without CRLF) in *len; advances past it. NULL if cut short. */
static const char *rd_line(rd_t *r, size_t *len)
{
    const char *s = r->p;
    const char *nl = memchr(s, '\n', (size_t)(r->end - s));
    if (!nl || nl == s || nl[-1] != '\r') {
        r->ok = 0;
        return NULL;
    }
    *len = (size_t)(nl - 1 - s);
    r->p = nl + 1;
    return s;
}

static long long rd_ll(const char *s, size_t len)
{
    char tmp[32];
    if (len >= sizeof(tmp)) len = sizeof(tmp) - 1;
    memcpy(tmp, s, len);
    tmp[len] = '\0';
    return strtoll(tmp, NULL, 10);
}

/* The payload of a bulk-like item of n bytes at r->p. */
static const char *rd_bytes(rd_t *r, long long n)
{
    if (n < 0 || r->end - r->p < n + 2) {
        r->ok = 0;
        return NULL;
    }
    const char *s = r->p;
    r->p += n + 2;
    return s;
}

static void rd_value(lua_State *L, rd_t *r, int depth);

static void set_field_bool(lua_State *L, const char *name)
{
    lua_pushstring(L, name);
    lua_pushboolean(L, 1);
    lua_settable(L, -3);
}

static void rd_array(lua_State *L, rd_t *r, long long n, int depth)
{
    lua_newtable(L);
    for (long long i = 0; i < n && r->ok; i++) {
        lua_pushnumber(L, (lua_Number)(i + 1));
        rd_value(L, r, depth + 1);
        lua_settable(L, -3);
    }
}

/* {name = {k = v...}}: a map (pairs) or a set (values are true). */
static void rd_keyed(lua_State *L, rd_t *r, long long n, int depth, const char *name, int is_map)
{
    lua_newtable(L);
    lua_pushstring(L, name);
    lua_newtable(L);
    for (long long i = 0; i < n && r->ok; i++) {
        rd_value(L, r, depth + 1);
        if (is_map)
            rd_value(L, r, depth + 1);
        else
            lua_pushboolean(L, 1);
        if (!r->ok) {
            lua_pop(L, is_map ? 2 : 2);
            break;
        }
        lua_settable(L, -3);
    }
    lua_settable(L, -3);
}

static void push_named(lua_State *L, const char *name, const char *s, size_t len, int as_num)
{
    lua_newtable(L);
    lua_pushstring(L, name);
    if (as_num)
        lua_pushnumber(L, strtod(s, NULL));
    else
        lua_pushlstring(L, s, len);
    lua_settable(L, -3);
}

static void push_verbatim(lua_State *L, const char *s, size_t len)
{
    lua_newtable(L);
    lua_pushstring(L, "verbatim_string");
    lua_newtable(L);
    lua_pushstring(L, "format");
    lua_pushlstring(L, s, len >= 3 ? 3 : len);
    lua_settable(L, -3);
    lua_pushstring(L, "string");
    if (len >= 4)
        lua_pushlstring(L, s + 4, len - 4);
    else
        lua_pushliteral(L, "");
    lua_settable(L, -3);
    lua_settable(L, -3);
}

/* Pushes exactly one value (false when the reply was cut short or nests too deep). */
static void rd_value(lua_State *L, rd_t *r, int depth)
{
    size_t len;
    if (!lua_checkstack(L, 4) || depth > BRIDGE_MAX_DEPTH || r->p >= r->end) r->ok = 0;
    const char *s = r->ok ? rd_line(r, &len) : NULL;
    if (!s) {
        lua_pushboolean(L, 0);
        return;
    }
    char kind = s[0];
    const char *v = s + 1;
    len--;
    long long n;
    switch (kind) {
    case '+':
        push_named(L, "ok", v, len, 0);
        break;
    case '-':
        bridge_push_error(L, s, len + 1);
        set_field_bool(L, "ignore_error_stats_update");
        break;
    case ':':
        lua_pushnumber(L, (lua_Number)rd_ll(v, len));
        break;
    case '$':
    case '=':
        n = rd_ll(v, len);
        if (n < 0) {
            lua_pushboolean(L, 0);
            break;
        }
        v = rd_bytes(r, n);
        if (!v)
            lua_pushboolean(L, 0);
        else if (kind == '=')
            push_verbatim(L, v, (size_t)n);
        else
            lua_pushlstring(L, v, (size_t)n);
        break;
    case '*':
        n = rd_ll(v, len);
        if (n < 0)
            lua_pushboolean(L, 0);
        else
            rd_array(L, r, n, depth);
        break;
    case '%':
        rd_keyed(L, r, rd_ll(v, len), depth, "map", 1);
        break;
    case '~':
        rd_keyed(L, r, rd_ll(v, len), depth, "set", 0);
        break;
    case '_':
        lua_pushnil(L);
        break;
    case '#':
        lua_pushboolean(L, len > 0 && v[0] == 't');
        break;
    case ',':
        push_named(L, "double", v, len, 1);
        break;
    case '(':
        push_named(L, "big_number", v, len, 0);
        break;
    default:
        r->ok = 0;
        lua_pushboolean(L, 0);
        break;
    }
}

size_t bridge_reply_to_lua(lua_State *L, const char *p, size_t len)
{
    rd_t r = {p, p + len, 1};
    int top = lua_gettop(L);
    rd_value(L, &r, 0);
    if (!r.ok) {
        lua_settop(L, top);
        return 0;
    }
    return (size_t)(r.p - p);
}

void bridge_push_error(lua_State *L, const char *msg, size_t len)
{
    const char *code = "ERR", *text = msg;
    size_t codelen = 3, textlen = len;
    if (len > 0 && msg[0] == '-') {
        const char *sp = memchr(msg, ' ', len);
        if (sp) {
            code = msg + 1;
            codelen = (size_t)(sp - msg - 1);
            text = sp + 1;
            textlen = len - (size_t)(sp + 1 - msg);
        } else {
            text = msg + 1;
            textlen = len - 1;
        }
    }
    while (textlen && (text[textlen - 1] == '\r' || text[textlen - 1] == '\n')) textlen--;
    while (textlen && (text[0] == '\r' || text[0] == '\n')) {
        text++;
        textlen--;
    }
    lua_newtable(L);
    lua_pushstring(L, "err");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addlstring(&b, code, codelen);
    luaL_addchar(&b, ' ');
    luaL_addlstring(&b, text, textlen);
    luaL_pushresult(&b);
    lua_settable(L, -3);
}

/* ---- Lua -> reply ---- */

typedef struct wr {
    buf_t *out;
    int proto, lua_resp;
    bridge_error_fn *on_error;
    void *ud;
} wr_t;

/* s[0..len) as one line: CR and LF become spaces (as Redis's sdsmapchars). */
static void put_line(buf_t *b, char kind, const char *s, size_t len)
{
    buf_push(b, kind);
    size_t at = b->len;
    buf_append(b, s, len);
    for (size_t i = at; i < b->len; i++)
        if (b->data[i] == '\r' || b->data[i] == '\n') b->data[i] = ' ';
    buf_append(b, "\r\n", 2);
}

static void put_error(wr_t *w, const char *s, size_t len, int counted)
{
    size_t at = w->out->len + 1;
    if (len == 0 || s[0] != '-') {
        /* Redis prefixes "-ERR " to an error that lacks its '-' */
        buf_append(w->out, "-ERR ", 5);
        at = w->out->len - 4;
        buf_append(w->out, s, len);
        for (size_t i = at + 4; i < w->out->len; i++)
            if (w->out->data[i] == '\r' || w->out->data[i] == '\n') w->out->data[i] = ' ';
        buf_append(w->out, "\r\n", 2);
    } else {
        put_line(w->out, '-', s + 1, len - 1);
    }
    if (w->on_error) w->on_error(w->ud, w->out->data + at, w->out->len - 2 - at, counted);
}

/* The field name of the table on top, pushed (any type); the caller pops it. */
static int field(lua_State *L, const char *name)
{
    lua_pushstring(L, name);
    lua_rawget(L, -2);
    return lua_type(L, -1);
}

static void wr_value(lua_State *L, wr_t *w);

/* The error table on top: "-" + err, counted unless ignore_error_stats_update is set. */
static void wr_error_table(lua_State *L, wr_t *w)
{
    size_t len;
    field(L, "ignore_error_stats_update");
    int counted = lua_toboolean(L, -1);
    lua_pop(L, 1);
    const char *msg = (field(L, "err"), lua_tolstring(L, -1, &len));
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    luaL_addchar(&b, '-');
    luaL_addlstring(&b, msg, len);
    luaL_pushresult(&b);
    const char *full = lua_tolstring(L, -1, &len);
    put_error(w, full, len, counted);
    lua_pop(L, 2);
}

/* map (pairs) or set (keys) at the top of L, written as an aggregate. */
static void wr_keyed(lua_State *L, wr_t *w, int is_map)
{
    size_t at = resp_w_agg_defer(w->out);
    long long n = 0;
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pushvalue(L, -2); /* key copy: wr_value pops it */
        wr_value(L, w);
        if (is_map)
            wr_value(L, w);
        else
            lua_pop(L, 1);
        n++;
    }
    resp_w_agg_finish(w->out, at, w->proto, is_map ? '%' : '~', n);
}

static void wr_array(lua_State *L, wr_t *w)
{
    size_t at = resp_w_agg_defer(w->out);
    long long n = 0;
    for (;;) {
        lua_pushnumber(L, (lua_Number)(n + 1));
        lua_rawget(L, -2);
        if (lua_type(L, -1) == LUA_TNIL) {
            lua_pop(L, 1);
            break;
        }
        wr_value(L, w);
        n++;
    }
    resp_w_agg_finish(w->out, at, w->proto, '*', n);
}

/* The special tables; returns 1 if the table on top was one (and was written). */
static int wr_special(lua_State *L, wr_t *w)
{
    size_t len;
    int t = field(L, "err");
    if (t == LUA_TSTRING) {
        lua_pop(L, 1);
        wr_error_table(L, w);
        return 1;
    }
    lua_pop(L, 1);
    if (field(L, "ok") == LUA_TSTRING) {
        const char *s = lua_tolstring(L, -1, &len);
        put_line(w->out, '+', s, len);
        lua_pop(L, 1);
        return 1;
    }
    lua_pop(L, 1);
    if (field(L, "double") == LUA_TNUMBER) {
        resp_w_double(w->out, w->proto, lua_tonumber(L, -1));
        lua_pop(L, 1);
        return 1;
    }
    lua_pop(L, 1);
    if (field(L, "big_number") == LUA_TSTRING) {
        const char *s = lua_tolstring(L, -1, &len);
        if (w->proto >= 3)
            put_line(w->out, '(', s, len);
        else
            resp_w_bulk(w->out, s, len);
        lua_pop(L, 1);
        return 1;
    }
    lua_pop(L, 1);
    static const char *const keyed[] = {"map", "set"};
    for (int k = 0; k < 2; k++) {
        if (field(L, keyed[k]) == LUA_TTABLE) {
            wr_keyed(L, w, k == 0);
            lua_pop(L, 1);
            return 1;
        }
        lua_pop(L, 1);
    }
    if (field(L, "verbatim_string") == LUA_TTABLE) {
        size_t flen = 0, slen = 0;
        const char *f = (field(L, "format"), lua_tolstring(L, -1, &flen));
        lua_pushstring(L, "string");
        lua_rawget(L, -3);
        const char *s = lua_tolstring(L, -1, &slen);
        if (f && s && flen == 3) {
            char ext[4] = {f[0], f[1], f[2], 0};
            resp_w_verbatim(w->out, w->proto, ext, s, slen);
            lua_pop(L, 3);
            return 1;
        }
        lua_pop(L, 2);
    }
    lua_pop(L, 1);
    return 0;
}

static void wr_value(lua_State *L, wr_t *w)
{
    size_t len;
    if (!lua_checkstack(L, 4)) {
        /* Redis's wording for a reply nested past what the Lua stack holds */
        static const char msg[] = "-ERR reached lua stack limit";
        put_error(w, msg, sizeof(msg) - 1, 0);
        lua_pop(L, 1);
        return;
    }
    switch (lua_type(L, -1)) {
    case LUA_TSTRING: {
        const char *s = lua_tolstring(L, -1, &len);
        resp_w_bulk(w->out, s, len);
        break;
    }
    case LUA_TBOOLEAN:
        if (w->lua_resp == 2) {
            if (lua_toboolean(L, -1))
                buf_append(w->out, ":1\r\n", 4);
            else
                resp_w_null(w->out, w->proto);
        } else {
            resp_w_bool(w->out, w->proto, lua_toboolean(L, -1));
        }
        break;
    case LUA_TNUMBER:
        resp_w_int(w->out, (long long)lua_tonumber(L, -1));
        break;
    case LUA_TTABLE:
        if (!wr_special(L, w)) wr_array(L, w);
        break;
    default:
        resp_w_null(w->out, w->proto);
        break;
    }
    lua_pop(L, 1);
}

void bridge_lua_to_reply(lua_State *L, buf_t *out, int proto, int lua_resp,
                         bridge_error_fn *on_error, void *ud)
{
    wr_t w = {out, proto, lua_resp, on_error, ud};
    wr_value(L, &w);
}
