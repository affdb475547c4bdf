/* t_list.h - lists: sequences of byte strings with O(1) push and pop at both ends.
 *
 * One encoding, as Redis 7.0 has, and OBJECT ENCODING calls it "quicklist": a doubly linked
 * list of nodes, each one allocation holding a packed run of entries (the layout is drawn in
 * t_list.c). How many entries a node may hold follows storage_params.list_max_listpack_size as
 * Redis reads list-max-listpack-size: -1..-5 bound a node to 4, 8, 16, 32 or 64 KiB of entries,
 * a positive N to N entries (and at most 8 KiB); the value is taken when the list is created.
 * An element larger than the bound gets a node of its own.
 *
 * Indexes are 0-based from the head; negative indexes count from the tail (-1 is the last).
 * "where" is LIST_HEAD (left) or LIST_TAIL (right).
 *
 * Views: a list_entry_t points into the list (or, for an entry stored as an integer, into the
 * list_entry_t itself: do not copy one, and read it before its next reuse). It stays valid until
 * the next change to that list. Functions that take element bytes copy them.
 *
 * Failure: functions that store a new element return -1 (and change nothing) when memory for
 * an element too large to share a node is short; everything else aborts on out-of-memory like
 * xmalloc. Loop thread only. */
#ifndef CTE_STORAGE_T_LIST_H
#define CTE_STORAGE_T_LIST_H

#include "storage/object.h"

#include <stddef.h>
#include <stdint.h>

enum list_where { LIST_HEAD = 0, LIST_TAIL = 1 };

/* The longest element a list stores (entry lengths are 32-bit), as Redis's LIST_MAX_ITEM_SIZE. */
#define LIST_MAX_ELEMENT ((size_t)UINT32_MAX - 1024)

/* A list value. It starts with obj_t, so a keyspace value of type OBJ_LIST converts with
 * list_of() and list_obj(). Opaque. */
typedef struct list list_t;

/* One element: p[0..len). See "Views" above. */
typedef struct list_entry {
    const char *p;
    size_t len;
    char buf[24]; /* the digits of an entry stored as an integer */
} list_entry_t;

/* An element prepared for repeated comparison (LREM, LINSERT, LPOS): its encoded form, so a
 * comparison is one memcmp and integers are never formatted. The bytes passed to
 * list_needle_init must outlive the needle. */
typedef struct list_needle {
    unsigned char hdr[12];
    uint8_t hlen;
    const unsigned char *data;
    size_t dlen;
} list_needle_t;

/* An iterator: fields are private. Changing the list invalidates it. */
typedef struct list_iter {
    const void *node;
    uint32_t pos;    /* forward: start of the next entry; backward: end of the next entry */
    uint32_t left;   /* entries of node still to visit */
    int dir;         /* LIST_TAIL: towards the tail; LIST_HEAD: towards the head */
    long long index; /* index of the entry the last call returned */
} list_iter_t;

static inline list_t *list_of(obj_t *o)
{
    return (list_t *)o;
}
static inline obj_t *list_obj(list_t *l)
{
    return (obj_t *)l;
}

/* ---- lifecycle, registered in obj_types[OBJ_LIST] ---- */

/* A new empty list, with the node bound of storage_params now. The caller adds at least one
 * element before storing it: an empty list never lives in the keyspace. */
list_t *list_new(void);
void list_free(list_t *l);
list_t *list_dup(const list_t *l);
size_t list_len(const list_t *l);
/* Bytes held: the list header and every node block (allocator sizes). */
size_t list_memory(const list_t *l);

/* ---- both ends ---- */

/* Adds p[0..len) (len <= LIST_MAX_ELEMENT) at where. 0, or -1 on out-of-memory. */
int list_push(list_t *l, int where, const void *p, size_t len);
/* The element at where: 1 and *e, or 0 if the list is empty. */
int list_peek(const list_t *l, int where, list_entry_t *e);
/* Removes n elements at where (n <= length). */
void list_drop(list_t *l, int where, size_t n);
/* Removes the element at where and returns a copy (xmalloc'd, NUL-terminated, the caller frees
 * it) with its length in *len; NULL if the list is empty. */
char *list_pop(list_t *l, int where, size_t *len);

/* ---- by index ---- */

/* The element at index: 1 and *e, or 0 if index is out of range. */
int list_index(const list_t *l, long long index, list_entry_t *e);
/* Replaces the element at index: 1, 0 if out of range, -1 on out-of-memory (unchanged). */
int list_set(list_t *l, long long index, const void *p, size_t len);
/* Removes n elements from start on; start >= 0 and start + n <= length. */
void list_del_range(list_t *l, size_t start, size_t n);

/* ---- by value ---- */

void list_needle_init(list_needle_t *n, const void *p, size_t len);
/* Inserts p[0..len) before (after = 0) or after the first element equal to pivot, from the
 * head. 1 if inserted, 0 if there is no such element, -1 on out-of-memory (unchanged). */
int list_insert(list_t *l, const list_needle_t *pivot, int after, const void *p, size_t len);
/* Removes elements equal to n: count > 0 the first count from the head, count < 0 the first
 * -count from the tail, 0 all. Returns how many were removed. */
long long list_remove(list_t *l, const list_needle_t *n, long long count);

/* ---- iteration ---- */

/* Starts at index start (negative counts from the tail) and walks towards dir. An index out
 * of range gives an iterator that returns nothing. */
void list_iter_init(list_iter_t *it, const list_t *l, long long start, int dir);
/* The next element: 1 and *e (it->index is its index), or 0 at the end. */
int list_iter_next(list_iter_t *it, list_entry_t *e);
/* Steps over the next element: 1 if it equals n, 0 if not, -1 at the end (it->index is the
 * index of the element stepped over). */
int list_iter_match(list_iter_t *it, const list_needle_t *n);

/* ---- for tests ---- */

/* Number of nodes. */
size_t list_node_count(const list_t *l);
/* Checks every invariant (links, counts, sizes, entry encodings, node bounds); returns 0 or a
 * negative line-specific code. */
int list_verify(const list_t *l);

#endif
