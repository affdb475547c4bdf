/* eval.c - EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (see script.h).
 *
 * The script cache maps the SHA-1 of a script's body (40 lower-case hex digits) to its
 * shebang flags; the compiled function lives in the Lua registry under "f_<sha>", as in
 * Redis. SCRIPT FLUSH drops both by replacing the Lua state. A script without a "#!lua"
 * shebang runs in Redis's compatibility mode (no flags: its writes are checked command by
 * command). Loop thread. */
#include "server/script/script.h"

#include "common/alloc.h"
#include "common/dict.h"
#include "common/sha1.h"
#include "server/introspect.h"
#include "server/reply.h"
#include "server/script/engine.h"

#include <ctype.h>
#include <lauxlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cached {
    dict_node_t node;
    char sha[41];
    uint32_t flags;
    size_t body_len;
} cached_t;

static const void *cached_key(const dict_node_t *n, size_t *len)
{
    *len = 40;
    return ((const cached_t *)n)->sha;
}

static void cached_free(dict_node_t *n, void *ud)
{
    xfree(n);
}

static const dict_type_t cache_type = {cached_key, cached_free};
static dict_t cache;
static lua_State *eval_L;
static size_t cache_bytes; /* script bodies kept (as used_memory_scripts_eval counts) */
static long gc_count;

static cached_t *cache_find(const char *sha)
{
    return (cached_t *)dict_find(&cache, sha, 40, dict_hash(sha, 40));
}

/* The cached script a client named by its SHA-1 (any case), or NULL. */
static cached_t *cache_find_arg(const resp_arg_t *a)
{
    char sha[41];
    if (a->len != 40) return NULL;
    for (int i = 0; i < 40; i++) sha[i] = (char)tolower((unsigned char)a->ptr[i]);
    sha[40] = '\0';
    return cache_find(sha);
}

/* ---- shebang ---- */

typedef struct shebang_ctx {
    uint32_t flags;
    char *err;
    size_t errlen;
} shebang_ctx_t;

static int shebang_word(void *ud, int i, const char *w, size_t wl)
{
    shebang_ctx_t *x = ud;
    if (i == 0) {
        if (wl == 5 && !memcmp(w, "#!lua", 5)) return 0;
        snprintf(x->err, x->errlen, "Unexpected engine in script shebang: %.*s", (int)wl, w);
        return 1;
    }
    if (wl < 6 || memcmp(w, "flags=", 6)) {
        snprintf(x->err, x->errlen, "Unknown lua shebang option: %.*s", (int)wl, w);
        return 1;
    }
    /* as Redis's split on ',': "flags=" is no flag, but every item of a list must be one
     * ("flags=no-writes," names the empty flag) */
    for (const char *f = w + 6, *end = w + wl; wl > 6 && f <= end;) {
        const char *comma = memchr(f, ',', (size_t)(end - f));
        const char *fe = comma ? comma : end;
        uint32_t bit = engine_flag_by_name(f, (size_t)(fe - f));
        if (!bit) {
            snprintf(x->err, x->errlen, "Unexpected flag in script shebang: %.*s", (int)(fe - f),
                     f);
            return 1;
        }
        x->flags |= bit;
        f = fe + 1;
    }
    return 0;
}

/* Parses the "#!lua [flags=a,b]" line of body (if any): 0 with *flags and the line's length
 * in *skip (0 without one), or -1 with the error in err. */
static int shebang(const char *body, size_t len, uint32_t *flags, size_t *skip, char *err,
                   size_t errlen)
{
    shebang_ctx_t x = {0, err, errlen};
    *flags = SCRIPT_F_EVAL_COMPAT;
    *skip = 0;
    switch (engine_shebang(body, len, shebang_word, &x, skip)) {
    case ENGINE_SHEBANG_NONE:
        return 0;
    case ENGINE_SHEBANG_OK:
        *flags = x.flags;
        return 0;
    case ENGINE_SHEBANG_NO_LF:
        snprintf(err, errlen, "Invalid script shebang");
        return -1;
    case ENGINE_SHEBANG_BAD:
        snprintf(err, errlen, "Invalid engine in script shebang");
        return -1;
    default: /* shebang_word said why */
        return -1;
    }
}

/* Compiles body and caches it under sha: the entry, or NULL after an error reply. */
static cached_t *create(client_t *c, const char *body, size_t len, const char *sha)
{
    uint32_t flags;
    size_t skip;
    char err[256];
    if (shebang(body, len, &flags, &skip, err, sizeof(err)) < 0) {
        reply_errorf(c, "ERR %s", err);
        return NULL;
    }
    /* the shebang line is skipped but its line feed kept: line numbers stay the user's */
    if (engine_load(eval_L, body + skip, len - skip, "@user_script") < 0) {
        const char *msg = lua_tostring(eval_L, -1);
        reply_errorf(c, "ERR Error compiling script (new function): %s", msg ? msg : "?");
        lua_pop(eval_L, 1);
        return NULL;
    }
    char name[43] = "f_";
    memcpy(name + 2, sha, 41);
    lua_setfield(eval_L, LUA_REGISTRYINDEX, name);
    cached_t *e = xcalloc(1, sizeof(*e));
    memcpy(e->sha, sha, 41);
    e->flags = flags;
    e->body_len = len;
    e->node.hash = dict_hash(sha, 40);
    dict_insert(&cache, &e->node);
    cache_bytes += len + 40;
    return e;
}

/* The cached script of body, compiled now if it is new; NULL after an error reply. */
static cached_t *get_or_create(client_t *c, const resp_arg_t *body)
{
    char sha[41];
    sha1_hex(body->ptr, body->len, sha);
    cached_t *e = cache_find(sha);
    return e ? e : create(c, body->ptr, body->len, sha);
}

/* KEYS or ARGV from argv[0..n). */
static void set_array(const char *name, int n, const resp_arg_t *argv)
{
    lua_createtable(eval_L, n, 0);
    for (int i = 0; i < n; i++) {
        lua_pushlstring(eval_L, argv[i].ptr, argv[i].len);
        lua_rawseti(eval_L, -2, i + 1);
    }
    engine_set_global(eval_L, name);
}

static void eval_generic(client_t *c, int by_sha, int ro)
{
    introspect_feed_monitors(c); /* before the script's own commands, as Redis 7.0 */
    if (by_sha && c->argv[1].len != 40) {
        reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
        return;
    }
    long long numkeys;
    if (arg_ll_or_reply(c, &c->argv[2], &numkeys, NULL) < 0) return;
    if (numkeys > c->argc - 3) {
        reply_error(c, "ERR Number of keys can't be greater than number of args");
        return;
    }
    if (numkeys < 0) {
        reply_error(c, "ERR Number of keys can't be negative");
        return;
    }
    cached_t *e;
    if (by_sha) {
        e = cache_find_arg(&c->argv[1]);
        if (!e) {
            reply_error(c, "NOSCRIPT No matching script. Please use EVAL.");
            return;
        }
    } else if (!(e = get_or_create(c, &c->argv[1]))) {
        return;
    }
    char name[43] = "f_";
    memcpy(name + 2, e->sha, 41);
    lua_getfield(eval_L, LUA_REGISTRYINDEX, name);
    set_array("KEYS", (int)numkeys, c->argv + 3);
    set_array("ARGV", c->argc - 3 - (int)numkeys, c->argv + 3 + numkeys);
    engine_call_t call = {c, e->sha, e->flags, ro, 1, 0};
    engine_run(eval_L, &call);
    if (++gc_count == 50) { /* a collection step now and then, as Redis: not per script */
        lua_gc(eval_L, LUA_GCSTEP, 50);
        gc_count = 0;
    }
}

static void eval_cmd(client_t *c)
{
    eval_generic(c, 0, 0);
}

static void evalsha_cmd(client_t *c)
{
    eval_generic(c, 1, 0);
}

static void eval_ro_cmd(client_t *c)
{
    eval_generic(c, 0, 1);
}

static void evalsha_ro_cmd(client_t *c)
{
    eval_generic(c, 1, 1);
}

/* EVAL's and EVAL_RO's call flags: the script's, from the cache or else its shebang (Redis
 * parses it too, without compiling) */
static uint32_t eval_getflags(const client_t *c, uint32_t flags)
{
    char sha[41], err[256];
    uint32_t script_flags;
    size_t skip;
    sha1_hex(c->argv[1].ptr, c->argv[1].len, sha);
    const cached_t *e = cache_find(sha);
    if (e)
        script_flags = e->flags;
    else if (shebang(c->argv[1].ptr, c->argv[1].len, &script_flags, &skip, err, sizeof(err)) < 0)
        return flags; /* the run answers the error */
    return engine_cmd_flags(flags, script_flags);
}

/* EVALSHA's and EVALSHA_RO's: the cached script's, the static ones for an unknown one */
static uint32_t evalsha_getflags(const client_t *c, uint32_t flags)
{
    const cached_t *e = cache_find_arg(&c->argv[1]);
    return e ? engine_cmd_flags(flags, e->flags) : flags;
}

/* EVAL's keys: argv[3 .. 3+numkeys) */
static int eval_getkeys(int argc, const resp_arg_t *argv, int *pos, int max)
{
    if (argc < 3) return 0;
    char tmp[24];
    size_t len = argv[2].len < sizeof(tmp) - 1 ? argv[2].len : sizeof(tmp) - 1;
    memcpy(tmp, argv[2].ptr, len);
    tmp[len] = '\0';
    long long n = strtoll(tmp, NULL, 10);
    int k = 0;
    for (long long i = 0; i < n && 3 + i < argc && k < max; i++) pos[k++] = (int)(3 + i);
    return k;
}

/* ---- SCRIPT ---- */

static void script_load_cmd(client_t *c)
{
    cached_t *e = get_or_create(c, &c->argv[2]);
    if (e) reply_bulk(c, e->sha, 40);
}

static void script_exists_cmd(client_t *c)
{
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) reply_int(c, cache_find_arg(&c->argv[j]) != NULL);
}

static void reset(void)
{
    dict_clear(&cache, NULL);
    cache_bytes = 0;
    engine_state_free(eval_L);
    eval_L = engine_state_new(NULL);
}

static void script_flush_cmd(client_t *c)
{
    if (c->argc > 3 ||
        (c->argc == 3 && !arg_is(&c->argv[2], "sync") && !arg_is(&c->argv[2], "async"))) {
        reply_error(c, "ERR SCRIPT FLUSH only support SYNC|ASYNC option");
        return;
    }
    reset(); /* ASYNC as SYNC: the Lua state is freed at once */
    reply_ok(c);
}

static void script_kill_cmd(client_t *c)
{
    engine_kill(c, 1);
}

static void script_help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DEBUG (YES|SYNC|NO)",
        "    Set the debug mode for subsequent scripts executed.",
        "EXISTS <sha1> [<sha1> ...]",
        "    Return information about the existence of the scripts in the script cache.",
        "FLUSH [ASYNC|SYNC]",
        "    Flush the Lua scripts cache. Very dangerous on replicas.",
        "    When called without the optional mode argument, the behavior is determined by the",
        "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
        "    * ASYNC: Asynchronously flush the scripts cache.",
        "    * SYNC: Synchronously flush the scripts cache.",
        "KILL",
        "    Kill the currently executing Lua script.",
        "LOAD <script>",
        "    Load a script into the scripts cache without executing it.",
        "HELP",
        "    Prints this help.",
    };
    reply_array(c, (long long)(sizeof(lines) / sizeof(lines[0])));
    for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) reply_simple(c, lines[i]);
}

int eval__init(void)
{
    dict_init(&cache, &cache_type);
    eval_L = engine_state_new(NULL);
    return 0;
}

void eval__deinit(void)
{
    dict_clear(&cache, NULL);
    engine_state_free(eval_L);
    eval_L = NULL;
    cache_bytes = 0;
}

void eval__info(buf_t *b)
{
    size_t vm = eval_L ? (size_t)lua_gc(eval_L, LUA_GCCOUNT, 0) * 1024 +
                             (size_t)lua_gc(eval_L, LUA_GCCOUNTB, 0)
                       : 0;
    buf_printf(b,
               "used_memory_lua:%zu\r\nused_memory_vm_eval:%zu\r\nused_memory_scripts_eval:%zu\r\n"
               "number_of_cached_scripts:%llu\r\n",
               vm, vm, cache_bytes, (unsigned long long)dict_size(&cache));
}

#define SCRIPT_CPLX "Depends on the script that is executed."

static command_t script_subcommands[] = {
    CMD_ROW("load", script_load_cmd, 3, CMD_NOSCRIPT | CMD_STALE, 0, 0, 0, "scripting", "2.6.0",
            "Loads a server-side Lua script to the script cache.",
            "O(N) with N being the length in bytes of the script body."),
    CMD_ROW("exists", script_exists_cmd, -3, CMD_NOSCRIPT, 0, 0, 0, "scripting", "2.6.0",
            "Determines whether server-side Lua scripts exist in the script cache.",
            "O(N) with N being the number of scripts to check (so checking a single script is an "
            "O(1) operation)."),
    CMD_ROW("flush", script_flush_cmd, -2, CMD_NOSCRIPT, 0, 0, 0, "scripting", "2.6.0",
            "Removes all server-side Lua scripts from the script cache.",
            "O(N) with N being the number of scripts in cache"),
    CMD_ROW("kill", script_kill_cmd, 2, CMD_NOSCRIPT | CMD_ALLOW_BUSY, 0, 0, 0, "scripting",
            "2.6.0", "Terminates a server-side Lua script during execution.", "O(1)"),
    CMD_ROW("help", script_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "scripting", "5.0.0",
            "Returns helpful text about the different subcommands.", "O(1)"),
    {NULL},
};

static const cmd_key_spec_t keynum_at_2[] = {CMD_KEYNUM_SPEC(2), {0}};

command_t cmds_script[] = {
    CMD_ROW("eval", eval_cmd, -3,
            CMD_NOSCRIPT | CMD_SKIP_MONITOR | CMD_MAY_REPLICATE | CMD_STALE | CMD_MOVABLE_KEYS |
                CMD_NO_MANDATORY_KEYS,
            0, 0, 0, "scripting", "2.6.0", "Executes a server-side Lua script.", SCRIPT_CPLX,
            .getkeys = eval_getkeys, .getflags = eval_getflags,
            .key_flags = "RW access update", .key_specs = keynum_at_2),
    CMD_ROW("evalsha", evalsha_cmd, -3,
            CMD_NOSCRIPT | CMD_SKIP_MONITOR | CMD_MAY_REPLICATE | CMD_STALE | CMD_MOVABLE_KEYS |
                CMD_NO_MANDATORY_KEYS,
            0, 0, 0, "scripting", "2.6.0", "Executes a server-side Lua script by SHA1 digest.",
            SCRIPT_CPLX, .getkeys = eval_getkeys, .getflags = evalsha_getflags,
            .key_flags = "RW access update", .key_specs = keynum_at_2),
    CMD_ROW("eval_ro", eval_ro_cmd, -3,
            CMD_NOSCRIPT | CMD_SKIP_MONITOR | CMD_STALE | CMD_READONLY | CMD_MOVABLE_KEYS |
                CMD_NO_MANDATORY_KEYS,
            0, 0, 0, "scripting", "7.0.0", "Executes a read-only server-side Lua script.",
            SCRIPT_CPLX, .getkeys = eval_getkeys, .getflags = eval_getflags,
            .key_flags = "RO access", .key_specs = keynum_at_2),
    CMD_ROW("evalsha_ro", evalsha_ro_cmd, -3,
            CMD_NOSCRIPT | CMD_SKIP_MONITOR | CMD_STALE | CMD_READONLY | CMD_MOVABLE_KEYS |
                CMD_NO_MANDATORY_KEYS,
            0, 0, 0, "scripting", "7.0.0",
            "Executes a read-only server-side Lua script by SHA1 digest.", SCRIPT_CPLX,
            .getkeys = eval_getkeys, .getflags = evalsha_getflags,
            .key_flags = "RO access", .key_specs = keynum_at_2),
    CMD_ROW("script", script__container_cmd, -2, 0, 0, 0, 0, "scripting", "2.6.0",
            "A container for Lua scripts management commands.", "Depends on subcommand.",
            .subcommands = script_subcommands),
    {NULL},
};
