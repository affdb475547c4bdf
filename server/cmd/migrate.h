/* server/cmd/migrate.h - what MIGRATE (server/cmd/migrate.c) exports besides its table. */
#ifndef CTE_SERVER_CMD_MIGRATE_H
#define CTE_SERVER_CMD_MIGRATE_H

#include "server/command.h"

extern command_t cmds_migrate[];

/* Connections kept for later MIGRATEs (INFO migrate_cached_sockets). */
int migrate_cached_sockets(void);
/* Periodic work: closes cached connections unused for 10 seconds, retries pieces of tags
 * that were busy. */
void migrate_cron(long long now_ms);
/* Closes every connection and ends the transfers in flight (shutdown). */
void migrate_deinit(void);
/* The core's call gate (server_set_call_gate): a write to a key in flight waits until its
 * transfer ended (inside MULTI/EXEC or a script it fails with TRYAGAIN instead). Returns 1 if
 * it replied or made c wait, 0 to let the command run. */
int migrate_call_gate(client_t *c, const command_t *cmd);

#endif
