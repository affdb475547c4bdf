/* engine.h - the Lua engine shared by EVAL scripts and FUNCTION libraries.
 *
 * A Lua state is sandboxed as Redis 7.0's (engine_state_new): the base, table, string, math,
 * cjson, bit, cmsgpack and struct libraries, the redis table, no dofile/loadfile/print, no
 * binary chunks, the globals and library tables read-only. engine_run runs one function of a
 * state for a client: the checks Redis makes before a script runs (shebang flags, *_RO,
 * out of memory), the busy-script bookkeeping (SCRIPT KILL, -BUSY for other clients past
 * busy-reply-threshold), and the reply. Commands called by a script go through
 * engine_call_command (redis.call / redis.pcall). One script runs at a time. Loop thread. */
#ifndef CTE_SERVER_SCRIPT_ENGINE_H
#define CTE_SERVER_SCRIPT_ENGINE_H

#include "common/buf.h"
#include "server/client.h"

#include <lua.h>
#include <stddef.h>
#include <stdint.h>

/* Script flags: the shebang's flags=... and register_function's flags. */
enum engine_flag {
    SCRIPT_F_NO_WRITES = 1 << 0,
    SCRIPT_F_ALLOW_OOM = 1 << 1,
    SCRIPT_F_ALLOW_STALE = 1 << 2,
    SCRIPT_F_NO_CLUSTER = 1 << 3,
    SCRIPT_F_ALLOW_CROSS_SLOT = 1 << 4,
    SCRIPT_F_EVAL_COMPAT = 1 << 8, /* an EVAL script without a shebang: none of the above */
};
/* The command flags (CMD_*) of an EVAL or FCALL call of a script with flags script_flags
 * (SCRIPT_F_*), made from the command's static cmd_flags as Redis 7.0's: WRITE unless
 * no-writes, DENYOOM unless allow-oom or no-writes, STALE with allow-stale, never
 * MAY_REPLICATE; a script without a shebang (SCRIPT_F_EVAL_COMPAT) keeps cmd_flags. */
uint32_t engine_cmd_flags(uint32_t cmd_flags, uint32_t script_flags);
/* The bit of a flag's name (s[0..len)), or 0 if there is none such. */
uint32_t engine_flag_by_name(const char *s, size_t len);
/* The names of the flags in bits, in Redis's order: calls fn for each. */
void engine_flag_names(uint32_t bits, void (*fn)(void *ud, const char *name), void *ud);

/* The first line of an EVAL script or a FUNCTION library: "#!<engine> [word ...]", ended by a
 * line feed, split into words as Redis's sdssplitargs (blanks separate, "..." with
 * \\-escapes and '...' quote). engine_shebang reads it from body[0..len): when body starts
 * with "#!", the whole line is split first, then fn is called for word i = 0, 1, ... (word 0
 * is the engine, "#!" included; w is valid during the call) until it returns nonzero.
 * Returns one of engine_shebang_rc; with ENGINE_SHEBANG_OK, *line_len is the line's length
 * (its line feed not counted). */
enum engine_shebang_rc {
    ENGINE_SHEBANG_NONE = 0,    /* body does not start with "#!" */
    ENGINE_SHEBANG_OK = 1,      /* fn took every word */
    ENGINE_SHEBANG_NO_LF = -1,  /* no line feed ends the line */
    ENGINE_SHEBANG_BAD = -2,    /* no word, or unbalanced quotes */
    ENGINE_SHEBANG_REFUSED = -3 /* fn returned nonzero (its ud says why) */
};
typedef int engine_word_fn(void *ud, int i, const char *w, size_t len);
int engine_shebang(const char *body, size_t len, engine_word_fn *fn, void *ud, size_t *line_len);

/* A new sandboxed state. With register_function, the FUNCTION engine's: a library's code runs
 * with only the load-time API visible (engine_load_api) and register_function in it. Aborts
 * when memory is exhausted. */
lua_State *engine_state_new(lua_CFunction register_function);
/* FUNCTION LOAD: on 1, globals read through the load-time API (redis.register_function,
 * redis.log, the version); on 0, through the real globals again. */
void engine_load_api(lua_State *L, int on);
void engine_state_free(lua_State *L);
/* Sets the global name of L's real globals table to the value on top (popped): how KEYS and
 * ARGV reach an EVAL script past the read-only globals. */
void engine_set_global(lua_State *L, const char *name);
/* Loads chunk[0..len) under chunkname ("@user_script"): 0 with the function on the stack, or
 * -1 with the message on the stack. Binary chunks are refused. */
int engine_load(lua_State *L, const char *chunk, size_t len, const char *chunkname);

/* One run of a function: the function and its nargs arguments are on top of L. */
typedef struct engine_call {
    client_t *caller;
    const char *funcname; /* "f_<sha>" for EVAL, the function's name for FCALL */
    uint32_t flags;       /* SCRIPT_F_* */
    int ro;               /* EVAL_RO, EVALSHA_RO, FCALL_RO */
    int is_eval;          /* EVAL (SCRIPT KILL) or FCALL (FUNCTION KILL) */
    int nargs;
} engine_call_t;
/* Runs it and replies to the caller (the result, or the error as Redis 7.0 words it). Pops
 * the function and its arguments. */
void engine_run(lua_State *L, const engine_call_t *call);

/* 1 while a script runs; engine_running_eval: 1 while an EVAL script (not a function) runs. */
int engine_running(void);
int engine_running_eval(void);
/* SCRIPT KILL (is_eval 1) and FUNCTION KILL: replies to c. */
void engine_kill(client_t *c, int is_eval);
/* FUNCTION STATS' running_script: appends its map (name, command, duration_ms) to c, or a
 * null when no function runs. */
void engine_reply_running(client_t *c);

/* The script client (redis.call's), made once by engine_init. */
int engine_init(char *err, size_t errlen);
void engine_deinit(void);

/* Serves the other clients while a script is past busy-reply-threshold (busy.c): reads what
 * they sent and runs it (the dispatcher refuses all but the commands allowed while busy) and
 * writes their replies, without returning to the loop. caller is the script's client,
 * skipped. */
void engine_serve_while_busy(client_t *caller);

#endif
