/* bridge.h - values between Lua and RESP, as Redis 7.0's scripting converts them.
 *
 * Reply -> Lua (what redis.call returns): integer -> number, bulk -> string, nil bulk or nil
 * array -> false, array -> table, status -> {ok=s}, error -> {err=s} (the '-' dropped, the
 * code kept), and in RESP3 (redis.setresp(3)) null -> nil, map -> {map={...}}, set ->
 * {set={k=true}}, double -> {double=n}, big number -> {big_number=s}, boolean -> boolean,
 * verbatim -> {verbatim_string={format=f, string=s}}.
 * Lua -> reply (what a script returns): string -> bulk, number -> integer (truncated),
 * boolean -> :1 / nil (RESP3 scripts: #t/#f), table with err / ok / double / big_number / map
 * / set / verbatim_string as above, other tables -> array up to the first nil, anything else
 * -> nil. Loop thread (the Lua states are the loop's). */
#ifndef CTE_SERVER_SCRIPT_BRIDGE_H
#define CTE_SERVER_SCRIPT_BRIDGE_H

#include "common/buf.h"

#include <lua.h>
#include <stddef.h>

/* Pushes onto L the value of the one RESP reply at p[0..len) (written by our commands, so
 * trusted to be well formed). An error becomes {err=msg, ignore_error_stats_update=true}
 * (already counted). Returns the bytes read, or 0 if the reply was cut short (then L holds
 * nothing more). Aggregates nest up to BRIDGE_MAX_DEPTH; deeper ones read as false. */
#define BRIDGE_MAX_DEPTH 1000
size_t bridge_reply_to_lua(lua_State *L, const char *p, size_t len);

/* Called for each error reply written by bridge_lua_to_reply: msg is the whole line after
 * '-'; counted is 1 when the error was already counted in the error statistics (it came from
 * a command run by the script). */
typedef void bridge_error_fn(void *ud, const char *msg, size_t len, int counted);

/* Pops the value on top of L and appends it to out as a reply in protocol proto (2 or 3);
 * lua_resp is the script's redis.setresp (how booleans are written). on_error (may be NULL)
 * sees every error written. Never fails: a table nested too deep for the Lua stack is
 * written as an error. */
void bridge_lua_to_reply(lua_State *L, buf_t *out, int proto, int lua_resp,
                         bridge_error_fn *on_error, void *ud);

/* Pushes the Redis error table {err="CODE msg"} for msg as Redis's luaPushErrorBuff: a leading
 * '-' is dropped and the code is the first word, without one the code is ERR; trailing CR/LF
 * are trimmed. */
void bridge_push_error(lua_State *L, const char *msg, size_t len);

#endif
