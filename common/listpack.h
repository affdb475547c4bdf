/* listpack.h - Redis 7.0's listpack, byte for byte.
 *
 * A listpack is one allocation holding a sequence of entries, each a string or a 64-bit
 * integer. The bytes are exactly Redis's (listpack.c, format version 1), so a listpack built
 * here can be written into a DUMP payload or an RDB file as it is, and one read from them can
 * be walked here after lp_validate(). Streams keep their nodes in this format for that reason.
 *
 * Layout (all integers little endian):
 *
 *   offset  size  field
 *   0       4     total bytes of the listpack, header and terminator included
 *   4       2     number of entries, or 65535 when there are 65535 or more (then counted by
 *                 walking)
 *   6       ...   entries: encoding byte(s), data, backlen
 *   end-1   1     0xFF terminator
 *
 * Entry encodings (first byte):
 *   0xxxxxxx                 integer 0..127
 *   10xxxxxx                 string of up to 63 bytes, length in the 6 bits
 *   110xxxxx yyyyyyyy        13-bit signed integer (-4096..4095)
 *   1110xxxx yyyyyyyy        string of up to 4095 bytes, 12-bit length
 *   11110000 + 4 bytes       string, 32-bit length
 *   11110001/2/3/4 + 2/3/4/8 bytes   16/24/32/64-bit signed integer
 * backlen: the size of encoding + data, 1 to 5 bytes, 7 bits per byte, written so that it can
 * be read from its last byte backwards (a byte with the high bit set continues to the left).
 * A string that is a canonical int64 (as Redis's string2ll: no sign '+', no leading zeros, at
 * most 20 characters) is stored as an integer, as Redis does.
 *
 * Entry pointers (unsigned char *) point into the listpack and stay valid until the next call
 * that may move it (every function that returns a new listpack pointer). Functions that return
 * a listpack may reallocate it: use the returned pointer. Allocation aborts on OOM (xmalloc);
 * callers check client-controlled sizes first. Not thread-safe per listpack; no global state. */
#ifndef CTE_COMMON_LISTPACK_H
#define CTE_COMMON_LISTPACK_H

#include <stddef.h>
#include <stdint.h>

#define LP_HDR_SIZE 6
#define LP_EOF 0xFF
/* Largest entry lp_append() accepts (the 32-bit string length). */
#define LP_MAX_STRING ((size_t)UINT32_MAX - 16)

/* A new empty listpack (7 bytes) with room for capacity bytes. Owned by the caller: lp_free(). */
unsigned char *lp_new(size_t capacity);
void lp_free(unsigned char *lp);

/* Total bytes (header field). */
size_t lp_bytes(const unsigned char *lp);
/* Number of entries: the header field, or a walk when it says 65535. */
uint32_t lp_length(const unsigned char *lp);

/* Appends a string (stored as an integer when it is a canonical int64). */
unsigned char *lp_append(unsigned char *lp, const void *s, size_t len);
/* Appends an integer. */
unsigned char *lp_append_int(unsigned char *lp, long long v);
/* Inserts a string before the entry p (p may point at the terminator: appends). *newp, when
 * not NULL, receives the inserted entry's position in the returned listpack. */
unsigned char *lp_insert(unsigned char *lp, unsigned char *p, const void *s, size_t len,
                         unsigned char **newp);
unsigned char *lp_insert_int(unsigned char *lp, unsigned char *p, long long v,
                             unsigned char **newp);
/* Replaces the entry p with a string / an integer; *newp as for lp_insert. */
unsigned char *lp_replace(unsigned char *lp, unsigned char *p, const void *s, size_t len,
                          unsigned char **newp);
unsigned char *lp_replace_int(unsigned char *lp, unsigned char *p, long long v,
                              unsigned char **newp);
/* Deletes count entries starting at p (fewer if the listpack ends first); *nextp, when not
 * NULL, receives the entry that followed them in the returned listpack, or NULL when they
 * ran to the end. */
unsigned char *lp_delete(unsigned char *lp, unsigned char *p, uint32_t count,
                         unsigned char **nextp);

/* Iteration: each returns an entry pointer, or NULL past either end. */
unsigned char *lp_first(unsigned char *lp);
unsigned char *lp_last(unsigned char *lp);
unsigned char *lp_next(unsigned char *lp, unsigned char *p);
unsigned char *lp_prev(unsigned char *lp, unsigned char *p);
/* The entry at index (negative counts from the end, -1 the last), or NULL out of range. */
unsigned char *lp_seek(unsigned char *lp, long index);

/* Reads entry p: a string returns a pointer to its bytes (valid as long as p) and sets *len;
 * an integer returns NULL and sets *ival. */
const unsigned char *lp_get(const unsigned char *p, uint32_t *len, long long *ival);
/* Reads entry p as text: strings as they are, integers formatted into buf (at least 21
 * bytes). Returns the bytes, *len their count. */
const unsigned char *lp_get_text(const unsigned char *p, uint32_t *len, char *buf);
/* 1 if entry p holds exactly the string s[0..len) (an integer entry compares as its decimal
 * text), else 0. */
int lp_equals(const unsigned char *p, const void *s, size_t len);
/* Size in bytes of entry p: encoding, data and backlen. */
size_t lp_entry_size(const unsigned char *p);

/* Checks that size bytes at lp form a well-formed listpack: header total equals size, every
 * entry's encoding, lengths and backlen stay inside the buffer and agree, the terminator is in
 * place, and the entry count matches the header (unless 65535). Safe on hostile input; never
 * reads outside lp[0..size). count, when not NULL, receives the number of entries. Returns 1
 * if valid, 0 if not. */
int lp_validate(const unsigned char *lp, size_t size, uint32_t *count);

#endif
