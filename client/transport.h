/* transport.h - libcte internal: the small interface every transport implements.
 *
 * A transport only moves bytes; the connection above it (conn.c) frames requests and parses
 * replies, so TCP, the Unix socket and shared memory share all the rest. All calls
 * are non-blocking except wait(), which blocks up to timeout_ms (-1: for ever), and a recv()
 * asked to block. */
#ifndef CTE_CLIENT_TRANSPORT_H
#define CTE_CLIENT_TRANSPORT_H

#include "uri.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

typedef struct cte_transport cte_transport_t;

enum { CTE_T_READABLE = 1, CTE_T_WRITABLE = 2 };

typedef struct cte_transport_ops {
    const char *name;
    /* Connects within timeout_ms (<= 0: no limit); 0, -errno or CTE_E_* (CTE_E_TIMEOUT) with
     * a reason in why. */
    int (*open)(cte_transport_t *t, const cte_addr_t *a, int timeout_ms, char *why, size_t whylen);
    /* Writes what it can of iov[0..n): bytes written (> 0), or -EAGAIN, or -errno. */
    long (*send)(cte_transport_t *t, const struct iovec *iov, int n);
    /* Reads up to len bytes: bytes (> 0), 0 at end of stream, -EAGAIN, or -errno. With block
     * it waits until something arrives (never -EAGAIN): one call where wait + recv are two. */
    long (*recv)(cte_transport_t *t, void *buf, size_t len, int block);
    /* Waits until readable (or also writable when want_write): a CTE_T_* mask, 0 on
     * timeout, or -errno. */
    int (*wait)(cte_transport_t *t, int want_write, int timeout_ms);
    void (*close)(cte_transport_t *t);
    /* Shared memory only (NULL for the sockets): the request data area. req_alloc gives n
     * contiguous bytes of it and their offset, or NULL when it has no room now (or none);
     * req_mark is the allocation point, req_rewind undoes allocations back to a mark, and
     * req_free frees everything allocated before a mark (its request was answered). */
    char *(*req_alloc)(cte_transport_t *t, size_t n, uint64_t *off);
    uint64_t (*req_mark)(cte_transport_t *t);
    void (*req_rewind)(cte_transport_t *t, uint64_t mark);
    void (*req_free)(cte_transport_t *t, uint64_t mark);
    /* The reply data area: every bulk there before index end is released (monotonic). */
    void (*rep_release)(cte_transport_t *t, uint64_t end);
} cte_transport_ops_t;

struct cte_transport {
    const cte_transport_ops_t *ops; /* NULL: closed */
    int fd;
    void *impl; /* a transport's own state (shm: the segment) */
    char *rep_area;         /* shm: the reply data area the parser reads bulks from, or NULL */
    uint64_t rep_area_size; /* its bytes (a power of two) */
    uint64_t req_area_size; /* shm: bytes of the request data area (0: none) */
};

/* Connects t->fd to the Unix socket a->path (unix: and shm: addresses): 0 or a failure. */
int cte__unix_open(cte_transport_t *t, const cte_addr_t *a, int timeout_ms, char *why,
                   size_t whylen);
/* The shared-memory transport (shm.c). */
extern const cte_transport_ops_t cte__shm_ops;

/* The transport for an address kind (never NULL). */
const cte_transport_ops_t *cte__transport_ops(cte_addr_kind_t kind);

#endif
