/* reply.c - reply helpers over the RESP writer (see reply.h).
 *
 * Replies go to c->out. A client that has CLIENT REPLY OFF/SKIP set gets nothing appended,
 * but pub/sub pushes (CLIENT_PUSHING: subscribe confirmations, messages), as in Redis.
 * Every helper ends by asking the transport to send (client_want_write is cheap: it only
 * links the client into the pending list once).
 *
 * Output limits hold while a reply grows, not only when it is flushed: every append first
 * checks the pending output against the client's hard limit (its class's
 * client-output-buffer-limit, and max-reply-bytes) and its soft limit with its seconds. A client
 * past it is closed, its buffer freed, and every later append is a no-op (reply_stopped tells a
 * command's loop to end). So pending output never passes the limit by more than one item. */
#include "server/reply.h"

#include "common/util.h"
#include "server/command.h"
#include "server/pubsub.h"
#include "server/server.h"

#include "common/alloc.h"
#include "common/log.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

static inline int muted(client_t *c)
{
    if (c->flags & (CLIENT_FAKE | CLIENT_CLOSE_ASAP)) return 1;
    return (c->flags & (CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP)) && !(c->flags & CLIENT_PUSHING);
}

/* Smaller of a and b, where 0 means "no limit". */
static unsigned long long min_limit(unsigned long long a, unsigned long long b)
{
    if (!a) return b;
    if (!b) return a;
    return a < b ? a : b;
}

/* c's class of client-output-buffer-limit (pubsub while subscribed, else normal). */
static const config_obuf_limit_t *class_limit(const client_t *c)
{
    int klass = (c->flags & CLIENT_PUBSUB) ? CONFIG_CLIENT_PUBSUB : CONFIG_CLIENT_NORMAL;
    return &srv.cfg.client_obuf_limits[klass];
}

unsigned long long reply_hard_limit(const client_t *c)
{
    return min_limit((unsigned long long)class_limit(c)->hard_bytes,
                     (unsigned long long)srv.cfg.max_reply_bytes);
}

/* 1 when pending has stayed past c's soft limit for longer than its seconds, as each append
 * saw it: the first append past it starts the clock, one below it stops the clock. (The
 * transport keeps its own clock, out_soft_since_ms, over all it still has to send.) */
static int past_soft_limit(client_t *c, size_t pending)
{
    const config_obuf_limit_t *lim = class_limit(c);
    if (!lim->soft_bytes || pending <= (unsigned long long)lim->soft_bytes) {
        c->rbuf_soft_since_ms = 0;
        return 0;
    }
    long long now = time_ms();
    if (!c->rbuf_soft_since_ms) {
        c->rbuf_soft_since_ms = (uint64_t)now;
        return 0;
    }
    return now - (long long)c->rbuf_soft_since_ms > lim->soft_seconds * 1000;
}

/* Closes c once its pending output, with the next bytes to append (when known), is past its
 * hard limit, or past its soft one for too long; 1 then. */
static int over_limit(client_t *c, size_t next)
{
    /* the reply being built, what waits to be sent, and the late-reply places between */
    size_t pending = c->rbuf->len + (c->rbuf != &c->out ? c->out.len : 0) + c->seg_bytes;
    unsigned long long hard = reply_hard_limit(c);
    int past_hard = hard && (pending > hard || next > hard - pending);
    if (!past_hard && !past_soft_limit(c, pending)) return 0;
    srv.stat.client_outbuf_limit_disconnections++;
    log_notice("Client id=%llu closed while its reply grew past its output buffer limits "
               "(%zu bytes pending, %zu more to add).",
               (unsigned long long)c->id, pending, next);
    client_close(c);
    buf_deinit(c->rbuf); /* nothing more will be sent */
    buf_init(c->rbuf);
    return 1;
}

/* Where the next reply bytes go, or NULL when c gets none (muted, or just closed for passing
 * its output limit). A bulk string says how long it is, so that one that can never fit
 * closes the client before it is copied (out_n). */
static inline buf_t *out_n(client_t *c, size_t next)
{
    if (muted(c) || over_limit(c, next)) return NULL;
    if (!(c->flags & CLIENT_PENDING_WRITE)) client_want_write(c);
    return c->rbuf;
}

static inline buf_t *out(client_t *c)
{
    return out_n(c, 0);
}

/* v in decimal into buf (at least 40 bytes). */
static void u128_str(unsigned __int128 v, char *buf)
{
    char tmp[40];
    int n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10));
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
    buf[n] = '\0';
}

int reply_fits_or_reply(client_t *c, unsigned long long nitems, unsigned long long item_bytes)
{
    unsigned __int128 need = (unsigned __int128)nitems * item_bytes;
    struct {
        const char *name;
        unsigned long long bytes;
    } lim[3] = {
        {"max-reply-bytes", (unsigned long long)srv.cfg.max_reply_bytes},
        {"maxmemory", (unsigned long long)srv.cfg.maxmemory},
        {"client-output-buffer-limit", reply_hard_limit(c)},
    };
    int worst = -1;
    for (int i = 0; i < 3; i++)
        if (lim[i].bytes && need > lim[i].bytes && (worst < 0 || lim[i].bytes < lim[worst].bytes))
            worst = i;
    if (worst < 0) return 0;
    char n[40];
    u128_str(need, n);
    reply_errorf(c, "ERR reply of at least %s bytes would exceed %s (%llu bytes)", n,
                 lim[worst].name, lim[worst].bytes);
    return -1;
}

void reply_proto(client_t *c, const char *p, size_t len)
{
    buf_t *b = out(c);
    if (b) buf_append(b, p, len);
}

void reply_ok(client_t *c)
{
    reply_proto(c, "+OK\r\n", 5);
}

void reply_simple(client_t *c, const char *s)
{
    buf_t *b = out(c);
    if (b) resp_w_simple(b, s, strlen(s));
}

void reply_error(client_t *c, const char *msg)
{
    server_count_error(msg);
    if (c->cmd && (c->flags & CLIENT_IN_CALL)) ((command_t *)c->cmd)->failed_calls++;
    buf_t *b = out(c);
    if (b) resp_w_error(b, msg, strlen(msg));
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
    buf_t *b = out(c);
    if (b) resp_w_int(b, v);
}

/* A shm client's bulk of len bytes appended to b may live in its data area: where its bytes
 * go (the reference is in b), or NULL. Only at the end of the stream: a late reply's place is
 * read by the client after data-area bytes given out later, out of the area's order. */
static char *area_bulk(client_t *c, buf_t *b, size_t len)
{
    if (!c->ops || !c->ops->area_take || !client_reply_at_end(c, b))
        return NULL;
    char ref[64];
    size_t rn;
    char *dst = c->ops->area_take(c, len, ref, &rn);
    if (dst) buf_append(b, ref, rn);
    return dst;
}

void reply_bulk(client_t *c, const void *p, size_t len)
{
    buf_t *b = out_n(c, len);
    if (!b) return;
    char *dst = area_bulk(c, b, len);
    if (dst) memcpy(dst, p, len);
    else resp_w_bulk(b, p, len);
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
    buf_t *b = out_n(c, len);
    *mute = b == NULL;
    if (!b) return NULL;
    char *dst = area_bulk(c, b, len);
    if (dst) return dst;
    char hdr[32];
    int n = snprintf(hdr, sizeof(hdr), "$%zu\r\n", len);
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
    buf_t *b = out(c);
    if (b) resp_w_null(b, c->resp);
}

void reply_null_array(client_t *c)
{
    buf_t *b = out(c);
    if (b) resp_w_null_array(b, c->resp);
}

void reply_array(client_t *c, long long n)
{
    buf_t *b = out(c);
    if (b) resp_w_agg(b, c->resp, '*', n);
}

void reply_map(client_t *c, long long pairs)
{
    buf_t *b = out(c);
    if (b) resp_w_agg(b, c->resp, '%', pairs);
}

void reply_set(client_t *c, long long n)
{
    buf_t *b = out(c);
    if (b) resp_w_agg(b, c->resp, '~', n);
}

void reply_double(client_t *c, double d)
{
    buf_t *b = out(c);
    if (b) resp_w_double(b, c->resp, d);
}

void reply_bool(client_t *c, int v)
{
    buf_t *b = out(c);
    if (b) resp_w_bool(b, c->resp, v);
}

void reply_help(client_t *c, const char *const *lines, size_t n)
{
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) reply_simple(c, lines[i]);
}

void reply_verbatim(client_t *c, const char *p, size_t len, const char *ext)
{
    buf_t *b = out(c);
    if (b) resp_w_verbatim(b, c->resp, ext, p, len);
}

size_t reply_defer(client_t *c)
{
    buf_t *b = out(c);
    return b ? resp_w_agg_defer(b) : (size_t)-1;
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
