/* dataset.h - libcte's datasets: N-dimensional arrays stored as chunked blobs in a tag, the
 * part of an HDF5-like layer that checkpoints need (docs/libcte.md, "Datasets").
 *
 * A dataset has a name, an element type, a shape (rank 1 to CTE_DATASET_MAX_RANK) and a chunk
 * shape. Inside its tag it is stored as:
 *     <name>/meta                       the metadata: type, shape, chunking, attributes (text)
 *     <name>/c.<i0>.<i1>...             one blob per chunk, i_k the chunk's index in dimension k
 * A chunk blob holds the chunk's elements in row-major (C) order, in the host's byte order
 * (recorded in the metadata: opening it on a host of the other order fails), over the chunk's
 * extent clipped at the dataset's edge: the last chunk of a dimension that the chunk shape
 * does not divide is smaller. Elements never written read as zeros.
 *
 * Writes are asynchronous. cte_dataset_write copies the hyperslab's elements out of the
 * caller's buffer chunk by chunk (over shm straight into the connection's request data area:
 * the only client-side copy) and queues one TPUT per chunk, or per contiguous run of a chunk
 * the hyperslab covers only partly (at its offset in the chunk blob), at the caller's score.
 * The caller's buffer may be changed or freed as soon as the call returns, and the puts are
 * in the server's hands by then (sent, not left batched in the connection), so they are
 * stored while the caller computes. At most
 * `max_inflight` bytes of queued puts are unanswered at a time (cte_dataset_set_max_inflight,
 * default 256 MiB): a write that would exceed it first waits for replies. cte_dataset_wait
 * waits for every queued put and returns the first failure among them.
 *
 * Threads. A dataset belongs to its connection: use it on the thread that owns the connection,
 * never from a completion callback. The connection must outlive it. Writes of a dataset
 * complete through the connection, so any call that drives it (cte_wait_all, a synchronous
 * call) also completes them.
 *
 * Status as in cte.h: 0, -errno, or CTE_E_*; cte_conn_errmsg(c) describes the last failure
 * (e.g. "dataset 'u': hyperslab [0,+300) exceeds dimension 0 of size 256"). */
#ifndef CTE_DATASET_H
#define CTE_DATASET_H

#include <cte/cte.h>

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CTE_DATASET_MAX_RANK 8
/* A dataset name is at most this many bytes (its blob names add a suffix). */
#define CTE_DATASET_NAME_MAX 200

/* ---- element types: X(enum, name in the metadata, bytes) ---- */
#define CTE_DTYPES(X)                                                                              \
    X(CTE_INT8, "int8", 1)                                                                         \
    X(CTE_UINT8, "uint8", 1)                                                                       \
    X(CTE_INT16, "int16", 2)                                                                       \
    X(CTE_UINT16, "uint16", 2)                                                                     \
    X(CTE_INT32, "int32", 4)                                                                       \
    X(CTE_UINT32, "uint32", 4)                                                                     \
    X(CTE_INT64, "int64", 8)                                                                       \
    X(CTE_UINT64, "uint64", 8)                                                                     \
    X(CTE_FLOAT32, "float32", 4)                                                                   \
    X(CTE_FLOAT64, "float64", 8)

typedef enum cte_dtype {
#define CTE_X_DTYPE(e, name, size) e,
    CTE_DTYPES(CTE_X_DTYPE)
#undef CTE_X_DTYPE
        CTE_DTYPE_COUNT
} cte_dtype_t;

/* The type's name ("float64") and size in bytes; NULL and 0 for a value out of range. */
const char *cte_dtype_name(cte_dtype_t t);
size_t cte_dtype_size(cte_dtype_t t);
/* The type named name: 0 and *t set, or CTE_E_INVAL. */
int cte_dtype_parse(const char *name, cte_dtype_t *t);

/* ---- datasets ---- */
typedef struct cte_dataset cte_dataset_t;

/* Creates dataset name in tag: writes its metadata blob (synchronously; score 1.0). shape and
 * chunk have rank entries, all >= 1, and a chunk is at most 1 GiB. If a dataset of that name
 * exists with the same type, shape and chunk shape, it is opened instead (its chunks and
 * attributes kept); with another layout the call fails with CTE_E_EXISTS. On success *out is
 * the caller's (cte_dataset_close); on failure *out is NULL. */
int cte_dataset_create(cte_conn_t *c, const char *tag, const char *name, cte_dtype_t type, int rank,
                       const uint64_t *shape, const uint64_t *chunk, cte_dataset_t **out);
/* Opens an existing dataset (reads its metadata): CTE_E_NOTFOUND when there is none,
 * CTE_E_FORMAT when its metadata does not parse. *out as for create. */
int cte_dataset_open(cte_conn_t *c, const char *tag, const char *name, cte_dataset_t **out);
/* Waits for d's writes (as cte_dataset_wait, whose status it returns) and frees d; NULL: 0. */
int cte_dataset_close(cte_dataset_t *d);
/* Deletes a dataset: its chunk blobs and its metadata. CTE_E_NOTFOUND when it does not exist. */
int cte_dataset_delete(cte_conn_t *c, const char *tag, const char *name);
/* The names of the datasets of tag, sorted: *names is a NULL-terminated array the caller frees
 * with one free() (the strings live inside it); *n (may be NULL) gets their number. A tag
 * that does not exist has none. */
int cte_dataset_list(cte_conn_t *c, const char *tag, char ***names, size_t *n);

/* Layout accessors: never fail; the pointers live as long as d. */
cte_dtype_t cte_dataset_type(const cte_dataset_t *d);
int cte_dataset_rank(const cte_dataset_t *d);
const uint64_t *cte_dataset_shape(const cte_dataset_t *d);
const uint64_t *cte_dataset_chunk(const cte_dataset_t *d);
/* Bytes of the whole dataset (product of the shape times the element size). */
uint64_t cte_dataset_bytes(const cte_dataset_t *d);

/* Queues the write of the hyperslab start[0..rank) + count[0..rank) from buf, which holds
 * product(count) elements in row-major order. Each chunk (or run) becomes a TPUT at score
 * (< 0: none, the server's default placement; else at most 1). Returns 0 when everything is
 * queued and sent, CTE_E_INVAL when the hyperslab leaves the shape (nothing is queued), or a
 * failure
 * (then some chunks may have been queued; cte_dataset_wait still waits for them). A count
 * with a 0 entry writes nothing. */
int cte_dataset_write(cte_dataset_t *d, const uint64_t *start, const uint64_t *count,
                      const void *buf, double score);
/* Waits until every write queued on d has been answered. Returns 0, or the first failure of
 * any of them since the last cte_dataset_wait (CTE_E_SERVER: cte_conn_errmsg has the server's
 * message, e.g. "OOM ..."), which it then clears. */
int cte_dataset_wait(cte_dataset_t *d);
/* Bytes of d's puts queued and not yet answered. */
uint64_t cte_dataset_inflight(const cte_dataset_t *d);
/* Flow control: at most n (>= 1) bytes in flight (see top); CTE_E_INVAL for 0. A single chunk
 * larger than n is still sent, alone. */
int cte_dataset_set_max_inflight(cte_dataset_t *d, uint64_t n);

/* Reads the hyperslab into buf (product(count) elements, row-major), waiting for d's writes
 * first. Chunks are fetched with up to the connection's window of requests in flight.
 * CTE_E_INVAL when the hyperslab leaves the shape; CTE_E_FORMAT when a chunk blob is longer
 * than its extent. */
int cte_dataset_read(cte_dataset_t *d, const uint64_t *start, const uint64_t *count, void *buf);

/* Attributes: key/value strings kept in the metadata blob. set replaces key's value (value
 * NULL removes it) and rewrites the metadata synchronously. Keys are 1 to 255 bytes without
 * NUL; values up to 64 KiB without NUL. */
int cte_dataset_set_attr(cte_dataset_t *d, const char *key, const char *value);
/* key's value (owned by d, valid until the next set_attr on d or its close), or NULL. */
const char *cte_dataset_attr(const cte_dataset_t *d, const char *key);
/* The number of attributes and the i-th key/value (NULL when i is out of range), in the
 * order they were first set. */
size_t cte_dataset_attr_count(const cte_dataset_t *d);
const char *cte_dataset_attr_key(const cte_dataset_t *d, size_t i);

#ifdef __cplusplus
}
#endif
#endif
