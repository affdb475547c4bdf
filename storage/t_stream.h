/* t_stream.h - streams: an append-only log of entries (an id and field-value pairs) with
 * consumer groups, as Redis 7.0 keeps them.
 *
 * Entries live in nodes: each node is a listpack in Redis's exact stream node layout
 * (storage/t_stream.c draws it), keyed by the id of its master entry in an ordered index.
 * Because the bytes are Redis's, DUMP and the RDB writer can emit a node's listpack verbatim
 * (stream_node_first/next), and RESTORE can hand one back to the builder (stream_build_*),
 * which validates it as untrusted input. A new node starts when the tail node reaches
 * storage_params.stream_node_max_bytes or stream_node_max_entries (Redis's
 * stream-node-max-bytes, stream-node-max-entries).
 *
 * Consumer groups hold a last-delivered id, an entries-read counter, a pending entries list
 * (PEL: id -> stream_nack_t) and consumers (name -> stream_consumer_t, each with its own PEL
 * sharing the group's nacks). Groups and consumers are kept sorted by name bytewise, shorter
 * first on a common prefix (the order of Redis's radix trees, which XINFO replies show).
 *
 * Storage knows no clock: callers pass "now" (Unix ms) where a time is recorded. Views
 * (field and value pointers of an iterator, names) stay valid until the stream changes.
 * Nothing fails except by aborting on out-of-memory, but for the documented error returns.
 * Loop thread only. */
#ifndef CTE_STORAGE_T_STREAM_H
#define CTE_STORAGE_T_STREAM_H

#include "storage/object.h"

#include <stddef.h>
#include <stdint.h>

typedef struct stream_id {
    uint64_t ms;
    uint64_t seq;
} stream_id_t;

/* -1, 0, 1 as a is smaller, equal or larger than b. */
int stream_id_cmp(const stream_id_t *a, const stream_id_t *b);
/* The next / previous id; -1 (id unchanged) past UINT64_MAX-UINT64_MAX / before 0-0. */
int stream_id_incr(stream_id_t *id);
int stream_id_decr(stream_id_t *id);
/* Writes "<ms>-<seq>" into buf (at least STREAM_ID_STR bytes), returns its length (no NUL). */
#define STREAM_ID_STR 44
size_t stream_id_fmt(char *buf, const stream_id_t *id);
/* Parses "<ms>-<seq>", "<ms>" (seq = missing_seq), "-" and "+" (unless strict), and with
 * seq_given not NULL "<ms>-*" (*seq_given 0). Returns 0, or -1 on a malformed id. As Redis's
 * streamGenericParseIDOrReply. */
int stream_id_parse(const char *s, size_t len, stream_id_t *id, uint64_t missing_seq,
                    int strict, int *seq_given);

/* ---- an ordered index from ids to pointers (nodes, PELs) ---- */
typedef struct stream_idx_node {
    stream_id_t id;
    void *val;
    struct stream_idx_node *prev; /* NULL for the first */
    int level;
    struct stream_idx_node *next[]; /* next[0] is the following node, NULL for the last */
} stream_idx_node_t;

typedef struct stream_idx {
    stream_idx_node_t *head; /* sentinel */
    stream_idx_node_t *tail;
    size_t n;
    int level;
} stream_idx_t;

static inline size_t stream_idx_size(const stream_idx_t *x)
{
    return x->n;
}
stream_idx_node_t *stream_idx_first(const stream_idx_t *x);
static inline stream_idx_node_t *stream_idx_last(const stream_idx_t *x)
{
    return x->tail;
}
static inline stream_idx_node_t *stream_idx_next(const stream_idx_node_t *n)
{
    return n->next[0];
}
/* The node with exactly id, or NULL. */
stream_idx_node_t *stream_idx_find(const stream_idx_t *x, const stream_id_t *id);
/* The first node >= id, or NULL. */
stream_idx_node_t *stream_idx_seek_ge(const stream_idx_t *x, const stream_id_t *id);
/* The last node <= id, or NULL. */
stream_idx_node_t *stream_idx_seek_le(const stream_idx_t *x, const stream_id_t *id);

/* ---- consumer groups ---- */
typedef struct stream_consumer stream_consumer_t;

typedef struct stream_nack {
    long long delivery_time; /* Unix ms of the last delivery */
    uint64_t delivery_count;
    stream_consumer_t *consumer; /* owner; never NULL in a finished stream */
} stream_nack_t;

struct stream_consumer {
    char *name; /* NUL-terminated copy; namelen bytes */
    size_t namelen;
    long long seen_time; /* Unix ms */
    stream_idx_t pel;    /* id -> stream_nack_t * (shared with the group's PEL) */
};

#define STREAM_ENTRIES_READ_INVALID -1

typedef struct stream_cg {
    char *name;
    size_t namelen;
    stream_id_t last_id;
    long long entries_read; /* or STREAM_ENTRIES_READ_INVALID */
    stream_idx_t pel;       /* id -> stream_nack_t * (owned) */
    stream_consumer_t **consumers; /* sorted by name */
    size_t nconsumers, capconsumers;
} stream_cg_t;

/* ---- the stream ---- */
typedef struct stream {
    obj_t h;
    stream_idx_t nodes; /* master id -> node listpack (unsigned char *) */
    uint64_t length;
    stream_id_t last_id;
    stream_id_t first_id; /* first live entry, 0-0 when empty */
    stream_id_t max_deleted_id;
    uint64_t entries_added;
    stream_cg_t **groups; /* sorted by name */
    size_t ngroups, capgroups;
} stream_t;

/* A new empty stream. Owned by the caller (then the keyspace): stream_free. */
stream_t *stream_new(void);
void stream_free(stream_t *s);
/* A deep copy: nodes, metadata, groups, PELs and consumers (COPY). */
stream_t *stream_dup(const stream_t *s);
size_t stream_memory(const stream_t *s);
/* The node count of the radix tree Redis would hold for these nodes (XINFO STREAM's
 * radix-tree-nodes), computed from the master ids. */
uint64_t stream_rax_nodes(const stream_t *s);

/* One field or value handed to stream_append. */
typedef struct stream_str {
    const char *ptr;
    size_t len;
} stream_str_t;

#define STREAM_ERR_ID -1    /* the id is not above the stream's last id */
#define STREAM_ERR_RANGE -2 /* the fields are too large for a node */

/* Appends an entry of npairs field-value pairs (fv[0], fv[1], ... alternating) as Redis's
 * streamAppendItem: with use_id NULL the id is generated from now_ms and the last id; with
 * use_id and seq_given 0 only its ms is taken. Returns 0 and *added, or STREAM_ERR_ID /
 * STREAM_ERR_RANGE (nothing changed). */
int stream_append(stream_t *s, const stream_str_t *fv, size_t npairs, const stream_id_t *use_id,
                  int seq_given, long long now_ms, stream_id_t *added);

enum stream_trim_strategy { STREAM_TRIM_NONE, STREAM_TRIM_MAXLEN, STREAM_TRIM_MINID };
typedef struct stream_trim_args {
    int strategy;
    int approx;         /* only whole nodes */
    long long limit;    /* most entries removed, 0: no limit */
    long long maxlen;   /* MAXLEN */
    stream_id_t minid;  /* MINID */
} stream_trim_args_t;
/* Trims from the head as Redis's streamTrim. Returns the number of entries removed. */
int64_t stream_trim(stream_t *s, const stream_trim_args_t *a);
/* Deletes the entry id (marks it deleted; a node left empty goes). 1 if it existed.
 * Does not touch first_id / max_deleted_id (XDEL does, as Redis's does). */
int stream_delete(stream_t *s, const stream_id_t *id);
/* 1 if a live entry has exactly this id. */
int stream_entry_exists(const stream_t *s, const stream_id_t *id);
/* The first or last entry id, tombstones included or not; when none, UINT64_MAX-UINT64_MAX
 * for first and 0-0 for last (as Redis's streamGetEdgeID). */
void stream_edge_id(const stream_t *s, int first, int skip_tombstones, stream_id_t *out);

/* ---- iteration ---- */
typedef struct stream_iter {
    const stream_t *s;
    stream_idx_node_t *node;
    unsigned char *lp, *ele, *flags_at, *master_fields, *master_ptr;
    stream_id_t master_id, start, end;
    int64_t master_count;
    int entry_flags;
    int rev, skip_tombstones, started;
    char fbuf[24], vbuf[24];
} stream_iter_t;
/* Entries from start to end inclusive (NULL: the edges), forward or reversed. */
void stream_iter_start(stream_iter_t *it, const stream_t *s, const stream_id_t *start,
                       const stream_id_t *end, int rev);
/* 1 with the next entry's id and field count, 0 at the end. */
int stream_iter_next(stream_iter_t *it, stream_id_t *id, int64_t *nfields);
/* The next field and value of the current entry (call nfields times). */
void stream_iter_field(stream_iter_t *it, const char **f, size_t *flen, const char **v,
                       size_t *vlen);

/* ---- groups and consumers ---- */
/* The group called name, or NULL. */
stream_cg_t *stream_cg_find(const stream_t *s, const char *name, size_t len);
/* A new group, or NULL if one has that name. */
stream_cg_t *stream_cg_create(stream_t *s, const char *name, size_t len, const stream_id_t *id,
                              long long entries_read);
/* Removes and frees cg with its PEL and consumers. */
void stream_cg_destroy(stream_t *s, stream_cg_t *cg);
/* The consumer called name, or NULL. */
stream_consumer_t *stream_consumer_find(const stream_cg_t *cg, const char *name, size_t len);
/* A new consumer seen at now_ms, or NULL if one has that name. */
stream_consumer_t *stream_consumer_create(stream_cg_t *cg, const char *name, size_t len,
                                          long long now_ms);
/* Deletes consumer and its pending entries from the group's PEL. */
void stream_consumer_delete(stream_cg_t *cg, stream_consumer_t *consumer);

/* The group's pending entry id, or NULL. */
stream_nack_t *stream_pel_find(const stream_cg_t *cg, const stream_id_t *id);
/* Records a delivery of id to consumer (XREADGROUP): a new nack, or an existing one moved to
 * consumer with count 1. Returns the nack. */
stream_nack_t *stream_pel_deliver(stream_cg_t *cg, stream_consumer_t *consumer,
                                  const stream_id_t *id, long long now_ms);
/* A new nack for id with no owner yet (XCLAIM FORCE); stream_nack_assign gives it one. */
stream_nack_t *stream_pel_add_unowned(stream_cg_t *cg, const stream_id_t *id);
/* Moves the nack of id to consumer (nothing if it owns it already). */
void stream_nack_assign(stream_cg_t *cg, stream_nack_t *nack, const stream_id_t *id,
                        stream_consumer_t *consumer);
/* Removes id from the group's and its owner's PEL. 1 if it was pending. */
int stream_pel_ack(stream_cg_t *cg, const stream_id_t *id);

/* Redis's streamEstimateDistanceFromFirstEverEntry: the read counter of id, or
 * STREAM_ENTRIES_READ_INVALID. */
long long stream_estimate_distance(const stream_t *s, const stream_id_t *id);
/* 1 if [start, end] (NULL: edge) may contain a deleted entry (Redis's
 * streamRangeHasTombstones). */
int stream_range_has_tombstones(const stream_t *s, const stream_id_t *start,
                                const stream_id_t *end);
/* The group's lag: 1 and *lag when known, 0 when it cannot be computed (reply null). */
int stream_cg_lag(const stream_t *s, const stream_cg_t *cg, long long *lag);
/* Advances cg past id, delivered now (last id and entries read, as Redis's
 * streamReplyWithRange). Returns 1 if the last id moved. */
int stream_cg_advance(const stream_t *s, stream_cg_t *cg, const stream_id_t *id);

/* ---- for DUMP/RESTORE and the AOF rewrite ----
 * Nodes: for (n = stream_idx_first(&s->nodes); n; n = stream_idx_next(n)): n->id is the
 * master id, n->val the listpack (lp_bytes() bytes, Redis's layout). Metadata: the fields of
 * stream_t (length, last_id, first_id, max_deleted_id, entries_added). Groups: s->groups[i]
 * (name, last_id, entries_read); its PEL: cg->pel, ids to stream_nack_t (delivery_time,
 * delivery_count, consumer); consumers: cg->consumers[j] (name, seen_time, pel of ids). */

/* The builder: start from stream_new(), then add in this order. Every call validates what it
 * gets (the data may come from a hostile payload) and returns 0, or -1 with a static message
 * in *err, leaving s safe to stream_free(). */
/* A node: size bytes at lp, copied. Its listpack and stream layout are checked in full; its
 * master id (and so each of its entries) must lie after the previous node's last entry. */
int stream_build_node(stream_t *s, const stream_id_t *master, const unsigned char *lp,
                      size_t size, const char **err);
/* The metadata, after the nodes: length must equal the live entries counted. */
int stream_build_meta(stream_t *s, uint64_t length, const stream_id_t *last_id,
                      const stream_id_t *first_id, const stream_id_t *max_deleted_id,
                      uint64_t entries_added, const char **err);
/* A group (unique name). */
int stream_build_group(stream_t *s, const char *name, size_t len, const stream_id_t *last_id,
                       long long entries_read, stream_cg_t **out, const char **err);
/* A pending entry of the group, without owner yet (ids unique). */
int stream_build_pel(stream_cg_t *cg, const stream_id_t *id, long long delivery_time,
                     uint64_t delivery_count, const char **err);
/* A consumer of the group (unique name). */
int stream_build_consumer(stream_cg_t *cg, const char *name, size_t len, long long seen_time,
                          stream_consumer_t **out, const char **err);
/* Gives a pending entry (added with stream_build_pel, not owned yet) to the consumer. */
int stream_build_claim(stream_cg_t *cg, stream_consumer_t *consumer, const stream_id_t *id,
                       const char **err);
/* Checks the whole: every pending entry has an owner. */
int stream_build_finish(stream_t *s, const char **err);

#endif
