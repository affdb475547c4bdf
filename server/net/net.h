/* net.h - the socket transport (TCP and Unix) on the server's libuv loop. */
#ifndef CTE_SERVER_NET_H
#define CTE_SERVER_NET_H

#include <stddef.h>

/* Opens the listeners from srv.cfg (bind list and port, unixsocket) on srv.loop and starts the
 * end-of-turn flush of replies. Returns 0, or a negative libuv/errno code (logged). */
int net_start(void);
/* CONFIG SET port/bind: replaces the TCP listeners by those of srv.cfg's port and bind.
 * Returns 0 (also when net_start has not run), or a negative error when one of them cannot be
 * opened (a busy port, an address not on this host): then no TCP listener is left open, and
 * the caller puts the old port and bind back into srv.cfg and calls it again. */
int net_listen_again(void);
/* Closes the listeners (and the Unix socket file) and every socket client. */
void net_stop(void);
/* Hands every client with pending output to its transport. */
void net_flush_pending(void);

/* While the loop cannot run (a busy script, server/script/busy.c): the listening descriptors
 * (TCP and Unix) into fds, at most max; returns the count. */
int net_listen_fds(int *fds, int max);
/* Accepts the connections waiting on listening descriptor fd (one of net_listen_fds) as the
 * loop would: each becomes a client at once (in srv.clients), refused as usual past maxclients
 * or by protected mode. Never blocks; does nothing for a descriptor that is not a listener. */
void net_accept_now(int fd);

struct sockaddr_storage;
/* Protected mode's decision for a TCP peer: 1 to refuse it, 0 to accept. rc is what
 * getpeername returned, ss the address it filled (read only when rc is 0). With
 * protected-mode on and no requirepass only loopback peers are accepted (bind does not
 * matter); it fails closed: an unreadable address, or one neither IPv4 nor IPv6, is refused. */
int net_protected_refuses(int rc, const struct sockaddr_storage *ss);

struct client;
/* For the shared-memory transport (net/shm.c): takes a Unix-socket client off the socket
 * transport. Returns a duplicate of its socket descriptor (the caller owns it) after the
 * socket handle was closed without freeing c (c->ops and c->conn are NULL then), or -EBUSY
 * while replies wait to be sent, -EINVAL if c is no socket client, -errno. */
int net__conn_release(struct client *c);
/* 1 if c must be dropped for pending bytes of output past its class's limits. */
int net__over_output_limit(struct client *c, size_t pending);

#endif
