/* outconn.h - outbound TCP connections on the server's libuv loop (MIGRATE's connections to
 * other servers).
 *
 * A connection resolves its host (uv_getaddrinfo, off the loop), connects without blocking,
 * then sends what the owner queues (in order, each write copied or taken) and hands what
 * arrives to the owner's data callback. A timeout, when set, fails the connection with
 * UV_ETIMEDOUT after that long without progress (connected, bytes written or read). Events go
 * to the owner's callbacks, which may be swapped (a cached connection changes owners); after
 * outconn_close no callback runs. Loop thread only. */
#ifndef CTE_SERVER_NET_OUTCONN_H
#define CTE_SERVER_NET_OUTCONN_H

#include <stddef.h>

typedef struct outconn outconn_t;

typedef struct outconn_ops {
    /* connected (status 0) or failed to (a negative libuv error) */
    void (*connected)(void *ud, int status);
    /* bytes arrived (valid during the call only) */
    void (*data)(void *ud, const char *p, size_t len);
    /* the connection failed after it was made: a read or write error, the peer closed it
     * (UV_EOF), or the timeout passed (UV_ETIMEDOUT); the owner closes it */
    void (*failed)(void *ud, int status);
    /* queued bytes were written (outconn_pending dropped) */
    void (*written)(void *ud);
} outconn_ops_t;

/* Starts connecting to host:port. Returns the connection (the caller owns it and ends it with
 * outconn_close); connected() follows, from the loop, with the result. Never fails here. */
outconn_t *outconn_open(const char *host, int port, const outconn_ops_t *ops, void *ud);
/* Swaps the owner's callbacks (ops may be NULL: events are then dropped, but a failure still
 * marks the connection failed). */
void outconn_set_owner(outconn_t *oc, const outconn_ops_t *ops, void *ud);
/* 1 once connected and not failed since. */
int outconn_ok(const outconn_t *oc);
/* Fails the connection after ms (> 0) without progress while armed; 0 disarms it. */
void outconn_set_timeout(outconn_t *oc, long long ms);
/* Queues len bytes (copied) / a buffer the connection takes (freed with xfree once written).
 * Before the connection is made, or after it failed, the bytes are dropped. */
void outconn_write(outconn_t *oc, const void *p, size_t len);
void outconn_write_take(outconn_t *oc, void *p, size_t len);
/* Bytes queued and not yet written. */
size_t outconn_pending(const outconn_t *oc);
/* Closes the socket and frees the connection (later, in libuv's close callback); no
 * callback of the owner runs after this. Takes NULL. */
void outconn_close(outconn_t *oc);
/* Connections open (made by outconn_open and not yet freed). */
int outconn_count(void);

#endif
