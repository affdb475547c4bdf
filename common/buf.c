/* buf.c - growable byte buffer. Invariant: cap == 0 or data[len] == '\0'. */
#include "common/buf.h"

#include "common/alloc.h"

#include <stdio.h>

void buf_init(buf_t *b)
{
    b->data = NULL;
    b->len = b->cap = 0;
}

void buf_deinit(buf_t *b)
{
    xfree(b->data);
    buf_init(b);
}

/* Doubling up to 64 MiB, then steps of half the size: appending n bytes in pieces costs O(n)
 * copying overall (steps of a fixed size would make many large replies quadratic). */
static size_t grown(const buf_t *b, size_t need)
{
    size_t cap = b->cap ? b->cap : 64;
    while (cap < need) cap = cap < (64u << 20) ? cap * 2 : cap + cap / 2;
    return cap;
}

int buf_try_reserve(buf_t *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return 0;
    size_t cap = grown(b, need);
    char *p = try_realloc(b->data, cap);
    if (!p) return -1;
    b->data = p;
    b->cap = alloc_size(p);
    b->data[b->len] = '\0';
    return 0;
}

void buf_reserve(buf_t *b, size_t extra)
{
    size_t need = b->len + extra + 1;
    if (need <= b->cap) return;
    b->data = xrealloc(b->data, grown(b, need));
    b->cap = alloc_size(b->data);
    b->data[b->len] = '\0';
}

void buf_append(buf_t *b, const void *p, size_t n)
{
    buf_reserve(b, n);
    if (n) memcpy(b->data + b->len, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void buf_append_str(buf_t *b, const char *s)
{
    buf_append(b, s, strlen(s));
}

void buf_vprintf(buf_t *b, const char *fmt, va_list ap)
{
    va_list cp;
    va_copy(cp, ap);
    buf_reserve(b, 64);
    int n = vsnprintf(b->data + b->len, b->cap - b->len, fmt, cp);
    va_end(cp);
    if (n < 0) return;
    if ((size_t)n >= b->cap - b->len) {
        buf_reserve(b, (size_t)n);
        vsnprintf(b->data + b->len, b->cap - b->len, fmt, ap);
    }
    b->len += (size_t)n;
}

void buf_printf(buf_t *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    buf_vprintf(b, fmt, ap);
    va_end(ap);
}

void buf_insert(buf_t *b, size_t off, const void *p, size_t n)
{
    buf_reserve(b, n);
    memmove(b->data + off + n, b->data + off, b->len - off);
    memcpy(b->data + off, p, n);
    b->len += n;
    b->data[b->len] = '\0';
}

void buf_consume(buf_t *b, size_t n)
{
    if (n >= b->len) {
        buf_clear(b);
        return;
    }
    memmove(b->data, b->data + n, b->len - n);
    b->len -= n;
    b->data[b->len] = '\0';
}

void buf_shrink(buf_t *b, size_t keep)
{
    if (b->cap <= keep) return;
    if (b->len == 0) {
        buf_deinit(b);
        return;
    }
    if (b->len + 1 > keep) return;
    b->data = xrealloc(b->data, keep);
    b->cap = alloc_size(b->data);
}
