/* rooms.h - registers every room of server/ with the core (server/rooms.c). */
#ifndef CTE_SERVER_ROOMS_H
#define CTE_SERVER_ROOMS_H

/* Registers the command groups, the tag store, search and the append-only file with the core
 * (server/hooks.h). Call before server_init(); calling it again does nothing more. */
void server_rooms_register(void);

#endif
