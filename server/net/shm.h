/* shm.h - the shared-memory transport: a client on this machine attaches over the Unix socket
 * and from then on exchanges RESP through two rings in a segment of its own (docs/shm.md).
 * Loop thread only. */
#ifndef CTE_SERVER_NET_SHM_H
#define CTE_SERVER_NET_SHM_H

#include "server/command.h"

/* The CTE.SHM.ATTACH command, registered as a room by server/rooms.c. */
extern command_t cmds_shm[];

#endif
