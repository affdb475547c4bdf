/* function.c - FUNCTION, FCALL and FCALL_RO (see script.h).
 *
 * A library is the code FUNCTION LOAD was given ("#!lua name=<lib>" then Lua): running the
 * code once registers its functions (redis.register_function) in the library being loaded;
 * the Lua functions stay referenced from the registry of the one FUNCTION Lua state. Library
 * names are case-sensitive, function names are not (looked up lower-cased), as Redis's.
 * A load or a restore is checked whole before anything changes: a failed one leaves every
 * library as it was. FUNCTION DUMP's payload is ours (documented at dump_cmd). Loop thread. */
#include "server/script/script.h"

#include "common/alloc.h"
#include "common/dict.h"
#include "common/glob.h"
#include "common/util.h"
#include "server/introspect.h"
#include "server/reply.h"
#include "server/script/engine.h"
#include "server/server.h"

#include <ctype.h>
#include <lauxlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define LOAD_TIMEOUT_MS 500

typedef struct lib lib_t;

typedef struct fn {
    dict_node_t node; /* in functions, by lower-case name */
    char *name, *lname, *desc;
    uint32_t flags;
    int ref; /* the Lua function, in the registry */
    lib_t *lib;
} fn_t;

struct lib {
    char *name;
    char *code;
    size_t code_len;
    fn_t **fns;
    int nfns, capfns;
    lib_t *next;
};

static lua_State *fn_L;
static lib_t *libs; /* every library, newest first */
static dict_t functions;
static lib_t *loading; /* the library whose code runs now (register_function adds to it) */
static long long load_start_us;

static const void *fn_key(const dict_node_t *n, size_t *len)
{
    const fn_t *f = (const fn_t *)n;
    *len = strlen(f->lname);
    return f->lname;
}

static const dict_type_t fn_dict_type = {fn_key, NULL};

static fn_t *fn_find(const char *name, size_t len)
{
    char low[256];
    if (len >= sizeof(low)) return NULL;
    for (size_t i = 0; i < len; i++) low[i] = (char)tolower((unsigned char)name[i]);
    return (fn_t *)dict_find(&functions, low, len, dict_hash(low, len));
}

static lib_t *lib_find(const char *name, size_t len)
{
    for (lib_t *l = libs; l; l = l->next)
        if (strlen(l->name) == len && !memcmp(l->name, name, len)) return l;
    return NULL;
}

static void lib_free(lib_t *l, int unref)
{
    for (int i = 0; i < l->nfns; i++) {
        fn_t *f = l->fns[i];
        if (unref && fn_L) luaL_unref(fn_L, LUA_REGISTRYINDEX, f->ref);
        xfree(f->name);
        xfree(f->lname);
        xfree(f->desc);
        xfree(f);
    }
    xfree(l->fns);
    xfree(l->name);
    xfree(l->code);
    xfree(l);
}

static void lib_link(lib_t *l)
{
    l->next = libs;
    libs = l;
    for (int i = 0; i < l->nfns; i++) dict_insert(&functions, &l->fns[i]->node);
}

static void lib_unlink(lib_t *l)
{
    for (lib_t **pp = &libs; *pp; pp = &(*pp)->next)
        if (*pp == l) {
            *pp = l->next;
            break;
        }
    for (int i = 0; i < l->nfns; i++) {
        const char *k = l->fns[i]->lname;
        dict_unlink(&functions, k, strlen(k), dict_hash(k, strlen(k)));
    }
    l->next = NULL;
}

/* ---- names and metadata ---- */

static int valid_name(const char *s, size_t len)
{
    if (len == 0) return 0;
    for (size_t i = 0; i < len; i++)
        if (!isalnum((unsigned char)s[i]) && s[i] != '_') return 0;
    return 1;
}

typedef struct meta_ctx {
    char *engine, *name;
    char *err;
    size_t errlen;
} meta_ctx_t;

static int meta_word(void *ud, int i, const char *w, size_t wl)
{
    meta_ctx_t *x = ud;
    if (i == 0) {
        x->engine = wl >= 2 ? xmemdup(w + 2, wl - 2) : xstrdup("");
        return 0;
    }
    if (wl >= 5 && !strncasecmp(w, "name=", 5)) {
        if (x->name) {
            snprintf(x->err, x->errlen,
                     "Invalid metadata value, name argument was given "
                     "multiple times");
            return 1;
        }
        x->name = xmemdup(w + 5, wl - 5);
        return 0;
    }
    snprintf(x->err, x->errlen, "Invalid metadata value given: %.*s", (int)wl, w);
    return 1;
}

/* The "#!<engine> name=<lib>" line: 0 with the engine and name (malloc'd), or -1 with err. */
static int metadata(const char *code, size_t len, char **engine, char **name, char *err,
                    size_t errlen)
{
    meta_ctx_t x = {NULL, NULL, err, errlen};
    size_t line_len;
    int rc = engine_shebang(code, len, meta_word, &x, &line_len);
    *engine = *name = NULL;
    if (rc == ENGINE_SHEBANG_NONE)
        snprintf(err, errlen, "Missing library metadata");
    else if (rc == ENGINE_SHEBANG_NO_LF || rc == ENGINE_SHEBANG_BAD)
        snprintf(err, errlen, "Invalid library metadata");
    else if (rc == ENGINE_SHEBANG_OK && !x.name)
        snprintf(err, errlen, "Library name was not given");
    if (rc != ENGINE_SHEBANG_OK || !x.name) {
        xfree(x.engine);
        xfree(x.name);
        return -1;
    }
    *engine = x.engine;
    *name = x.name;
    return 0;
}

/* ---- redis.register_function ---- */

/* Raises Redis's error table {err=msg} (msg with its code) */
static int raise(lua_State *L, const char *msg)
{
    lua_newtable(L);
    lua_pushstring(L, msg);
    lua_setfield(L, -2, "err");
    return lua_error(L);
}

static int read_flags(lua_State *L, int idx, uint32_t *flags)
{
    *flags = 0;
    for (int j = 1;; j++) {
        lua_rawgeti(L, idx, j);
        if (lua_isnil(L, -1)) {
            lua_pop(L, 1);
            return 0;
        }
        size_t len;
        const char *s = lua_isstring(L, -1) ? lua_tolstring(L, -1, &len) : NULL;
        uint32_t bit = s ? engine_flag_by_name(s, len) : 0;
        lua_pop(L, 1);
        if (!bit) return -1;
        *flags |= bit;
    }
}

/* The named form: {function_name=, callback=, flags=, description=}. Leaves the callback on
 * top; 0, or -1 with the message in *err. */
static int named_args(lua_State *L, const char **name, size_t *name_len, const char **desc,
                      uint32_t *flags, const char **err)
{
    int have_cb = 0;
    lua_pushnil(L);
    while (lua_next(L, 1)) {
        if (lua_type(L, -2) != LUA_TSTRING) {
            *err = "named argument key given to redis.register_function is not a string";
            return -1;
        }
        const char *key = lua_tostring(L, -2);
        if (!strcasecmp(key, "function_name")) {
            if (lua_type(L, -1) != LUA_TSTRING) {
                *err = "function_name argument given to redis.register_function must be a string";
                return -1;
            }
            *name = lua_tolstring(L, -1, name_len);
            lua_setfield(L, LUA_REGISTRYINDEX, "cte.rf_name"); /* keep it alive */
            continue;
        } else if (!strcasecmp(key, "description")) {
            if (lua_type(L, -1) != LUA_TSTRING) {
                *err = "description argument given to redis.register_function must be a string";
                return -1;
            }
            *desc = lua_tostring(L, -1);
            lua_setfield(L, LUA_REGISTRYINDEX, "cte.rf_desc");
            continue;
        } else if (!strcasecmp(key, "callback")) {
            if (!lua_isfunction(L, -1)) {
                *err = "callback argument given to redis.register_function must be a function";
                return -1;
            }
            lua_setfield(L, LUA_REGISTRYINDEX, "cte.rf_cb");
            have_cb = 1;
            continue;
        } else if (!strcasecmp(key, "flags")) {
            if (!lua_istable(L, -1)) {
                *err = "flags argument to redis.register_function must be a table representing "
                       "function flags";
                return -1;
            }
            if (read_flags(L, lua_gettop(L), flags) < 0) {
                *err = "unknown flag given";
                return -1;
            }
        } else {
            *err = "unknown argument given to redis.register_function";
            return -1;
        }
        lua_pop(L, 1);
    }
    if (!*name) {
        *err = "redis.register_function must get a function name argument";
        return -1;
    }
    if (!have_cb) {
        *err = "redis.register_function must get a callback argument";
        return -1;
    }
    lua_getfield(L, LUA_REGISTRYINDEX, "cte.rf_cb");
    return 0;
}

static void clear_named(lua_State *L)
{
    static const char *const keys[] = {"cte.rf_name", "cte.rf_desc", "cte.rf_cb"};
    for (int i = 0; i < 3; i++) {
        lua_pushnil(L);
        lua_setfield(L, LUA_REGISTRYINDEX, keys[i]);
    }
}

static int l_register_function(lua_State *L)
{
    if (!loading) {
        lua_settop(L, 0);
        return raise(L, "ERR redis.register_function can only be called on FUNCTION LOAD command");
    }
    int argc = lua_gettop(L);
    const char *name = NULL, *desc = NULL, *err = NULL;
    size_t name_len = 0;
    uint32_t flags = 0;
    if (argc < 1 || argc > 2)
        return raise(L, "ERR wrong number of arguments to redis.register_function");
    if (argc == 1) {
        if (!lua_istable(L, 1))
            return raise(L, "ERR calling redis.register_function with a single argument is only "
                            "applicable to Lua table (representing named arguments).");
        int rc = named_args(L, &name, &name_len, &desc, &flags, &err);
        if (rc < 0) {
            clear_named(L);
            char msg[256];
            snprintf(msg, sizeof(msg), "ERR %s", err);
            return raise(L, msg);
        }
    } else {
        if (lua_type(L, 1) != LUA_TSTRING)
            return raise(L, "ERR first argument to redis.register_function must be a string");
        if (!lua_isfunction(L, 2))
            return raise(L, "ERR second argument to redis.register_function must be a function");
        name = lua_tostring(L, 1);
        name_len = lua_objlen(L, 1);
    }
    size_t nlen = name_len;
    if (!valid_name(name, nlen)) { /* Redis 7.0 words it so for function names too */
        clear_named(L);
        return raise(L, "ERR Library names can only contain letters, numbers, or underscores(_) "
                        "and must be at least one character long");
    }
    for (int i = 0; i < loading->nfns; i++)
        if (!strcasecmp(loading->fns[i]->name, name)) {
            clear_named(L);
            return raise(L, "ERR Function already exists in the library");
        }
    fn_t *f = xcalloc(1, sizeof(*f));
    f->name = xstrdup(name);
    f->lname = xstrdup(name);
    for (char *p = f->lname; *p; p++) *p = (char)tolower((unsigned char)*p);
    f->node.hash = dict_hash(f->lname, nlen);
    f->desc = desc ? xstrdup(desc) : NULL;
    f->flags = flags;
    f->lib = loading;
    f->ref = luaL_ref(L, LUA_REGISTRYINDEX); /* the callback on top */
    clear_named(L);
    if (loading->nfns == loading->capfns) {
        loading->capfns = loading->capfns ? loading->capfns * 2 : 4;
        loading->fns = xrealloc(loading->fns, sizeof(fn_t *) * (size_t)loading->capfns);
    }
    loading->fns[loading->nfns++] = f;
    return 0;
}

/* ---- loading a library ---- */

static void load_hook(lua_State *L, lua_Debug *ar)
{
    if ((time_us() - load_start_us) / 1000 <= LOAD_TIMEOUT_MS) return;
    lua_sethook(L, load_hook, LUA_MASKLINE, 0);
    raise(L, "ERR FUNCTION LOAD timeout");
}

/* Runs code's library body: the new library (not linked), or NULL with err. */
static lib_t *create(const char *code, size_t len, char *err, size_t errlen)
{
    char *engine, *name;
    if (metadata(code, len, &engine, &name, err, errlen) < 0) return NULL;
    lib_t *l = NULL;
    if (!valid_name(name, strlen(name))) {
        snprintf(err, errlen,
                 "Library names can only contain letters, numbers, or "
                 "underscores(_) and must be at least one character long");
        goto done;
    }
    if (strcasecmp(engine, "lua")) {
        snprintf(err, errlen, "Engine '%s' not found", engine);
        goto done;
    }
    l = xcalloc(1, sizeof(*l));
    l->name = name;
    name = NULL;
    l->code = xmemdup(code, len);
    l->code_len = len;
    const char *body = memchr(code, '\n', len);
    if (engine_load(fn_L, body, len - (size_t)(body - code), "@user_function") < 0) {
        snprintf(err, errlen, "Error compiling function: %s", lua_tostring(fn_L, -1));
        lua_pop(fn_L, 1);
        goto fail;
    }
    engine_load_api(fn_L, 1);
    loading = l;
    load_start_us = time_us();
    lua_sethook(fn_L, load_hook, LUA_MASKCOUNT, 100000);
    int rc = lua_pcall(fn_L, 0, 0, 0);
    lua_sethook(fn_L, NULL, 0, 0);
    loading = NULL;
    engine_load_api(fn_L, 0);
    if (rc) {
        const char *msg = NULL;
        if (lua_istable(fn_L, -1)) {
            lua_pushliteral(fn_L, "err");
            lua_rawget(fn_L, -2);
        } else {
            lua_pushvalue(fn_L, -1);
        }
        msg = lua_tostring(fn_L, -1);
        int raw = !lua_istable(fn_L, -2) && msg && strncmp(msg, "ERR ", 4);
        snprintf(err, errlen, "Error registering functions: %s%s", raw ? "ERR " : "",
                 msg ? msg : "?");
        lua_pop(fn_L, 2);
        goto fail;
    }
    if (l->nfns == 0) {
        snprintf(err, errlen, "No functions registered");
        goto fail;
    }
    goto done;
fail:
    lib_free(l, 1);
    l = NULL;
done:
    xfree(engine);
    xfree(name);
    return l;
}

/* 1 if a function of l is already a function of another library (err says which). */
static int collides(const lib_t *l, char *err, size_t errlen)
{
    for (int i = 0; i < l->nfns; i++) {
        fn_t *other = fn_find(l->fns[i]->name, strlen(l->fns[i]->name));
        if (other && other->lib != l) {
            snprintf(err, errlen, "Function %s already exists", l->fns[i]->name);
            return 1;
        }
    }
    return 0;
}

/* FUNCTION LOAD's work: the library's name (owned by the library), or NULL with err. */
static const char *load(const char *code, size_t len, int replace, char *err, size_t errlen)
{
    lib_t *l = create(code, len, err, errlen);
    if (!l) return NULL;
    lib_t *old = lib_find(l->name, strlen(l->name));
    if (old && !replace) {
        snprintf(err, errlen, "Library '%s' already exists", l->name);
        lib_free(l, 1);
        return NULL;
    }
    if (old) lib_unlink(old);
    if (collides(l, err, errlen)) {
        if (old) lib_link(old);
        lib_free(l, 1);
        return NULL;
    }
    lib_link(l);
    if (old) lib_free(old, 1);
    return l->name;
}

static void flush_all(void)
{
    while (libs) {
        lib_t *l = libs;
        lib_unlink(l);
        lib_free(l, 0);
    }
    engine_state_free(fn_L);
    fn_L = engine_state_new(l_register_function);
}

/* ---- commands ---- */

/* Redis's addReplySubcommandSyntaxError for FUNCTION's subcommands */
static void subcommand_syntax_error(client_t *c)
{
    reply_errorf(c,
                 "ERR unknown subcommand or wrong number of arguments for '%.128s'. Try "
                 "FUNCTION HELP.",
                 c->cmd ? c->cmd->name : "?");
}

static void function_load_cmd(client_t *c)
{
    int replace = 0, at = 2;
    if (c->argc >= 4) {
        if (!arg_is(&c->argv[2], "replace")) {
            reply_errorf(c, "ERR Unknown option given: %.*s", (int)c->argv[2].len, c->argv[2].ptr);
            return;
        }
        replace = 1;
        at = 3;
    }
    if (c->argc > at + 1) {
        reply_error(c, "ERR Unknown option given");
        return;
    }
    char err[1024];
    const char *name = load(c->argv[at].ptr, c->argv[at].len, replace, err, sizeof(err));
    if (!name) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    srv.dirty++; /* logged to the append-only file as it was given */
    reply_bulk_cstr(c, name);
}

static void function_delete_cmd(client_t *c)
{
    lib_t *l = lib_find(c->argv[2].ptr, c->argv[2].len);
    if (!l) {
        reply_error(c, "ERR Library not found");
        return;
    }
    lib_unlink(l);
    lib_free(l, 1);
    srv.dirty++;
    reply_ok(c);
}

static void function_flush_cmd(client_t *c)
{
    if (c->argc > 3) {
        subcommand_syntax_error(c);
        return;
    }
    if (c->argc == 3 && !arg_is(&c->argv[2], "sync") && !arg_is(&c->argv[2], "async")) {
        reply_error(c, "ERR FUNCTION FLUSH only supports SYNC|ASYNC option");
        return;
    }
    flush_all();
    srv.dirty++;
    reply_ok(c);
}

static void reply_flag(void *ud, const char *name)
{
    reply_simple(ud, name);
}

static void reply_fn(client_t *c, const fn_t *f)
{
    reply_map(c, 3);
    reply_bulk_cstr(c, "name");
    reply_bulk_cstr(c, f->name);
    reply_bulk_cstr(c, "description");
    reply_bulk_cstr(c, f->desc);
    reply_bulk_cstr(c, "flags");
    int n = 0;
    for (uint32_t b = f->flags; b; b &= b - 1) n++;
    reply_set(c, n);
    engine_flag_names(f->flags, reply_flag, c);
}

static void function_list_cmd(client_t *c)
{
    int with_code = 0;
    const resp_arg_t *pat = NULL;
    for (int i = 2; i < c->argc; i++) {
        if (!with_code && arg_is(&c->argv[i], "withcode")) {
            with_code = 1;
        } else if (!pat && arg_is(&c->argv[i], "libraryname")) {
            if (i >= c->argc - 1) {
                reply_error(c, "ERR library name argument was not given");
                return;
            }
            pat = &c->argv[++i];
        } else {
            reply_errorf(c, "ERR Unknown argument %.*s", (int)c->argv[i].len, c->argv[i].ptr);
            return;
        }
    }
    size_t handle = reply_defer(c);
    long long n = 0;
    for (lib_t *l = libs; l; l = l->next) {
        if (pat && !strglob_match(pat->ptr, pat->len, l->name, strlen(l->name), 1)) continue;
        n++;
        reply_map(c, with_code ? 4 : 3);
        reply_bulk_cstr(c, "library_name");
        reply_bulk_cstr(c, l->name);
        reply_bulk_cstr(c, "engine");
        reply_bulk_cstr(c, "LUA");
        reply_bulk_cstr(c, "functions");
        reply_array(c, l->nfns);
        for (int i = 0; i < l->nfns; i++) reply_fn(c, l->fns[i]);
        if (with_code) {
            reply_bulk_cstr(c, "library_code");
            reply_bulk(c, l->code, l->code_len);
        }
    }
    reply_defer_finish(c, handle, '*', n);
}

/* FUNCTION DUMP's payload (ours, not Redis's RDB encoding):
 *
 *   offset  size  field
 *   0       4     magic "CTEF"
 *   4       1     version, 1
 *   5       4     library count n, big endian
 *   9       ...   n times: 4-byte big-endian length, then that many bytes of library code
 *   end-8   8     FNV-1a 64 of every byte before it, big endian
 *
 * FUNCTION RESTORE loads each library's code as FUNCTION LOAD would. */
#define DUMP_MAGIC "CTEF"
#define DUMP_VERSION 1

static uint64_t fnv1a(const char *p, size_t len)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static void put_u32(buf_t *b, uint32_t v)
{
    for (int i = 3; i >= 0; i--) buf_push(b, (char)(v >> (8 * i)));
}

static uint64_t get_be(const char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | (unsigned char)p[i];
    return v;
}

static void function_dump_cmd(client_t *c)
{
    buf_t b;
    buf_init(&b);
    buf_append(&b, DUMP_MAGIC, 4);
    buf_push(&b, DUMP_VERSION);
    uint32_t n = 0;
    for (lib_t *l = libs; l; l = l->next) n++;
    put_u32(&b, n);
    for (lib_t *l = libs; l; l = l->next) {
        put_u32(&b, (uint32_t)l->code_len);
        buf_append(&b, l->code, l->code_len);
    }
    uint64_t h = fnv1a(b.data, b.len);
    for (int i = 7; i >= 0; i--) buf_push(&b, (char)(h >> (8 * i)));
    reply_bulk(c, b.data, b.len);
    buf_deinit(&b);
}

/* The libraries of a payload, loaded but not linked (a list through next); NULL with err
 * (also for a payload with none). */
static int parse_payload(const char *p, size_t len, lib_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (len < 17 || memcmp(p, DUMP_MAGIC, 4) || p[4] != DUMP_VERSION ||
        get_be(p + len - 8, 8) != fnv1a(p, len - 8)) {
        snprintf(err, errlen, "DUMP payload version or checksum are wrong");
        return -1;
    }
    uint64_t n = get_be(p + 5, 4);
    size_t at = 9, end = len - 8;
    for (uint64_t i = 0; i < n; i++) {
        if (end - at < 4 || get_be(p + at, 4) > end - at - 4) {
            snprintf(err, errlen, "DUMP payload version or checksum are wrong");
            goto fail;
        }
        size_t cl = (size_t)get_be(p + at, 4);
        lib_t *l = create(p + at + 4, cl, err, errlen);
        if (!l) goto fail;
        l->next = *out;
        *out = l;
        at += 4 + cl;
        for (lib_t *o = l->next; o; o = o->next)
            if (!strcmp(o->name, l->name)) {
                snprintf(err, errlen, "Library %s already exists", l->name);
                goto fail;
            }
    }
    return 0;
fail:
    while (*out) {
        lib_t *l = *out;
        *out = l->next;
        lib_free(l, 1);
    }
    return -1;
}

/* Links the restored libraries by policy (0 append, 1 replace): 0, or -1 with err and
 * nothing changed. */
static int join(lib_t *fresh, int replace, char *err, size_t errlen)
{
    for (lib_t *l = fresh; l; l = l->next) {
        lib_t *old = lib_find(l->name, strlen(l->name));
        if (old && !replace) {
            snprintf(err, errlen, "Library %s already exists", l->name);
            return -1;
        }
        for (int i = 0; i < l->nfns; i++) {
            fn_t *other = fn_find(l->fns[i]->name, strlen(l->fns[i]->name));
            if (other && (!replace || strcmp(other->lib->name, l->name))) {
                snprintf(err, errlen, "Function %s already exists", l->fns[i]->name);
                return -1;
            }
        }
    }
    while (fresh) {
        lib_t *l = fresh;
        fresh = l->next;
        lib_t *old = lib_find(l->name, strlen(l->name));
        if (old) {
            lib_unlink(old);
            lib_free(old, 1);
        }
        lib_link(l);
    }
    return 0;
}

static void function_restore_cmd(client_t *c)
{
    if (c->argc > 4) {
        subcommand_syntax_error(c);
        return;
    }
    int policy = 0; /* append */
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "append"))
            policy = 0;
        else if (arg_is(&c->argv[3], "replace"))
            policy = 1;
        else if (arg_is(&c->argv[3], "flush"))
            policy = 2;
        else {
            reply_error(c, "ERR Wrong restore policy given, value should be either FLUSH, "
                           "APPEND or REPLACE.");
            return;
        }
    }
    char err[1024];
    lib_t *fresh;
    if (parse_payload(c->argv[2].ptr, c->argv[2].len, &fresh, err, sizeof(err)) < 0) {
        reply_errorf(c, "ERR %s", err);
        return;
    }
    if (policy == 2) {
        /* the payload's functions were compiled into this state: keep it, drop the rest */
        while (libs) {
            lib_t *l = libs;
            lib_unlink(l);
            lib_free(l, 1);
        }
    }
    if (join(fresh, policy == 1, err, sizeof(err)) < 0) {
        while (fresh) {
            lib_t *l = fresh;
            fresh = l->next;
            lib_free(l, 1);
        }
        reply_errorf(c, "ERR %s", err);
        return;
    }
    srv.dirty++;
    reply_ok(c);
}

static void function_kill_cmd(client_t *c)
{
    engine_kill(c, 0);
}

static void function_stats_cmd(client_t *c)
{
    if (engine_running_eval()) { /* as Redis: FUNCTION STATS is for functions */
        reply_error(c, "BUSY Redis is busy running a script. You can only call SCRIPT KILL or "
                       "SHUTDOWN NOSAVE.");
        return;
    }
    long long nlibs = 0;
    for (lib_t *l = libs; l; l = l->next) nlibs++;
    reply_map(c, 2);
    reply_bulk_cstr(c, "running_script");
    engine_reply_running(c);
    reply_bulk_cstr(c, "engines");
    reply_map(c, 1);
    reply_bulk_cstr(c, "LUA");
    reply_map(c, 2);
    reply_bulk_cstr(c, "libraries_count");
    reply_int(c, nlibs);
    reply_bulk_cstr(c, "functions_count");
    reply_int(c, (long long)dict_size(&functions));
}

static void function_help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "LOAD [REPLACE] <FUNCTION CODE>",
        "    Create a new library with the given library name and code.",
        "DELETE <LIBRARY NAME>",
        "    Delete the given library.",
        "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
        "    Return general information on all the libraries:",
        "    * Library name",
        "    * The engine used to run the Library",
        "    * Library description",
        "    * Functions list",
        "    * Library code (if WITHCODE is given)",
        "    It also possible to get only function that matches a pattern using LIBRARYNAME",
        "    argument.",
        "STATS",
        "    Return information about the current function running:",
        "    * Function name",
        "    * Command used to run the function",
        "    * Duration in MS that the function is running",
        "    If no function is running, return nil",
        "    In addition, returns a list of available engines.",
        "KILL",
        "    Kill the current running function.",
        "FLUSH [ASYNC|SYNC]",
        "    Delete all the libraries.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the libraries.",
        "    * SYNC: Synchronously flush the libraries.",
        "DUMP",
        "    Return a serialized payload representing the current libraries, can be restored "
        "using FUNCTION RESTORE command",
        "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
        "    Restore the libraries represented by the given payload, it is possible to give a "
        "restore policy to",
        "    control how to handle existing libraries (default APPEND):",
        "    * FLUSH: delete all existing libraries.",
        "    * APPEND: appends the restored libraries to the existing libraries. On collision, "
        "abort.",
        "    * REPLACE: appends the restored libraries to the existing libraries, On collision, "
        "replace the old",
        "      libraries with the new libraries (notice that even on this option there is a "
        "chance of failure",
        "      in case of functions name collision with another library).",
        "HELP",
        "    Prints this help.",
    };
    reply_array(c, (long long)(sizeof(lines) / sizeof(lines[0])));
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) reply_simple(c, lines[i]);
}

/* ---- FCALL ---- */

static void fcall_generic(client_t *c, int ro)
{
    introspect_feed_monitors(c); /* before the script's own commands, as Redis 7.0 */
    fn_t *f = fn_find(c->argv[1].ptr, c->argv[1].len);
    if (!f) {
        reply_error(c, "ERR Function not found");
        return;
    }
    long long numkeys;
    if (!str_to_ll(c->argv[2].ptr, c->argv[2].len, &numkeys)) {
        reply_error(c, "ERR Bad number of keys provided");
        return;
    }
    if (numkeys > c->argc - 3) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        reply_error(c, "ERR Number of keys can't be negative");
        return;
    }
    lua_rawgeti(fn_L, LUA_REGISTRYINDEX, f->ref);
    for (int part = 0; part < 2; part++) {
        int from = part ? 3 + (int)numkeys : 3, n = part ? c->argc - from : (int)numkeys;
        lua_createtable(fn_L, n, 0);
        for (int i = 0; i < n; i++) {
            lua_pushlstring(fn_L, c->argv[from + i].ptr, c->argv[from + i].len);
            lua_rawseti(fn_L, -2, i + 1);
        }
    }
    engine_call_t call = {c, f->name, f->flags, ro, 0, 2};
    engine_run(fn_L, &call);
}

static void fcall_cmd(client_t *c)
{
    fcall_generic(c, 0);
}

static void fcall_ro_cmd(client_t *c)
{
    fcall_generic(c, 1);
}

/* FCALL's and FCALL_RO's call flags: the function's, the static ones for an unknown one */
static uint32_t fcall_getflags(const client_t *c, uint32_t flags)
{
    const fn_t *f = fn_find(c->argv[1].ptr, c->argv[1].len);
    return f ? engine_cmd_flags(flags, f->flags) : flags;
}

static int fcall_getkeys(int argc, const resp_arg_t *argv, int *pos, int max)
{
    long long n;
    if (argc < 3 || !str_to_ll(argv[2].ptr, argv[2].len, &n)) return 0;
    int k = 0;
    for (long long i = 0; i < n && 3 + i < argc && k < max; i++) pos[k++] = (int)(3 + i);
    return k;
}

/* ---- the room's part ---- */

int function__init(void)
{
    dict_init(&functions, &fn_dict_type);
    fn_L = engine_state_new(l_register_function);
    return 0;
}

void function__deinit(void)
{
    while (libs) {
        lib_t *l = libs;
        lib_unlink(l);
        lib_free(l, 0);
    }
    dict_clear(&functions, NULL);
    engine_state_free(fn_L);
    fn_L = NULL;
}

void function__info(buf_t *b)
{
    size_t vm = fn_L ? (size_t)lua_gc(fn_L, LUA_GCCOUNT, 0) * 1024 +
                           (size_t)lua_gc(fn_L, LUA_GCCOUNTB, 0)
                     : 0,
           code = 0;
    long long nlibs = 0;
    for (lib_t *l = libs; l; l = l->next) {
        nlibs++;
        code += l->code_len;
    }
    buf_printf(b,
               "number_of_functions:%llu\r\nnumber_of_libraries:%lld\r\n"
               "used_memory_vm_functions:%zu\r\nused_memory_functions:%zu\r\n",
               (unsigned long long)dict_size(&functions), nlibs, vm, code);
}

void script_rewrite(buf_t *out)
{
    for (lib_t *l = libs; l; l = l->next) {
        buf_printf(out, "*4\r\n$8\r\nFUNCTION\r\n$4\r\nLOAD\r\n$7\r\nREPLACE\r\n$%zu\r\n",
                   l->code_len);
        buf_append(out, l->code, l->code_len);
        buf_append(out, "\r\n", 2);
    }
}

static command_t function_subcommands[] = {
    CMD_ROW("load", function_load_cmd, -3, CMD_WRITE | CMD_DENYOOM | CMD_NOSCRIPT, 0, 0, 0,
            "scripting", "7.0.0", "Creates a library.",
            "O(1) (considering compilation time is redundant)"),
    CMD_ROW("delete", function_delete_cmd, 3, CMD_WRITE | CMD_NOSCRIPT, 0, 0, 0, "scripting",
            "7.0.0", "Deletes a library and its functions.", "O(1)"),
    CMD_ROW("flush", function_flush_cmd, -2, CMD_WRITE | CMD_NOSCRIPT, 0, 0, 0, "scripting",
            "7.0.0", "Deletes all libraries and functions.",
            "O(N) where N is the number of functions deleted"),
    CMD_ROW("list", function_list_cmd, -2, CMD_NOSCRIPT, 0, 0, 0, "scripting", "7.0.0",
            "Returns information about all libraries.", "O(N) where N is the number of functions"),
    CMD_ROW("dump", function_dump_cmd, 2, CMD_NOSCRIPT, 0, 0, 0, "scripting", "7.0.0",
            "Dumps all libraries into a serialized binary payload.",
            "O(N) where N is the number of functions"),
    CMD_ROW("restore", function_restore_cmd, -3, CMD_WRITE | CMD_DENYOOM | CMD_NOSCRIPT, 0, 0, 0,
            "scripting", "7.0.0", "Restores all libraries from a payload.",
            "O(N) where N is the number of functions on the payload"),
    CMD_ROW("stats", function_stats_cmd, 2, CMD_NOSCRIPT | CMD_ALLOW_BUSY, 0, 0, 0, "scripting",
            "7.0.0", "Returns information about a function during execution.", "O(1)"),
    CMD_ROW("kill", function_kill_cmd, 2, CMD_NOSCRIPT | CMD_ALLOW_BUSY, 0, 0, 0, "scripting",
            "7.0.0", "Terminates a function during execution.", "O(1)"),
    CMD_ROW("help", function_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "scripting", "7.0.0",
            "Returns helpful text about the different subcommands.", "O(1)"),
    {NULL},
};

static const cmd_key_spec_t keynum_at_2[] = {CMD_KEYNUM_SPEC(2), {0}};

command_t function__cmds_function[] = {
    CMD_ROW("function", script__container_cmd, -2, 0, 0, 0, 0, "scripting", "7.0.0",
            "A container for function commands.", "Depends on subcommand.",
            .subcommands = function_subcommands),
    CMD_ROW("fcall", fcall_cmd, -3,
            CMD_NOSCRIPT | CMD_SKIP_MONITOR | CMD_MAY_REPLICATE | CMD_STALE | CMD_MOVABLE_KEYS |
                CMD_NO_MANDATORY_KEYS,
            0, 0, 0, "scripting", "7.0.0", "Invokes a function.",
            "Depends on the function that is executed.", .getkeys = fcall_getkeys,
            .getflags = fcall_getflags, .key_flags = "RW access update", .key_specs = keynum_at_2),
    CMD_ROW("fcall_ro", fcall_ro_cmd, -3,
            CMD_NOSCRIPT | CMD_SKIP_MONITOR | CMD_STALE | CMD_READONLY | CMD_MOVABLE_KEYS |
                CMD_NO_MANDATORY_KEYS,
            0, 0, 0, "scripting", "7.0.0", "Invokes a read-only function.",
            "Depends on the function that is executed.", .getkeys = fcall_getkeys,
            .getflags = fcall_getflags, .key_flags = "RO access", .key_specs = keynum_at_2),
    {NULL},
};
