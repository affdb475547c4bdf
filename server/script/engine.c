/* engine.c - the Lua states, the redis table and the runs of scripts (see engine.h).
 *
 * Every command a script calls goes through call_command(): lookup, arity, the script
 * checks (noscript, the caller's ACL permissions, read-only scripts, out of memory), then
 * command_call() on the script client, which shares the caller's database and the script's
 * protocol. The client is flagged CLIENT_MULTI (as Redis flags its Lua client with
 * DENY_BLOCKING): blocking commands answer at once and tag commands run their storage plan
 * inline, failing with BUSY instead of waiting, exactly as inside EXEC. Its writes reach the
 * append-only file through command_call, wrapped in MULTI/EXEC from the first write on
 * (unless the caller is itself inside EXEC). A count hook (every 100000 Lua instructions)
 * enters busy mode past busy-reply-threshold: other clients are served by
 * engine_serve_while_busy and get -BUSY but for SCRIPT KILL, FUNCTION KILL/STATS and SHUTDOWN
 * NOSAVE. Loop thread. */
#include "server/script/engine.h"

#include "common/alloc.h"
#include "common/log.h"
#include "common/sha1.h"
#include "common/util.h"
#include "server/acl.h"
#include "server/cluster/cluster.h"
#include "server/command.h"
#include "server/evict.h"
#include "server/hooks.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/script/bridge.h"
#include "server/script/libs.h"
#include "server/script/sandbox.h"

#include <lauxlib.h>
#include <lua-bitop.h>
#include <lua-cjson.h>
#include <lualib.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOOK_INSTRUCTIONS 100000
#define COMPAT_REDIS_VERSION "7.0.15"
#define COMPAT_REDIS_VERSION_NUM 0x0007000f

#define BUSY_EVAL_MSG                                                                              \
    "BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE."
#define BUSY_FUNCTION_MSG                                                                          \
    "BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE."

/* ---- flags ---- */

static const struct {
    const char *name;
    uint32_t bit;
} flag_names[] = {
    {"no-writes", SCRIPT_F_NO_WRITES},
    {"allow-oom", SCRIPT_F_ALLOW_OOM},
    {"allow-stale", SCRIPT_F_ALLOW_STALE},
    {"no-cluster", SCRIPT_F_NO_CLUSTER},
    {"allow-cross-slot-keys", SCRIPT_F_ALLOW_CROSS_SLOT},
};

uint32_t engine_flag_by_name(const char *s, size_t len)
{
    for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
        if (strlen(flag_names[i].name) == len && !memcmp(flag_names[i].name, s, len))
            return flag_names[i].bit;
    return 0;
}

void engine_flag_names(uint32_t bits, void (*fn)(void *ud, const char *name), void *ud)
{
    for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
        if (bits & flag_names[i].bit) fn(ud, flag_names[i].name);
}

uint32_t engine_cmd_flags(uint32_t cmd_flags, uint32_t script_flags)
{
    if (script_flags & SCRIPT_F_EVAL_COMPAT) return cmd_flags;
    cmd_flags &= ~(uint32_t)(CMD_WRITE | CMD_DENYOOM | CMD_STALE | CMD_MAY_REPLICATE);
    if (!(script_flags & SCRIPT_F_NO_WRITES)) {
        cmd_flags |= CMD_WRITE;
        if (!(script_flags & SCRIPT_F_ALLOW_OOM)) cmd_flags |= CMD_DENYOOM;
    }
    if (script_flags & SCRIPT_F_ALLOW_STALE) cmd_flags |= CMD_STALE;
    return cmd_flags;
}

/* ---- shebang words ---- */

static int hexval(char ch)
{
    return isdigit((unsigned char)ch) ? ch - '0' : tolower((unsigned char)ch) - 'a' + 10;
}

/* Appends one word record (its length, then its bytes) to words. */
static void word_add(buf_t *words, const char *w, size_t len)
{
    buf_append(words, &len, sizeof(len));
    buf_append(words, w, len);
}

/* Splits p[0..len) into word records in words; 0, or -1 for unbalanced quotes. */
static int split_words(const char *p, size_t len, buf_t *words)
{
    const char *end = p + len;
    buf_t w;
    buf_init(&w);
    for (;;) {
        while (p < end && isspace((unsigned char)*p)) p++;
        if (p >= end) break;
        int inq = 0, insq = 0, done = 0;
        buf_clear(&w);
        while (!done) {
            if (inq) {
                if (p >= end) goto unbalanced;
                if (*p == '\\' && p + 3 < end && p[1] == 'x' && isxdigit((unsigned char)p[2]) &&
                    isxdigit((unsigned char)p[3])) {
                    buf_push(&w, (char)(hexval(p[2]) * 16 + hexval(p[3])));
                    p += 3;
                } else if (*p == '\\' && p + 1 < end) {
                    p++;
                    static const char from[] = "nrtba", to[] = "\n\r\t\b\a";
                    const char *f = memchr(from, *p, 5);
                    buf_push(&w, f ? to[f - from] : *p);
                } else if (*p == '"') {
                    if (p + 1 < end && !isspace((unsigned char)p[1])) goto unbalanced;
                    done = 1;
                } else {
                    buf_push(&w, *p);
                }
            } else if (insq) {
                if (p >= end) goto unbalanced;
                if (*p == '\\' && p + 1 < end && p[1] == '\'') {
                    p++;
                    buf_push(&w, '\'');
                } else if (*p == '\'') {
                    if (p + 1 < end && !isspace((unsigned char)p[1])) goto unbalanced;
                    done = 1;
                } else {
                    buf_push(&w, *p);
                }
            } else if (p >= end || isspace((unsigned char)*p)) {
                done = 1;
            } else if (*p == '"') {
                inq = 1;
            } else if (*p == '\'') {
                insq = 1;
            } else {
                buf_push(&w, *p);
            }
            if (p < end) p++;
        }
        word_add(words, w.data ? w.data : "", w.len);
    }
    buf_deinit(&w);
    return 0;
unbalanced:
    buf_deinit(&w);
    return -1;
}

int engine_shebang(const char *body, size_t len, engine_word_fn *fn, void *ud, size_t *line_len)
{
    if (len < 2 || memcmp(body, "#!", 2)) return ENGINE_SHEBANG_NONE;
    const char *nl = memchr(body, '\n', len);
    if (!nl) return ENGINE_SHEBANG_NO_LF;
    buf_t words;
    buf_init(&words);
    int rc = split_words(body, (size_t)(nl - body), &words) < 0 || !words.len ? ENGINE_SHEBANG_BAD
                                                                              : ENGINE_SHEBANG_OK;
    for (size_t off = 0, i = 0; rc == ENGINE_SHEBANG_OK && off < words.len; i++) {
        size_t wl;
        memcpy(&wl, words.data + off, sizeof(wl));
        if (fn(ud, (int)i, words.data + off + sizeof(wl), wl)) rc = ENGINE_SHEBANG_REFUSED;
        off += sizeof(wl) + wl;
    }
    buf_deinit(&words);
    *line_len = (size_t)(nl - body);
    return rc;
}

/* ---- the run in progress ---- */

enum repl_bits { REPL_AOF = 1, REPL_REPLICA = 2, REPL_ALL = 3 };

typedef struct run {
    const engine_call_t *call;
    client_t *caller;
    lua_State *L;
    long long start_us;
    int read_only; /* *_RO, or no-writes */
    int allow_oom;
    int oom;       /* maxmemory was reached when the script started */
    int wrote;     /* a write command ran: the script can no longer be killed */
    int exec_open; /* we opened MULTI in the append-only file */
    int timedout;  /* past busy-reply-threshold */
    int killed;    /* 1: SCRIPT KILL / FUNCTION KILL; 2: SHUTDOWN NOSAVE (writes not logged) */
    int repl;      /* redis.set_repl */
    int resp;      /* redis.setresp */
    int slot;      /* cluster mode: the slot of the keys its commands used, -1 before any */
} run_t;

static run_t *cur;
static client_t *script_client;

int engine_running(void)
{
    return cur != NULL;
}

int engine_running_eval(void)
{
    return cur && cur->call->is_eval;
}

/* ---- redis.call and redis.pcall ---- */

static int push_error_raise(lua_State *L, const char *msg)
{
    bridge_push_error(L, msg, strlen(msg));
    return lua_error(L);
}

/* The argv of a redis.call from the Lua arguments: strings as they are, numbers as "%.17g"
 * (Lua's own tostring loses precision) into nums, which this initializes (the caller frees it
 * after a success). argv is small (room for ARGV_SMALL) or allocated (*argvp then differs
 * from small; the caller frees it). Returns argc, or -1 with the error table pushed (nothing
 * to free then). */
#define ARGV_SMALL 16
static int lua_argv(lua_State *L, resp_arg_t *small, resp_arg_t **argvp, buf_t *nums)
{
    int argc = lua_gettop(L);
    buf_init(nums);
    if (argc == 0) {
        static const char msg[] = "Please specify at least one argument for this redis lib call";
        bridge_push_error(L, msg, sizeof(msg) - 1);
        return -1;
    }
    resp_arg_t *argv = argc <= ARGV_SMALL ? small : xmalloc(sizeof(resp_arg_t) * (size_t)argc);
    for (int j = 1; j <= argc; j++) {
        int t = lua_type(L, j);
        if (t == LUA_TNUMBER) {
            argv[j - 1].ptr = NULL; /* its offset in nums, set once nums stops moving */
            argv[j - 1].len = nums->len;
            buf_printf(nums, "%.17g", (double)lua_tonumber(L, j));
            buf_push(nums, '\0');
        } else if (t == LUA_TSTRING) {
            argv[j - 1].ptr = lua_tolstring(L, j, &argv[j - 1].len);
        } else {
            if (argv != small) xfree(argv);
            buf_deinit(nums);
            static const char msg[] = "Lua redis lib command arguments must be strings or integers";
            bridge_push_error(L, msg, sizeof(msg) - 1);
            return -1;
        }
    }
    for (int j = 0; j < argc; j++)
        if (!argv[j].ptr) {
            argv[j].ptr = nums->data + argv[j].len;
            argv[j].len = strlen(argv[j].ptr);
        }
    *argvp = argv;
    return argc;
}

/* The command for argv as Redis's lookupCommand finds it (a container's subcommand), or
 * NULL. */
static const command_t *lookup(int argc, const resp_arg_t *argv)
{
    const command_t *cmd = command_lookup(&argv[0]);
    if (cmd && cmd->subcommands && argc >= 2) cmd = command_lookup_sub(cmd, &argv[1]);
    return cmd;
}

static int arity_ok(const command_t *cmd, int argc)
{
    return cmd->arity > 0 ? argc == cmd->arity : argc >= -cmd->arity;
}

/* What Redis's scriptCall checks before it runs a command: NULL, or the error to refuse it
 * with (counted then by the caller of this function). */
static const char *call_refusal(run_t *r, const command_t *cmd, int argc, const resp_arg_t *argv)
{
    if (!cmd) return "Unknown Redis command called from script";
    if (!arity_ok(cmd, argc)) return "Wrong number of args calling Redis command from script";
    /* Redis 7.0 flags every blocking command noscript but XREAD and XREADGROUP (refused only
     * with BLOCK): the same rule without touching other groups' tables */
    if ((cmd->flags & CMD_NOSCRIPT) || ((cmd->flags & CMD_BLOCKING) && cmd->name[0] != 'x'))
        return "This Redis command is not allowed from script";
    /* the caller's user, as Redis's scriptVerifyACL: logged in ACL LOG with context lua */
    int pos, denied = acl_check_command(r->caller, cmd, argc, argv, &pos);
    if (denied != ACL_OK) {
        const char *obj = denied == ACL_DENIED_CMD ? cmd->fullname : argv[pos].ptr;
        size_t objlen = denied == ACL_DENIED_CMD ? strlen(obj) : argv[pos].len;
        acl_log_add(r->caller, denied, ACL_CTX_LUA, obj, objlen, NULL, 0);
        return acl_script_denial_message(denied);
    }
    if (r->read_only && (cmd->flags & (CMD_WRITE | CMD_MAY_REPLICATE)))
        return "-ERR Write commands are not allowed from read-only scripts.";
    if (cluster) {
        /* scripts without a shebang may use keys of several slots (all of this node) */
        int cross = (r->call->flags & (SCRIPT_F_EVAL_COMPAT | SCRIPT_F_ALLOW_CROSS_SLOT)) != 0;
        const char *e = cluster_script_refusal(r->caller, cmd, argc, argv, cross ? NULL : &r->slot);
        if (e) return e;
    }
    if (!(cmd->flags & CMD_WRITE) || r->wrote) return NULL;
    const char *log_err = server_write_refusal();
    if (log_err) { /* its own error code (MISCONF, NOREPLICAS), not ERR */
        static char coded[320];
        snprintf(coded, sizeof(coded), "-%s", log_err);
        return coded;
    }
    if (!r->allow_oom && srv.cfg.maxmemory > 0 && r->oom && (cmd->flags & CMD_DENYOOM))
        return "-" EVICT_ERR_OOM;
    return NULL;
}

/* Runs the command on the script client; its reply is pushed onto L. */
static void call_run(run_t *r, const command_t *cmd, int argc, resp_arg_t *argv)
{
    client_t *c = script_client;
    if ((cmd->flags & CMD_WRITE) && !r->wrote) {
        r->wrote = 1;
        if (!(r->caller->flags & CLIENT_MULTI)) {
            server_log_exec_begin(); /* the script's writes are logged as one transaction */
            r->exec_open = 1;
        }
    }
    if (r->repl & REPL_AOF)
        c->flags &= ~(uint32_t)CLIENT_NO_PROPAGATE;
    else
        c->flags |= CLIENT_NO_PROPAGATE;
    c->argc = argc;
    c->argv = argv;
    c->cmd = cmd;
    c->resp = r->resp;
    buf_clear(&c->out);
    command_call(c);
    c->cmd = NULL;
    c->argv = NULL;
    c->argc = 0;
    if (!c->out.len || !bridge_reply_to_lua(r->L, c->out.data, c->out.len))
        lua_pushboolean(r->L, 0); /* no reply (cannot happen for our commands) */
    buf_clear(&c->out);
}

/* redis.call (raise 1) and redis.pcall. */
static int call_command(lua_State *L, int raise)
{
    run_t *r = cur;
    if (!r) {
        return push_error_raise(L, "redis.call/pcall can only be called inside a script "
                                   "invocation");
    }
    buf_t nums;
    resp_arg_t small[ARGV_SMALL], *argv = NULL;
    int argc = lua_argv(L, small, &argv, &nums);
    if (argc < 0) return raise ? lua_error(L) : 1;
    /* the arguments are not needed on the stack (argv points into the strings, which nothing
     * collects before the command ran): room for a large reply when they were many */
    lua_settop(L, 0);
    const command_t *cmd = lookup(argc, argv);
    const char *err = call_refusal(r, cmd, argc, argv);
    if (err) {
        bridge_push_error(L, err, strlen(err));
        lua_pushboolean(L, 1);
        lua_setfield(L, -2, "ignore_error_stats_update");
        lua_getfield(L, -1, "err");
        server_count_error(lua_tostring(L, -1)); /* counted once, here */
        lua_pop(L, 1);
        if (cmd) ((command_t *)cmd)->rejected_calls++;
    } else {
        call_run(r, cmd, argc, argv);
    }
    if (argv != small) xfree(argv);
    buf_deinit(&nums);
    if (raise && lua_istable(L, -1)) {
        lua_pushliteral(L, "err");
        lua_rawget(L, -2);
        int is_err = lua_isstring(L, -1);
        lua_pop(L, 1);
        if (is_err) return lua_error(L);
    }
    return 1;
}

static int l_call(lua_State *L)
{
    return call_command(L, 1);
}

static int l_pcall(lua_State *L)
{
    return call_command(L, 0);
}

static int err_handler(lua_State *L);
#define REG_ERR_HANDLER "cte.err_handler"

/* ---- the rest of the redis table ---- */

static int l_sha1hex(lua_State *L)
{
    if (lua_gettop(L) != 1) return push_error_raise(L, "wrong number of arguments");
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    char hex[41];
    sha1_hex(s ? s : "", s ? len : 0, hex);
    lua_pushstring(L, hex);
    return 1;
}

/* {name = arg}: redis.error_reply / redis.status_reply */
static int l_error_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING)
        return push_error_raise(L, "wrong number or type of arguments");
    size_t len;
    const char *s = lua_tolstring(L, 1, &len);
    if (len > 0 && s[0] == '-') {
        bridge_push_error(L, s, len);
    } else {
        lua_pushliteral(L, "-");
        lua_pushvalue(L, 1);
        lua_concat(L, 2);
        s = lua_tolstring(L, -1, &len);
        bridge_push_error(L, s, len);
    }
    return 1;
}

static int l_status_reply(lua_State *L)
{
    if (lua_gettop(L) != 1 || lua_type(L, -1) != LUA_TSTRING)
        return push_error_raise(L, "wrong number or type of arguments");
    lua_newtable(L);
    lua_pushvalue(L, 1);
    lua_setfield(L, -2, "ok");
    return 1;
}

static int l_log(lua_State *L)
{
    int argc = lua_gettop(L);
    if (argc < 2) return push_error_raise(L, "redis.log() requires two arguments or more.");
    if (!lua_isnumber(L, 1)) return push_error_raise(L, "First argument must be a number.");
    int level = (int)lua_tonumber(L, 1);
    if (level < LOG_DEBUG_LEVEL || level > LOG_WARNING_LEVEL)
        return push_error_raise(L, "Invalid debug level.");
    buf_t b;
    buf_init(&b);
    for (int j = 2; j <= argc; j++) {
        size_t len;
        const char *s = lua_tolstring(L, j, &len);
        if (!s) continue;
        if (j > 2) buf_push(&b, ' ');
        buf_append(&b, s, len);
    }
    log_msg(level, "%s", b.data ? b.data : "");
    buf_deinit(&b);
    return 0;
}

static int l_setresp(lua_State *L)
{
    if (lua_gettop(L) != 1) return push_error_raise(L, "redis.setresp() requires one argument.");
    int v = (int)lua_tonumber(L, 1);
    if (v != 2 && v != 3) return push_error_raise(L, "RESP version must be 2 or 3.");
    if (cur) cur->resp = v;
    return 0;
}

static int l_set_repl(lua_State *L)
{
    if (!cur)
        return push_error_raise(L,
                                "redis.set_repl() can only be called inside a script invocation");
    if (lua_gettop(L) != 1) return push_error_raise(L, "redis.set_repl() requires one argument.");
    int flags = (int)lua_tonumber(L, 1);
    if (flags & ~REPL_ALL)
        return push_error_raise(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, "
                                   "REPL_ALL or REPL_NONE.");
    cur->repl = flags;
    return 0;
}

static int l_true(lua_State *L)
{
    lua_pushboolean(L, 1);
    return 1;
}

static int l_false(lua_State *L)
{
    lua_pushboolean(L, 0);
    return 1;
}

static int l_nothing(lua_State *L)
{
    return 0;
}

/* redis.acl_check_cmd(cmd, ...): 1 if the caller may run it. */
static int l_acl_check_cmd(lua_State *L)
{
    if (!cur)
        return push_error_raise(
            L, "redis.acl_check_cmd can only be called inside a script invocation");
    buf_t nums;
    resp_arg_t small[ARGV_SMALL], *argv = NULL;
    int argc = lua_argv(L, small, &argv, &nums);
    if (argc < 0) return lua_error(L);
    const command_t *cmd = lookup(argc, argv);
    int ok = cmd && arity_ok(cmd, argc), pos;
    int allowed = ok && acl_check_command(cur->caller, cmd, argc, argv, &pos) == ACL_OK;
    if (argv != small) xfree(argv);
    buf_deinit(&nums);
    if (!ok) return push_error_raise(L, "Invalid command passed to redis.acl_check_cmd()");
    lua_pushboolean(L, allowed);
    return 1;
}

static void set_number(lua_State *L, const char *name, lua_Number v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, name);
}

static void set_log_and_version(lua_State *L)
{
    lua_pushcfunction(L, l_log);
    lua_setfield(L, -2, "log");
    set_number(L, "LOG_DEBUG", LOG_DEBUG_LEVEL);
    set_number(L, "LOG_VERBOSE", LOG_VERBOSE_LEVEL);
    set_number(L, "LOG_NOTICE", LOG_NOTICE_LEVEL);
    set_number(L, "LOG_WARNING", LOG_WARNING_LEVEL);
    lua_pushstring(L, COMPAT_REDIS_VERSION);
    lua_setfield(L, -2, "REDIS_VERSION");
    set_number(L, "REDIS_VERSION_NUM", COMPAT_REDIS_VERSION_NUM);
}

/* What a library's code sees while FUNCTION LOAD runs it: only redis.register_function,
 * redis.log and the version (Redis's load-time API), in the registry as REG_LOAD_API. */
#define REG_LOAD_API "cte.load_api"
static void build_load_api(lua_State *L, lua_CFunction register_function)
{
    lua_newtable(L); /* the globals */
    lua_newtable(L); /* redis */
    lua_pushcfunction(L, register_function);
    lua_setfield(L, -2, "register_function");
    set_log_and_version(L);
    sandbox_protect_table(L, 1);
    lua_setfield(L, -2, "redis");
    sandbox_protect_table(L, 1);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_LOAD_API);
}

void engine_load_api(lua_State *L, int on)
{
    if (on)
        lua_getfield(L, LUA_REGISTRYINDEX, REG_LOAD_API);
    else
        lua_pushnil(L);
    sandbox_read_globals_from(L);
}

static void open_redis(lua_State *L, lua_CFunction register_function)
{
    static const luaL_Reg fns[] = {
        {"call", l_call},
        {"pcall", l_pcall},
        {"sha1hex", l_sha1hex},
        {"error_reply", l_error_reply},
        {"status_reply", l_status_reply},
        {"setresp", l_setresp},
        {"set_repl", l_set_repl},
        {"replicate_commands", l_true},
        {"breakpoint", l_false},
        {"debug", l_nothing},
        {"acl_check_cmd", l_acl_check_cmd},
        {NULL, NULL},
    };
    lua_newtable(L);
    luaL_register(L, NULL, fns);
    set_log_and_version(L);
    set_number(L, "REPL_NONE", 0);
    set_number(L, "REPL_AOF", REPL_AOF);
    set_number(L, "REPL_SLAVE", REPL_REPLICA);
    set_number(L, "REPL_REPLICA", REPL_REPLICA);
    set_number(L, "REPL_ALL", REPL_ALL);
    lua_setglobal(L, "redis");
}

/* Opens a library: luaopen_* and its table as the global name (not every opener sets it). */
static void open_lib(lua_State *L, lua_CFunction fn, const char *name)
{
    lua_pushcfunction(L, fn);
    lua_pushstring(L, name);
    lua_call(L, 1, 1);
    if (name[0] && lua_istable(L, -1))
        lua_setglobal(L, name);
    else
        lua_pop(L, 1);
}

lua_State *engine_state_new(lua_CFunction register_function)
{
    lua_State *L = luaL_newstate();
    if (!L) abort();
    open_lib(L, luaopen_base, "");
    open_lib(L, luaopen_table, LUA_TABLIBNAME);
    open_lib(L, luaopen_string, LUA_STRLIBNAME);
    open_lib(L, luaopen_math, LUA_MATHLIBNAME);
    open_lib(L, luaopen_cjson, "cjson");
    open_lib(L, luaopen_bit, "bit");
    open_lib(L, script_open_cmsgpack, "cmsgpack");
    open_lib(L, script_open_struct, "struct");
    lua_settop(L, 0);
    open_redis(L, register_function);
    sandbox_prepare(L);
    lua_pushcfunction(L, err_handler);
    lua_setfield(L, LUA_REGISTRYINDEX, REG_ERR_HANDLER);
    if (register_function) build_load_api(L, register_function);
    sandbox_protect(L);
    return L;
}

void engine_state_free(lua_State *L)
{
    if (L) lua_close(L);
}

void engine_set_global(lua_State *L, const char *name)
{
    sandbox_set_global(L, name);
}

int engine_load(lua_State *L, const char *chunk, size_t len, const char *chunkname)
{
    return sandbox_load(L, chunk, len, chunkname);
}

/* ---- errors ---- */

/* The pcall message handler: an error that is not a table becomes {err='ERR ' .. msg}, and
 * the Lua frame that raised it (past a C function) is added as source and line. */
static int err_handler(lua_State *L)
{
    lua_Debug ar;
    int have = lua_getstack(L, 1, &ar) && lua_getinfo(L, "nSl", &ar);
    if (have && !strcmp(ar.what, "C")) have = lua_getstack(L, 2, &ar) && lua_getinfo(L, "nSl", &ar);
    if (!lua_istable(L, 1)) {
        const char *msg = lua_tostring(L, 1);
        lua_newtable(L);
        lua_pushliteral(L, "ERR ");
        if (msg)
            lua_pushvalue(L, 1);
        else
            lua_pushstring(L, lua_isnil(L, 1) ? "nil" : luaL_typename(L, 1));
        lua_concat(L, 2);
        lua_setfield(L, -2, "err");
        lua_replace(L, 1);
    }
    if (have) {
        lua_pushstring(L, ar.source);
        lua_setfield(L, 1, "source");
        lua_pushnumber(L, ar.currentline);
        lua_setfield(L, 1, "line");
    }
    lua_settop(L, 1);
    return 1;
}

typedef struct reply_ctx {
    client_t *c;
} reply_ctx_t;

/* Every error the reply carries is counted for the calling command (and in the error
 * statistics unless a command inside the script already counted it). */
static void count_reply_error(void *ud, const char *msg, size_t len, int counted)
{
    client_t *c = ud;
    if (!counted) server_count_error(msg);
    if (c->cmd) ((command_t *)c->cmd)->failed_calls++;
}

/* The failed run's error (on top of L, popped) to c. */
static void reply_run_error(lua_State *L, client_t *c, const char *funcname)
{
    buf_t b;
    buf_init(&b);
    if (!lua_istable(L, -1)) {
        const char *msg = lua_tostring(L, -1);
        buf_printf(&b, "-ERR Error running script %s, %.100s", funcname,
                   msg ? msg : "execution failure");
    } else {
        static const char *const names[] = {"err", "source", "line", "ignore_error_stats_update"};
        for (int i = 0; i < 4; i++) { /* raw: a user's table may have any metatable */
            lua_pushstring(L, names[i]);
            lua_rawget(L, -2 - i);
        }
        const char *msg = lua_tostring(L, -4), *source = lua_tostring(L, -3),
                   *line = lua_tostring(L, -2);
        buf_printf(&b, "-%s", msg ? msg : "ERR unknown error");
        if (source && line) buf_printf(&b, " script: %s, on %s:%s.", funcname, source, line);
        int counted = lua_toboolean(L, -1);
        lua_pop(L, 4);
        for (size_t i = 1; i < b.len; i++)
            if (b.data[i] == '\r' || b.data[i] == '\n') b.data[i] = ' ';
        buf_append(&b, "\r\n", 2);
        count_reply_error(c, b.data + 1, b.len - 3, counted);
        reply_proto(c, b.data, b.len);
        buf_deinit(&b);
        lua_pop(L, 1);
        return;
    }
    for (size_t i = 1; i < b.len; i++)
        if (b.data[i] == '\r' || b.data[i] == '\n') b.data[i] = ' ';
    count_reply_error(c, b.data + 1, b.len - 1, 0);
    buf_append(&b, "\r\n", 2);
    reply_proto(c, b.data, b.len);
    buf_deinit(&b);
    lua_pop(L, 1);
}

/* ---- busy scripts ---- */

static void hook(lua_State *L, lua_Debug *ar)
{
    run_t *r = cur;
    if (!r) return;
    if (!r->timedout) {
        long long elapsed_ms = (time_us() - r->start_us) / 1000;
        if (srv.cfg.busy_reply_threshold <= 0 || elapsed_ms < srv.cfg.busy_reply_threshold) return;
        log_warning("Slow script detected: still in execution after %lld milliseconds. You can "
                    "try killing the script using the %s command. Script name is: %s.",
                    elapsed_ms, r->call->is_eval ? "SCRIPT KILL" : "FUNCTION KILL",
                    r->call->funcname);
        r->timedout = 1;
        srv.busy_error = r->call->is_eval ? BUSY_EVAL_MSG : BUSY_FUNCTION_MSG;
    }
    engine_serve_while_busy(r->caller);
    /* SHUTDOWN NOSAVE (the one SHUTDOWN a busy script lets through): Redis exits at once,
     * nothing of the script logged; here the script stops and its transaction is dropped */
    if (srv.shutdown_asap && r->killed != 2) {
        log_warning("Stopping the busy script %s for SHUTDOWN NOSAVE: its writes are not "
                    "logged.",
                    r->call->funcname);
        r->killed = 2;
    }
    if (!r->killed) return;
    if (r->killed == 1) log_warning("Lua script killed by user with SCRIPT KILL.");
    /* every line from now on fails too, so that pcall cannot catch the kill for good */
    lua_sethook(L, hook, LUA_MASKLINE, 0);
    push_error_raise(L, "Script killed by user with SCRIPT KILL...");
}

void engine_kill(client_t *c, int is_eval)
{
    if (!cur) {
        reply_error(c, "NOTBUSY No scripts in execution right now.");
    } else if (cur->wrote) {
        reply_error(c, "UNKILLABLE Sorry the script already executed write commands against the "
                       "dataset. You can either wait the script termination or kill the server "
                       "in a hard way using the SHUTDOWN NOSAVE command.");
    } else if (is_eval != cur->call->is_eval) {
        reply_error(c, is_eval ? BUSY_FUNCTION_MSG : BUSY_EVAL_MSG);
    } else {
        cur->killed = 1;
        reply_ok(c);
    }
}

void engine_reply_running(client_t *c)
{
    if (!cur || cur->call->is_eval) {
        reply_null(c);
        return;
    }
    client_t *caller = cur->caller;
    reply_map(c, 3);
    reply_bulk_cstr(c, "name");
    reply_bulk_cstr(c, cur->call->funcname);
    reply_bulk_cstr(c, "command");
    reply_array(c, caller->argc);
    for (int i = 0; i < caller->argc; i++) reply_bulk(c, caller->argv[i].ptr, caller->argv[i].len);
    reply_bulk_cstr(c, "duration_ms");
    reply_int(c, (time_us() - cur->start_us) / 1000);
}

/* ---- runs ---- */

/* Redis's scriptPrepareForRun checks: 0, or -1 after an error reply to the caller. */
static int prepare_or_reply(const engine_call_t *call, run_t *r)
{
    client_t *c = call->caller;
    uint32_t f = call->flags;
    int compat = (f & SCRIPT_F_EVAL_COMPAT) != 0;
    r->oom = srv.cfg.maxmemory > 0 && evict_perform(0) == EVICT_FAIL;
    if (!compat) {
        if ((f & SCRIPT_F_NO_CLUSTER) && cluster) {
            reply_error(c, "ERR Can not run script on cluster, 'no-cluster' flag is set.");
            return -1;
        }
        if (!(f & SCRIPT_F_NO_WRITES)) {
            const char *log_err = server_write_refusal();
            if (log_err) {
                reply_error(c, log_err);
                return -1;
            }
            if (call->ro) {
                reply_error(c, "ERR Can not execute a script with write flag using *_ro command.");
                return -1;
            }
        }
        /* the dispatcher refuses such a call first (its call flags are deny-oom): this
         * answers what passed it (Redis's wording) */
        if (r->oom && !(f & (SCRIPT_F_ALLOW_OOM | SCRIPT_F_NO_WRITES))) {
            reply_error(c, "OOM allow-oom flag is not set on the script, can not run it when "
                           "used memory > 'maxmemory'");
            return -1;
        }
    }
    r->read_only = call->ro || (!compat && (f & SCRIPT_F_NO_WRITES));
    r->allow_oom = !compat && (f & SCRIPT_F_ALLOW_OOM);
    return 0;
}

static void finish(run_t *r)
{
    if (r->exec_open && r->killed == 2)
        server_log_exec_discard();
    else if (r->exec_open)
        server_log_exec_end();
    if (r->timedout) srv.busy_error = NULL;
    lua_sethook(r->L, hook, 0, 0);
    cur = NULL;
    lua_gc(r->L, LUA_GCSTEP, 1);
}

void engine_run(lua_State *L, const engine_call_t *call)
{
    client_t *c = call->caller;
    run_t r = {call, c, L, 0, 0, 0, 0, 0, 0, 0, 0, REPL_ALL, 2, -1};
    if (prepare_or_reply(call, &r) < 0) {
        lua_pop(L, call->nargs + 1);
        return;
    }
    client_t *sc = script_client;
    sc->db = c->db; /* SELECT inside the script does not change the caller's database */
    sc->dbid = c->dbid;
    r.start_us = time_us();
    cur = &r;
    lua_sethook(L, hook, LUA_MASKCOUNT, HOOK_INSTRUCTIONS);
    int base = lua_gettop(L) - call->nargs;
    lua_getfield(L, LUA_REGISTRYINDEX, REG_ERR_HANDLER);
    lua_insert(L, base);
    int rc = lua_pcall(L, call->nargs, 1, base);
    lua_remove(L, base);
    if (rc) {
        reply_run_error(L, c, call->funcname);
    } else {
        buf_t b;
        buf_init(&b);
        bridge_lua_to_reply(L, &b, c->resp, r.resp, count_reply_error, c);
        reply_proto(c, b.data, b.len);
        buf_deinit(&b);
    }
    finish(&r);
}

int engine_init(char *err, size_t errlen)
{
    script_client = client_new(NULL, NULL, -1);
    client_unlist(script_client);
    script_client->flags |= CLIENT_SCRIPT | CLIENT_MULTI | CLIENT_AUTHENTICATED;
    return 0;
}

void engine_deinit(void)
{
    if (script_client) client_free(script_client);
    script_client = NULL;
}
