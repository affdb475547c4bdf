/* shm_layout.h - the shared-memory segment's header, as the server (server/net/shm.c) and
 * libcte (client/shm.c) both map it: one definition of the wire format of docs/shm.md. Header
 * only, so the client library includes it without linking any of the server's code. The
 * offset table and the rules for each field are in server/net/shm.c's top comment and in
 * docs/shm.md; the asserts below pin the offsets. */
#ifndef CTE_COMMON_SHM_LAYOUT_H
#define CTE_COMMON_SHM_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#define SHM_MAGIC 0x4d485343u
#define SHM_VERSION 2
#define SHM_HDR_SIZE 4096

typedef struct shm_hdr {
    uint32_t magic, version;
    uint64_t ring_size, req_off, rep_off, data_off, data_size, total;
    _Alignas(64) uint64_t req_head;
    _Alignas(64) uint64_t req_tail;
    _Alignas(64) uint32_t srv_sleeping;
    _Alignas(64) uint64_t rep_head;
    _Alignas(64) uint64_t rep_tail;
    _Alignas(64) uint32_t cli_sleeping;
    _Alignas(64) uint64_t rd_tail; /* client: reply data-area bytes released, ever */
} shm_hdr_t;

/* Values of at least this many bytes travel through the data areas (both directions). */
#define SHM_AREA_MIN 2048
/* Both sides allocate in their area in order, but go back to its start once an allocation
 * would pass this many bytes and what is still in use fits before it: the bytes in flight
 * then stay in the caches instead of sweeping the whole area through them. */
#define SHM_AREA_HOT (1024 * 1024)

/* The bytes a move to the area's start skipped (from the old head to the start): free as
 * soon as everything given out before them is released. Up to SHM_GAPS are remembered; a
 * forced move past that many counts its bytes as in use until the tail passes them. */
#define SHM_GAPS 4
typedef struct shm_gaps {
    uint64_t from[SHM_GAPS], to[SHM_GAPS];
    unsigned first, n;
} shm_gaps_t;

/* Where the next allocation of len bytes in an area of size bytes (a power of two) starts,
 * as an index, or UINT64_MAX when it does not fit; *tail (bytes released, ever) moves past
 * the gaps it has reached, room or not (they are forgotten here). The allocation goes at head, or
 * at the area's start (position 0) when head's position leaves too little before the end or passes
 * SHM_AREA_HOT with what is in use fitting before it. Without the gaps, the bytes skipped by such a
 * move would count as in use until the first allocation after it is released: a writer one or two
 * allocations ahead of its reader would find the area full after every move. */
static inline uint64_t shm_area_at(shm_gaps_t *g, uint64_t head, uint64_t *tail, uint64_t size,
                                   uint64_t len)
{
    uint64_t t = *tail;
    while (g->n && t >= g->from[g->first]) {
        if (t < g->to[g->first]) t = g->to[g->first];
        g->first = (g->first + 1) % SHM_GAPS;
        g->n--;
    }
    *tail = t;
    uint64_t pos = head & (size - 1), at = head;
    int hot = g->n < SHM_GAPS && pos + len > SHM_AREA_HOT && (head - t) + len <= pos;
    if (pos + len > size || hot) {
        at = head + (size - pos);
        if (head == t) t = at; /* nothing in use: nothing is skipped */
    }
    if (len > size || at + len - t > size) return UINT64_MAX;
    if (at != head && t != at && g->n < SHM_GAPS) {
        unsigned i = (g->first + g->n++) % SHM_GAPS;
        g->from[i] = head;
        g->to[i] = at;
    }
    *tail = t;
    return at;
}

_Static_assert(offsetof(shm_hdr_t, ring_size) == 8, "layout");
_Static_assert(offsetof(shm_hdr_t, total) == 48, "layout");
_Static_assert(offsetof(shm_hdr_t, req_head) == 64, "layout");
_Static_assert(offsetof(shm_hdr_t, req_tail) == 128, "layout");
_Static_assert(offsetof(shm_hdr_t, srv_sleeping) == 192, "layout");
_Static_assert(offsetof(shm_hdr_t, rep_head) == 256, "layout");
_Static_assert(offsetof(shm_hdr_t, rep_tail) == 320, "layout");
_Static_assert(offsetof(shm_hdr_t, cli_sleeping) == 384, "layout");
_Static_assert(offsetof(shm_hdr_t, rd_tail) == 448, "layout");
_Static_assert(sizeof(shm_hdr_t) <= SHM_HDR_SIZE, "layout");

#endif
