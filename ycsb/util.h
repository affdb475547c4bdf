/* util.h - what every file of cte-ycsb needs: allocation that aborts on out-of-memory (for our
 * own small structures; sizes a user chooses are allocated with plain malloc and checked),
 * error messages into caller buffers, and the monotonic clock. */
#ifndef YCSB_UTIL_H
#define YCSB_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* A caller's buffer for an error message: functions that fail with -EINVAL write why here. */
typedef struct util_err {
    char msg[512];
} util_err_t;

/* printf into e->msg (truncated to fit); returns -EINVAL so callers can `return util_fail(..)`. */
int util_fail(util_err_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* malloc / calloc / realloc / strdup that print and abort when memory runs out. */
void *util_xmalloc(size_t n);
void *util_xcalloc(size_t n, size_t size);
void *util_xrealloc(void *p, size_t n);
char *util_xstrdup(const char *s);

/* CLOCK_MONOTONIC in nanoseconds (System.nanoTime) and CLOCK_REALTIME in milliseconds. */
int64_t util_now_ns(void);
int64_t util_wall_ms(void);
/* Sleeps until the monotonic clock reads deadline_ns (returns at once if it passed). */
void util_sleep_until(int64_t deadline_ns);

#endif
