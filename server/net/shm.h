/* shm.h - the shared-memory transport: a client on this machine attaches over the Unix socket
 * and from then on exchanges RESP through two rings in a segment of its own (docs/shm.md).
 * Loop thread only. */
#ifndef CTE_SERVER_NET_SHM_H
#define CTE_SERVER_NET_SHM_H

#include "server/command.h"

/* The CTE.SHM.ATTACH command, registered as a room by server/rooms.c. */
extern command_t cmds_shm[];

struct client;
/* While the loop cannot run (a busy script, server/script/busy.c): services every attached
 * client but skip once, as a loop turn would (what arrived in its request ring runs, its
 * replies go to its reply ring). */
void shm_serve_now(struct client *skip);

#endif
