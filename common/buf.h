/* buf.h - a growable byte buffer (query buffers, reply buffers, AOF staging).
 *
 * A buf_t is embedded by its owner (buf_init/buf_deinit). data[len] is always a NUL when
 * cap > 0, so a buffer can be handed to functions that want a C string. Growth doubles up
 * to 64 MiB, then grows by half. Appends abort on out-of-memory (xrealloc). */
#ifndef CTE_COMMON_BUF_H
#define CTE_COMMON_BUF_H

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

typedef struct buf {
    char *data;
    size_t len;
    size_t cap;
} buf_t;

void buf_init(buf_t *b);
void buf_deinit(buf_t *b);
/* Makes room for at least extra more bytes past len (plus the NUL). */
void buf_reserve(buf_t *b, size_t extra);
/* Like buf_reserve, but returns -1 (and leaves b as it was) if memory is short. */
int buf_try_reserve(buf_t *b, size_t extra);
void buf_append(buf_t *b, const void *p, size_t n);
void buf_append_str(buf_t *b, const char *s);
void buf_printf(buf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vprintf(buf_t *b, const char *fmt, va_list ap);
/* Inserts n bytes at offset off (<= len), moving the tail right. */
void buf_insert(buf_t *b, size_t off, const void *p, size_t n);
/* Drops the first n bytes (n <= len). */
void buf_consume(buf_t *b, size_t n);
static inline void buf_clear(buf_t *b)
{
    b->len = 0;
    if (b->cap) b->data[0] = '\0';
}
/* Releases memory beyond what len needs when cap exceeds keep bytes. */
void buf_shrink(buf_t *b, size_t keep);

static inline void buf_push(buf_t *b, char ch)
{
    if (b->len + 2 > b->cap) buf_reserve(b, 1);
    b->data[b->len++] = ch;
    b->data[b->len] = '\0';
}

#endif
