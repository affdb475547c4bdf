/* status.h - the project's status codes, one table for every module.
 *
 * A function that can fail returns an int: 0 (ST_OK) on success, -errno for a system error
 * taken at the syscall, or one of the codes below. Codes that say "not done yet" (a plan must
 * run, wait and retry, no such item) are positive; failures are negative and lie below
 * -ST_ERRNO_MAX, so they never collide with -errno. status_str() names any of them. */
#ifndef CTE_COMMON_STATUS_H
#define CTE_COMMON_STATUS_H

/* Linux keeps errno values below 4096 (MAX_ERRNO). */
#define ST_ERRNO_MAX 4095

/* X(name, value, text) */
#define ST_TABLE(X)                                                                                \
    X(ST_PENDING, 1, "a plan must run before the result is complete")                              \
    X(ST_MISSING, 2, "no such item")                                                               \
    X(ST_BUSY, 3, "busy with I/O in flight: wait and retry")                                       \
    X(ST_NOSPACE, 4, "room is being made: wait and retry")                                         \
    X(ST_OOM, -(ST_ERRNO_MAX + 1), "no room for the bytes")                                        \
    X(ST_TOO_BIG, -(ST_ERRNO_MAX + 2), "past the configured maximum size")

#define ST_ENUM_ROW(name, value, text) name = value,
enum status { ST_OK = 0, ST_TABLE(ST_ENUM_ROW) };
#undef ST_ENUM_ROW

/* A static description of st: "ok", a project code's text, or strerror(-st) for -errno. */
const char *status_str(int st);

#endif
