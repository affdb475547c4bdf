/* introspect.h - SLOWLOG, LATENCY, MONITOR and CLIENT PAUSE: what the server records about the
 * commands it runs, and the feed it sends to monitors.
 *
 * command_call() reports every finished command here (introspect_after_call) and every
 * command about to run (introspect_before_call, for MONITOR). Runs on the loop thread. */
#ifndef CTE_SERVER_INTROSPECT_H
#define CTE_SERVER_INTROSPECT_H

#include "server/client.h"
#include "server/command.h"

extern command_t cmds_introspect[];

/* Feeds monitors with the command c is about to run (unless it is an admin command). */
void introspect_before_call(client_t *c);
/* Records c's command that took duration_us in the slow log and the latency monitor. */
void introspect_after_call(client_t *c, long long duration_us);
/* 1 if CLIENT PAUSE holds cmd back now: the dispatcher then postpones the client. */
int introspect_paused(const command_t *cmd);
/* Ends a pause whose time is up (cron); returns 1 when a pause ended. */
int introspect_pause_check(long long now_ms);
void introspect_deinit(void);
/* Takes c out of MONITOR mode (RESET, disconnect). */
void introspect_forget_monitor(client_t *c);
/* CLIENT PAUSE and CLIENT UNPAUSE, rows of CLIENT's subcommand table. */
void client_pause_cmd(client_t *c);
void client_unpause_cmd(client_t *c);
/* Number of clients in MONITOR mode, for INFO. */
int introspect_monitors(void);

#endif
