/* reply.h - replies from commands to the client that sent them.
 *
 * Every function appends RESP (in the client's protocol version) to c->out and asks the
 * transport to send it. Error helpers take the whole message after the '-', prefix included
 * ("ERR ...", "WRONGTYPE ..."), and count it in errorstats. Functions ending in _or_reply
 * reply with the standard error and return -1 when the argument is bad, else 0. */
#ifndef CTE_SERVER_REPLY_H
#define CTE_SERVER_REPLY_H

#include "server/client.h"

#include <stddef.h>

/* Standard messages, as Redis 7.0 words them. */
#define ERR_SYNTAX "ERR syntax error"
#define ERR_NOT_INT "ERR value is not an integer or out of range"
#define ERR_NOT_FLOAT "ERR value is not a valid float"
#define ERR_WRONGTYPE "WRONGTYPE Operation against a key holding the wrong kind of value"
#define ERR_NO_KEY "ERR no such key"
#define ERR_OVERFLOW "ERR increment or decrement would overflow"
#define ERR_DB_INDEX "ERR DB index is out of range"
#define ERR_NOT_POSITIVE "ERR value is out of range, must be positive"

void reply_ok(client_t *c);
void reply_simple(client_t *c, const char *s); /* "+s" */
void reply_error(client_t *c, const char *msg);
void reply_errorf(client_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void reply_int(client_t *c, long long v);
void reply_bulk(client_t *c, const void *p, size_t len);
void reply_bulk_cstr(client_t *c, const char *s); /* NULL -> null reply */
void reply_bulk_ll(client_t *c, long long v);     /* integer as a bulk string */
/* A bulk string of len bytes that the caller writes in place: returns where to write them
 * (valid until the next reply), or NULL when the client gets no replies (CLIENT REPLY OFF) or
 * memory is short (then nothing was appended; the caller replies an error). */
char *reply_bulk_begin(client_t *c, size_t len, int *muted);
void reply_null(client_t *c);                     /* "$-1" / "_" */
void reply_null_array(client_t *c);               /* "*-1" / "_" */
void reply_array(client_t *c, long long n);
void reply_map(client_t *c, long long pairs); /* RESP2: array of 2*pairs */
void reply_set(client_t *c, long long n);     /* RESP2: array */
void reply_double(client_t *c, double d);
void reply_bool(client_t *c, int v);
void reply_verbatim(client_t *c, const char *p, size_t len, const char *ext);
/* A HELP reply: lines[0..n) as an array of simple strings. */
void reply_help(client_t *c, const char *const *lines, size_t n);
/* An aggregate whose length is known later: returns a handle for reply_defer_finish. */
size_t reply_defer(client_t *c);
void reply_defer_finish(client_t *c, size_t handle, char kind, long long n); /* kind '*','%','~' */
/* Raw protocol bytes (already RESP). */
void reply_proto(client_t *c, const char *p, size_t len);
/* "ERR wrong number of arguments for 'cmd' command" for the current command. */
void reply_arity_error(client_t *c);
void reply_wrongtype(client_t *c);
void reply_syntax_error(client_t *c);

/* Reply size limits. reply_hard_limit is the most pending output c may have: the smaller of
 * its class's client-output-buffer-limit hard limit (pubsub while subscribed, else normal)
 * and max-reply-bytes. Every append checks it, and the class's soft limit and seconds: a
 * client past them is closed (INFO counts
 * client_output_buffer_limit_disconnections), its pending output dropped, and later replies
 * are no-ops; reply_stopped is then 1, and a loop that builds a reply must break on it. */
unsigned long long reply_hard_limit(const client_t *c);
static inline int reply_stopped(const client_t *c)
{
    return (c->flags & CLIENT_CLOSE_ASAP) != 0;
}
/* Least bytes of one bulk string reply ("$0\r\n\r\n") and of one double (",0\r\n" in RESP3;
 * a bulk in RESP2). */
#define REPLY_MIN_BULK 6
#define REPLY_MIN_DOUBLE 4
/* Before building a reply of nitems items of at least item_bytes bytes each: 0 when it can
 * fit, else -1 after replying "ERR reply of at least N bytes would exceed LIMIT (M bytes)",
 * where LIMIT is the smallest that it passes of max-reply-bytes, maxmemory (when set) and
 * c's hard output limit (when set). The arithmetic cannot overflow. Replies nothing for a
 * muted client but still refuses. */
int reply_fits_or_reply(client_t *c, unsigned long long nitems, unsigned long long item_bytes);

/* Argument parsing helpers. */
int arg_ll_or_reply(client_t *c, const resp_arg_t *a, long long *out, const char *msg);
int arg_double_or_reply(client_t *c, const resp_arg_t *a, double *out, const char *msg);
int arg_long_double_or_reply(client_t *c, const resp_arg_t *a, long double *out, const char *msg);
/* A non-negative int within [min, max]: msg (or ERR_NOT_INT) on failure. */
int arg_range_or_reply(client_t *c, const resp_arg_t *a, long long min, long long max,
                       long long *out, const char *msg);
/* A SCAN cursor as Redis's parseScanCursorOrReply reads it: strtoul over the whole argument
 * (a sign and leading zeros accepted, "-1" wraps), no leading space, nothing after it.
 * Replies "ERR invalid cursor" and returns -1 otherwise. */
int scan_cursor_or_reply(client_t *c, const resp_arg_t *a, uint64_t *out);
/* HSCAN/SSCAN/ZSCAN options from argv[first] on: COUNT n (n >= 1) and MATCH pattern, any
 * order, repeated ones win. *pat is NULL when every member matches ("*"). Replies the syntax
 * error and returns -1 on anything else. */
int scan_count_match_or_reply(client_t *c, int first, long long *count,
                              const resp_arg_t **pat);
/* 1 if a equals lit, ignoring case. */
int arg_is(const resp_arg_t *a, const char *lit);

/* Key lookups as Redis's lookupKeyRead and lookupKeyWrite. Both delete an expired key they
 * meet. A read counts a keyspace hit or miss (and sends the "keymiss" event); a write counts
 * nothing and, while expiry is paused (loading), still finds an expired key so that a
 * following db_add never duplicates it. */
kv_t *lookup_read(client_t *c, const resp_arg_t *key);
kv_t *lookup_write_db(db_t *db, const void *key, size_t len);
static inline kv_t *lookup_write(client_t *c, const resp_arg_t *key)
{
    return lookup_write_db(c->db, key->ptr, key->len);
}
/* The same with a type check: NULL when the key is absent (*err 0) or holds another type
 * (*err 1, WRONGTYPE replied). */
kv_t *lookup_read_type(client_t *c, const resp_arg_t *key, int type, int *err);
kv_t *lookup_write_type(client_t *c, const resp_arg_t *key, int type, int *err);
/* Older name of lookup_write_type. */
kv_t *lookup_type_or_reply(client_t *c, const resp_arg_t *key, int type, int *err);

#endif
