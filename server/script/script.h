/* script.h - Lua scripting and functions, as a room of the server (server/rooms.c).
 *
 * EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT (eval.c), FUNCTION, FCALL and FCALL_RO
 * (function.c) on the engine of engine.h. Loop thread. */
#ifndef CTE_SERVER_SCRIPT_SCRIPT_H
#define CTE_SERVER_SCRIPT_SCRIPT_H

#include "common/buf.h"
#include "server/command.h"

#include <stddef.h>

extern command_t cmds_script[];

/* The room's start-up and end: the script client and both Lua states. */
int script_init(char *err, size_t errlen);
void script_deinit(void);

/* INFO memory's scripting lines (used_memory_lua, number_of_cached_scripts, ...). */
void script_info_memory(buf_t *b);

/* The commands that rebuild every function library (FUNCTION LOAD REPLACE per library), for
 * the append-only file's rewrite: appended to out as RESP. */
void script_rewrite(buf_t *out);

/* SCRIPT's and FUNCTION's own proc: only reached without a subcommand, where the arity
 * check answers first. */
void script__container_cmd(client_t *c);

/* eval.c's part, for script.c */
int eval__init(void);
void eval__deinit(void);
void eval__info(buf_t *b);
/* function.c's part */
int function__init(void);
void function__deinit(void);
void function__info(buf_t *b);
extern command_t function__cmds_function[];

#endif
