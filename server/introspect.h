/* introspect.h - SLOWLOG, LATENCY, MONITOR and CLIENT PAUSE: what the server records about the
 * commands it runs, and the feed it sends to monitors.
 *
 * command_call() reports every finished command here (introspect_after_call), which also feeds
 * it to monitors, after it ran, as Redis 7.0 does: inside EXEC the queued commands come before
 * the EXEC itself. Runs on the loop thread. */
#ifndef CTE_SERVER_INTROSPECT_H
#define CTE_SERVER_INTROSPECT_H

#include "common/buf.h"
#include "server/client.h"
#include "server/command.h"

extern command_t cmds_introspect[];

/* Feeds monitors with c's command as it is in c->argv (database c->dbid), whatever its flags.
 * The hook for scripting: EVAL and FCALL are CMD_SKIP_MONITOR rows, so their finishing feeds
 * nothing, and they call this before running the script, so that monitors see the EVAL line
 * before the lines of the commands the script runs (those come from the script's client, shown
 * as "lua"), as in Redis. */
void introspect_feed_monitors(client_t *c);
/* Records c's command that took duration_us in the slow log and the latency monitor, and feeds
 * it to monitors unless its row is CMD_ADMIN or CMD_SKIP_MONITOR or it is a blocked command
 * being retried (monitors saw it when it first ran). */
void introspect_after_call(client_t *c, long long duration_us);
/* The latency monitor: records a sample of event ("expire-cycle"...) that took ms when that
 * reaches latency-monitor-threshold (LATENCY LATEST/HISTORY show it). */
void introspect_latency_sample(const char *event, long long ms);
/* Latency tracking (latency-tracking yes): adds one call of cmd that took duration_us to
 * its histogram (allocated on the first call: about 3.5 KiB per command called), which
 * LATENCY HISTOGRAM and INFO latencystats report. */
void introspect_track_latency(command_t *cmd, long long duration_us);
/* Drops cmd's histogram (CONFIG RESETSTAT). */
void introspect_reset_latency(command_t *cmd);
/* INFO's "latencystats" section body: latency_percentiles_usec_<cmd>:p50=..,p99=.. for every
 * command with calls, at the percentiles of latency-tracking-info-percentiles. */
void introspect_info_latencystats(buf_t *b);
/* 1 if CLIENT PAUSE holds c's cmd back now: the dispatcher then postpones the client. WRITE
 * mode holds writes, commands that may replicate, and an EXEC whose queue has one of those.
 * While any pause lasts, keys whose time is up are hidden but not deleted (db_expire_paused)
 * and nothing is evicted, as in Redis 7.0. */
int introspect_paused(const client_t *c, const command_t *cmd);
/* 1 while a CLIENT PAUSE (either mode) lasts: eviction waits for its end. */
int introspect_pause_active(void);
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
