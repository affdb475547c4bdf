/* reply.c - reply helpers over the RESP writer (see reply.h).
 *
 * Replies go to c->out. A client that has CLIENT REPLY OFF/SKIP set gets nothing appended.
 * Every helper ends by asking the transport to send (client_want_write is cheap: it only
 * links the client into the pending list once). */
#include "server/reply.h"

#include "common/util.h"
#include "server/command.h"
#include "server/pubsub.h"
#include "server/server.h"

#include "common/alloc.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static inline int muted(client_t *c)
{
    return (c->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_FAKE)) != 0;
}

static inline buf_t *out(client_t *c)
{
    if (!(c->flags & CLIENT_PENDING_WRITE)) client_want_write(c);
    return c->rbuf;
}

void reply_proto(client_t *c, const char *p, size_t len)
{
    if (muted(c)) return;
    buf_append(out(c), p, len);
}

void reply_ok(client_t *c)
{
    reply_proto(c, "+OK\r\n", 5);
}

void reply_simple(client_t *c, const char *s)
{
    if (muted(c)) return;
    resp_w_simple(out(c), s, strlen(s));
}

void reply_error(client_t *c, const char *msg)
{
    server_count_error(msg);
    if (c->cmd && (c->flags & CLIENT_IN_CALL)) ((command_t *)c->cmd)->failed_calls++;
    if (muted(c)) return;
    resp_w_error(out(c), msg, strlen(msg));
}

void reply_errorf(client_t *c, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    reply_error(c, msg);
}

void reply_int(client_t *c, long long v)
{
    if (muted(c)) return;
    resp_w_int(out(c), v);
}

void reply_bulk(client_t *c, const void *p, size_t len)
{
    if (muted(c)) return;
    resp_w_bulk(out(c), p, len);
}

void reply_bulk_cstr(client_t *c, const char *s)
{
    if (!s) reply_null(c);
    else reply_bulk(c, s, strlen(s));
}

void reply_bulk_ll(client_t *c, long long v)
{
    char buf[24];
    reply_bulk(c, buf, ll_to_str(buf, v));
}

char *reply_bulk_begin(client_t *c, size_t len, int *mute)
{
    *mute = muted(c);
    if (*mute) return NULL;
    char hdr[32];
    int n = snprintf(hdr, sizeof(hdr), "$%zu\r\n", len);
    buf_t *b = out(c);
    if (buf_try_reserve(b, (size_t)n + len + 2) < 0) return NULL;
    memcpy(b->data + b->len, hdr, (size_t)n);
    char *p = b->data + b->len + n;
    memcpy(p + len, "\r\n", 2);
    b->len += (size_t)n + len + 2;
    b->data[b->len] = '\0';
    return p;
}

void reply_null(client_t *c)
{
    if (muted(c)) return;
    resp_w_null(out(c), c->resp);
}

void reply_null_array(client_t *c)
{
    if (muted(c)) return;
    resp_w_null_array(out(c), c->resp);
}

void reply_array(client_t *c, long long n)
{
    if (muted(c)) return;
    resp_w_agg(out(c), c->resp, '*', n);
}

void reply_map(client_t *c, long long pairs)
{
    if (muted(c)) return;
    resp_w_agg(out(c), c->resp, '%', pairs);
}

void reply_set(client_t *c, long long n)
{
    if (muted(c)) return;
    resp_w_agg(out(c), c->resp, '~', n);
}

void reply_double(client_t *c, double d)
{
    if (muted(c)) return;
    resp_w_double(out(c), c->resp, d);
}

void reply_bool(client_t *c, int v)
{
    if (muted(c)) return;
    resp_w_bool(out(c), c->resp, v);
}

void reply_verbatim(client_t *c, const char *p, size_t len, const char *ext)
{
    if (muted(c)) return;
    resp_w_verbatim(out(c), c->resp, ext, p, len);
}

size_t reply_defer(client_t *c)
{
    if (muted(c)) return (size_t)-1;
    return resp_w_agg_defer(out(c));
}

void reply_defer_finish(client_t *c, size_t handle, char kind, long long n)
{
    if (handle == (size_t)-1 || muted(c)) return;
    resp_w_agg_finish(c->rbuf, handle, c->resp, kind, n);
}

void reply_arity_error(client_t *c)
{
    reply_errorf(c, "ERR wrong number of arguments for '%s' command",
                 c->cmd ? c->cmd->fullname : "unknown");
}

void reply_wrongtype(client_t *c)
{
    reply_error(c, ERR_WRONGTYPE);
}

void reply_syntax_error(client_t *c)
{
    reply_error(c, ERR_SYNTAX);
}

int arg_ll_or_reply(client_t *c, const resp_arg_t *a, long long *out, const char *msg)
{
    if (str_to_ll(a->ptr, a->len, out)) return 0;
    reply_error(c, msg ? msg : ERR_NOT_INT);
    return -1;
}

int arg_double_or_reply(client_t *c, const resp_arg_t *a, double *out, const char *msg)
{
    if (str_to_d(a->ptr, a->len, out)) return 0;
    reply_error(c, msg ? msg : ERR_NOT_FLOAT);
    return -1;
}

int arg_long_double_or_reply(client_t *c, const resp_arg_t *a, long double *out, const char *msg)
{
    if (str_to_ld(a->ptr, a->len, out)) return 0;
    reply_error(c, msg ? msg : ERR_NOT_FLOAT);
    return -1;
}

int arg_range_or_reply(client_t *c, const resp_arg_t *a, long long min, long long max,
                       long long *out, const char *msg)
{
    long long v;
    if (!str_to_ll(a->ptr, a->len, &v) || v < min || v > max) {
        reply_error(c, msg ? msg : ERR_NOT_INT);
        return -1;
    }
    *out = v;
    return 0;
}

int scan_cursor_or_reply(client_t *c, const resp_arg_t *a, uint64_t *out)
{
    char small[64];
    char *s = a->len < sizeof(small) ? small : try_malloc(a->len + 1);
    if (!s) {
        reply_error(c, "ERR invalid cursor");
        return -1;
    }
    memcpy(s, a->ptr, a->len);
    s[a->len] = '\0';
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    int bad = isspace((unsigned char)s[0]) || *end != '\0' || errno == ERANGE;
    if (s != small) xfree(s);
    if (bad) {
        reply_error(c, "ERR invalid cursor");
        return -1;
    }
    *out = v;
    return 0;
}

int scan_count_match_or_reply(client_t *c, int first, long long *count,
                              const resp_arg_t **pat)
{
    for (int i = first; i < c->argc; i += 2) {
        int left = c->argc - i;
        if (arg_is(&c->argv[i], "count") && left >= 2) {
            if (arg_ll_or_reply(c, &c->argv[i + 1], count, NULL) < 0) return -1;
            if (*count < 1) {
                reply_syntax_error(c);
                return -1;
            }
        } else if (arg_is(&c->argv[i], "match") && left >= 2) {
            *pat = &c->argv[i + 1];
            if ((*pat)->len == 1 && (*pat)->ptr[0] == '*') *pat = NULL;
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    return 0;
}

int arg_is(const resp_arg_t *a, const char *lit)
{
    return str_eq_nocase(a->ptr, a->len, lit);
}

kv_t *lookup_read(client_t *c, const resp_arg_t *key)
{
    kv_t *kv = db_lookup(c->db, key->ptr, key->len);
    if (kv) {
        srv.stat.keyspace_hits++;
    } else {
        srv.stat.keyspace_misses++;
        notify_keyspace_event(NOTIFY_KEY_MISS, "keymiss", key->ptr, key->len, c->db->id);
    }
    return kv;
}

kv_t *lookup_write_db(db_t *db, const void *key, size_t len)
{
    kv_t *kv = db_lookup(db, key, len);
    if (!kv && db_expire_paused) kv = db_find(db, key, len);
    return kv;
}

static kv_t *check_type(client_t *c, kv_t *kv, int type, int *err)
{
    *err = 0;
    if (kv && kv->val->type != type) {
        reply_wrongtype(c);
        *err = 1;
        return NULL;
    }
    return kv;
}

kv_t *lookup_read_type(client_t *c, const resp_arg_t *key, int type, int *err)
{
    return check_type(c, lookup_read(c, key), type, err);
}

kv_t *lookup_write_type(client_t *c, const resp_arg_t *key, int type, int *err)
{
    return check_type(c, lookup_write(c, key), type, err);
}

kv_t *lookup_type_or_reply(client_t *c, const resp_arg_t *key, int type, int *err)
{
    return lookup_write_type(c, key, type, err);
}
