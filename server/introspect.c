/* introspect.c - slow log, latency monitor, MONITOR feed and CLIENT PAUSE (see introspect.h).
 *
 * The slow log is a ring of the last slowlog-max-len entries, newest first; each entry keeps at
 * most 32 arguments of at most 128 bytes, as Redis. The latency monitor keeps, per event
 * ("command", "fast-command"), the latest sample, the maximum and a history of 160 samples.
 *
 * Latency tracking keeps one histogram per command (and subcommand) that ran since the start or
 * CONFIG RESETSTAT, of nanoseconds (microseconds x 1000, clamped to 1 ns .. 1 s as Redis),
 * log-linear: exact below 16 ns, then 16 slots per power of two (about 6% wide), so percentiles
 * are within 6% and the powers of two that LATENCY HISTOGRAM reports fall on slot edges. Redis
 * uses an HDR histogram with 2 significant digits (24 KiB per command); this one is 3.5 KiB. */
#include "server/introspect.h"

#include "common/alloc.h"
#include "common/util.h"
#include "server/block.h"
#include "server/multi.h"
#include "server/reply.h"
#include "server/server.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SLOWLOG_MAX_ARGS 32
#define SLOWLOG_MAX_ARG_LEN 128

typedef struct slow_entry {
    long long id, time_s, duration_us;
    int argc;
    char **argv;
    size_t *lens;
    char peer[64];
    char *name;
} slow_entry_t;

static slow_entry_t *slowlog; /* ring, capacity slow_cap */
static long long slow_len, slow_cap, slow_head, slow_next_id;

typedef struct latency_event {
    const char *name;
    struct {
        long long time_s, ms;
    } samples[160];
    int n, idx;
    long long max_ms;
} latency_event_t;

static latency_event_t latency_events[] = {{"command"}, {"fast-command"}, {"expire-cycle"}};
#define NLATENCY ((int)(sizeof(latency_events) / sizeof(latency_events[0])))

static client_t **monitors;
static int nmonitors, capmonitors;

static long long pause_until_ms;
static int pause_all; /* 1: ALL, 0: WRITE */
static int paused;

/* ---- slow log ---- */

static void slow_free(slow_entry_t *e)
{
    for (int i = 0; i < e->argc; i++) xfree(e->argv[i]);
    xfree(e->argv);
    xfree(e->lens);
    xfree(e->name);
    memset(e, 0, sizeof(*e));
}

static void slow_reset(void)
{
    for (long long i = 0; i < slow_cap; i++) slow_free(&slowlog[i]);
    slow_len = slow_head = 0;
}

static void slow_resize(long long cap)
{
    if (cap == slow_cap) return;
    slow_reset();
    xfree(slowlog);
    slowlog = cap > 0 ? xcalloc((size_t)cap, sizeof(*slowlog)) : NULL;
    slow_cap = cap;
}

/* ---- secrets: arguments shown as "(redacted)" in MONITOR and the slow log, as Redis hides
 * them: AUTH's arguments, HELLO's AUTH user and password, ACL SETUSER's name and rules, the
 * value CONFIG SET gives a sensitive parameter, MIGRATE's AUTH and AUTH2 credentials. ---- */

static const char *const sensitive_configs[] = {"requirepass", "masterauth", "masteruser"};

static int word_eq(const resp_arg_t *a, const char *w)
{
    return a->len == strlen(w) && !strncasecmp(a->ptr, w, a->len);
}

/* Marks the secret arguments of c's command in mark[0..argc) (zeroed by the caller). */
static void hello_secrets(const client_t *c, char *mark)
{
    for (int j = 2; j < c->argc; j++) {
        if (word_eq(&c->argv[j], "auth") && j + 2 < c->argc) {
            mark[j + 1] = mark[j + 2] = 1;
            j += 2;
        } else if (word_eq(&c->argv[j], "setname") && j + 1 < c->argc) {
            j++;
        } else {
            return;
        }
    }
}

static void migrate_secrets(const client_t *c, char *mark)
{
    for (int j = 6; j < c->argc; j++) {
        if (word_eq(&c->argv[j], "auth") && j + 1 < c->argc) {
            mark[++j] = 1;
        } else if (word_eq(&c->argv[j], "auth2") && j + 2 < c->argc) {
            mark[j + 1] = mark[j + 2] = 1;
            j += 2;
        } else if (word_eq(&c->argv[j], "keys")) {
            return;
        }
    }
}

static void config_set_secrets(const client_t *c, char *mark)
{
    for (int j = 2; j + 1 < c->argc; j += 2)
        for (size_t k = 0; k < sizeof(sensitive_configs) / sizeof(sensitive_configs[0]); k++)
            if (word_eq(&c->argv[j], sensitive_configs[k])) mark[j + 1] = 1;
}

static const struct {
    const char *fullname;
    int from; /* every argument from this index is secret; 0: ask fn */
    void (*fn)(const client_t *c, char *mark);
} secret_rows[] = {
    {"auth", 1, NULL},
    {"acl|setuser", 2, NULL},
    {"hello", 0, hello_secrets},
    {"migrate", 0, migrate_secrets},
    {"config|set", 0, config_set_secrets},
};

/* Which arguments of c's command to hide: an array of c->argc flags (xfree it), or NULL when
 * none is secret. */
static char *secret_args(const client_t *c)
{
    for (size_t i = 0; i < sizeof(secret_rows) / sizeof(secret_rows[0]); i++) {
        if (strcmp(c->cmd->fullname, secret_rows[i].fullname)) continue;
        char *mark = xcalloc((size_t)c->argc, 1);
        if (secret_rows[i].fn)
            secret_rows[i].fn(c, mark);
        else
            for (int j = secret_rows[i].from; j < c->argc; j++) mark[j] = 1;
        return mark;
    }
    return NULL;
}

#define REDACTED "(redacted)"

static void slow_add(client_t *c, long long duration_us)
{
    slow_resize(srv.cfg.slowlog_max_len);
    if (slow_cap == 0) return;
    slow_head = (slow_head + slow_cap - 1) % slow_cap;
    slow_entry_t *e = &slowlog[slow_head];
    slow_free(e);
    e->id = slow_next_id++;
    e->time_s = time_ms() / 1000;
    e->duration_us = duration_us;
    int argc = c->argc > SLOWLOG_MAX_ARGS ? SLOWLOG_MAX_ARGS : c->argc;
    e->argc = argc;
    e->argv = xmalloc(sizeof(char *) * (size_t)argc);
    e->lens = xmalloc(sizeof(size_t) * (size_t)argc);
    char *secret = secret_args(c);
    for (int i = 0; i < argc; i++) {
        char more[64];
        if (argc != c->argc && i == argc - 1) {
            int n = snprintf(more, sizeof(more), "... (%d more arguments)", c->argc - argc + 1);
            e->argv[i] = xmemdup(more, (size_t)n);
            e->lens[i] = (size_t)n;
        } else if (secret && secret[i]) {
            e->argv[i] = xstrdup(REDACTED);
            e->lens[i] = sizeof(REDACTED) - 1;
        } else if (c->argv[i].len > SLOWLOG_MAX_ARG_LEN) {
            int n = snprintf(more, sizeof(more), "... (%zu more bytes)",
                             c->argv[i].len - SLOWLOG_MAX_ARG_LEN);
            char *s = xmalloc(SLOWLOG_MAX_ARG_LEN + (size_t)n + 1);
            memcpy(s, c->argv[i].ptr, SLOWLOG_MAX_ARG_LEN);
            memcpy(s + SLOWLOG_MAX_ARG_LEN, more, (size_t)n + 1);
            e->argv[i] = s;
            e->lens[i] = SLOWLOG_MAX_ARG_LEN + (size_t)n;
        } else {
            e->argv[i] = xmemdup(c->argv[i].ptr, c->argv[i].len);
            e->lens[i] = c->argv[i].len;
        }
    }
    char local[64];
    e->peer[0] = '\0';
    if (c->ops && c->ops->addr) c->ops->addr(c, e->peer, sizeof(e->peer), local, sizeof(local));
    e->name = xstrdup(c->name ? c->name : "");
    xfree(secret);
    if (slow_len < slow_cap) slow_len++;
}

static void slowlog_get_cmd(client_t *c)
{
    long long count = 10;
    if (c->argc == 3) {
        if (arg_range_or_reply(c, &c->argv[2], -1, LLONG_MAX, &count,
                               "ERR count should be greater than or equal to -1") < 0)
            return;
        if (count == -1) count = slow_len;
    } else if (c->argc > 3) {
        reply_arity_error(c);
        return;
    }
    if (count > slow_len) count = slow_len;
    reply_array(c, count);
    for (long long i = 0; i < count; i++) {
        slow_entry_t *e = &slowlog[(slow_head + i) % slow_cap];
        reply_array(c, 6);
        reply_int(c, e->id);
        reply_int(c, e->time_s);
        reply_int(c, e->duration_us);
        reply_array(c, e->argc);
        for (int j = 0; j < e->argc; j++) reply_bulk(c, e->argv[j], e->lens[j]);
        reply_bulk_cstr(c, e->peer);
        reply_bulk_cstr(c, e->name);
    }
}

static void slowlog_len_cmd(client_t *c)
{
    reply_int(c, slow_len);
}

static void slowlog_reset_cmd(client_t *c)
{
    slow_reset();
    reply_ok(c);
}

static void help(client_t *c, const char *const *lines, size_t n)
{
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) reply_simple(c, lines[i]);
}

static void slowlog_help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET [<count>]",
        "    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
        "    Entries are made of:",
        "    id, timestamp, time in microseconds, arguments array, client IP and port,",
        "    client name",
        "LEN",
        "    Return the length of the slowlog.",
        "RESET",
        "    Reset the slowlog.",
        "HELP",
        "    Print this help.",
    };
    help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

/* ---- latency monitor ---- */

static void latency_add(latency_event_t *ev, long long ms)
{
    long long now = time_ms() / 1000;
    int last = (ev->idx + 159) % 160;
    if (ev->n && ev->samples[last].time_s == now) {
        if (ms > ev->samples[last].ms) ev->samples[last].ms = ms;
    } else {
        ev->samples[ev->idx].time_s = now;
        ev->samples[ev->idx].ms = ms;
        ev->idx = (ev->idx + 1) % 160;
        if (ev->n < 160) ev->n++;
    }
    if (ms > ev->max_ms) ev->max_ms = ms;
}

void introspect_latency_sample(const char *event, long long ms)
{
    long long threshold = srv.cfg.latency_monitor_threshold;
    if (threshold <= 0 || ms < threshold) return;
    for (int i = 0; i < NLATENCY; i++)
        if (strcmp(latency_events[i].name, event) == 0) latency_add(&latency_events[i], ms);
}

static void latency_latest_cmd(client_t *c)
{
    int n = 0;
    for (int i = 0; i < NLATENCY; i++) n += latency_events[i].n > 0;
    reply_array(c, n);
    for (int i = 0; i < NLATENCY; i++) {
        latency_event_t *ev = &latency_events[i];
        if (!ev->n) continue;
        int last = (ev->idx + 159) % 160;
        reply_array(c, 4);
        reply_bulk_cstr(c, ev->name);
        reply_int(c, ev->samples[last].time_s);
        reply_int(c, ev->samples[last].ms);
        reply_int(c, ev->max_ms);
    }
}

static latency_event_t *find_event(const resp_arg_t *a)
{
    for (int i = 0; i < NLATENCY; i++)
        if (arg_is(a, latency_events[i].name)) return &latency_events[i];
    return NULL;
}

static void latency_history_cmd(client_t *c)
{
    latency_event_t *ev = find_event(&c->argv[2]);
    if (!ev || !ev->n) {
        reply_array(c, 0);
        return;
    }
    reply_array(c, ev->n);
    int first = ev->n < 160 ? 0 : ev->idx;
    for (int i = 0; i < ev->n; i++) {
        int k = (first + i) % 160;
        reply_array(c, 2);
        reply_int(c, ev->samples[k].time_s);
        reply_int(c, ev->samples[k].ms);
    }
}

static void latency_reset_cmd(client_t *c)
{
    long long n = 0;
    for (int i = 0; i < NLATENCY; i++) {
        latency_event_t *ev = &latency_events[i];
        int named = c->argc == 2;
        for (int j = 2; j < c->argc; j++) named |= arg_is(&c->argv[j], ev->name);
        if (!named || !ev->n) continue;
        ev->n = ev->idx = 0;
        ev->max_ms = 0;
        n++;
    }
    reply_int(c, n);
}

static void latency_doctor_cmd(client_t *c)
{
    buf_t b;
    buf_init(&b);
    int any = 0;
    for (int i = 0; i < NLATENCY; i++) {
        latency_event_t *ev = &latency_events[i];
        if (!ev->n) continue;
        any = 1;
        buf_printf(&b, "%s: %d latency spikes (max %lld milliseconds).\n", ev->name, ev->n,
                   ev->max_ms);
    }
    if (!any)
        buf_append_str(&b, srv.cfg.latency_monitor_threshold
                               ? "No latency spikes were observed.\n"
                               : "The latency monitor is disabled: set "
                                 "latency-monitor-threshold to a number of milliseconds.\n");
    reply_verbatim(c, b.data, b.len, "txt");
    buf_deinit(&b);
}

static void latency_help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "DOCTOR",
        "    Return a human readable latency analysis report.",
        "HISTORY <event>",
        "    Return time-latency samples for the <event> class.",
        "LATEST",
        "    Return the latest latency samples for all events.",
        "RESET [<event> ...]",
        "    Reset latency data of one or more <event> classes.",
        "    (default: reset all data for all event classes)",
        "HISTOGRAM [COMMAND ...]",
        "    Return a cumulative distribution of latencies in the format of a histogram for the "
        "specified command names.",
        "    If no commands are specified then all histograms are replied.",
        "HELP",
        "    Print this help.",
    };
    help(c, lines, sizeof(lines) / sizeof(lines[0]));
}

/* ---- MONITOR ---- */

static void monitor_cmd(client_t *c)
{
    if (c->flags & CLIENT_MONITOR) return;
    if (c->flags & CLIENT_MULTI) {
        reply_error(c, "ERR MONITOR isn't allowed inside a transaction");
        return;
    }
    if (nmonitors == capmonitors) {
        capmonitors = capmonitors ? capmonitors * 2 : 4;
        monitors = xrealloc(monitors, sizeof(client_t *) * (size_t)capmonitors);
    }
    monitors[nmonitors++] = c;
    c->flags |= CLIENT_MONITOR;
    reply_ok(c);
}

void introspect_forget_monitor(client_t *c)
{
    for (int i = 0; i < nmonitors; i++) {
        if (monitors[i] == c) {
            memmove(&monitors[i], &monitors[i + 1], sizeof(client_t *) * (size_t)(nmonitors - i - 1));
            nmonitors--;
            break;
        }
    }
    c->flags &= ~(uint32_t)CLIENT_MONITOR;
}

int introspect_monitors(void)
{
    return nmonitors;
}

static void append_quoted(buf_t *b, const char *p, size_t len)
{
    buf_push(b, '"');
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)p[i];
        switch (ch) {
        case '\\': buf_append(b, "\\\\", 2); break;
        case '"': buf_append(b, "\\\"", 2); break;
        case '\n': buf_append(b, "\\n", 2); break;
        case '\r': buf_append(b, "\\r", 2); break;
        case '\t': buf_append(b, "\\t", 2); break;
        case '\a': buf_append(b, "\\a", 2); break;
        case '\b': buf_append(b, "\\b", 2); break;
        default:
            if (isprint(ch)) buf_push(b, (char)ch);
            else buf_printf(b, "\\x%02x", ch);
        }
    }
    buf_push(b, '"');
}

void introspect_feed_monitors(client_t *c)
{
    if (!nmonitors || srv.loading) return;
    buf_t b;
    buf_init(&b);
    long long us = time_us();
    char peer[128] = "", local[128];
    if (c->flags & CLIENT_UNIX_SOCKET) snprintf(peer, sizeof(peer), "unix:%s", srv.cfg.unixsocket);
    else if (c->ops && c->ops->addr) c->ops->addr(c, peer, sizeof(peer), local, sizeof(local));
    else snprintf(peer, sizeof(peer), "lua");
    buf_printf(&b, "+%lld.%06lld [%d %s]", us / 1000000, us % 1000000, c->dbid, peer);
    char *secret = secret_args(c);
    for (int i = 0; i < c->argc; i++) {
        buf_push(&b, ' ');
        if (secret && secret[i])
            append_quoted(&b, REDACTED, sizeof(REDACTED) - 1);
        else
            append_quoted(&b, c->argv[i].ptr, c->argv[i].len);
    }
    xfree(secret);
    buf_append(&b, "\r\n", 2);
    for (int i = 0; i < nmonitors; i++)
        if (monitors[i] != c) reply_proto(monitors[i], b.data, b.len);
    buf_deinit(&b);
}

void introspect_after_call(client_t *c, long long duration_us)
{
    long long threshold = srv.cfg.slowlog_log_slower_than;
    if (threshold >= 0 && duration_us >= threshold &&
        !(c->cmd->flags & (CMD_SKIP_MONITOR | CMD_SKIP_SLOWLOG)))
        slow_add(c, duration_us);
    long long lat = srv.cfg.latency_monitor_threshold;
    if (lat > 0 && duration_us / 1000 >= lat)
        latency_add(&latency_events[(c->cmd->flags & CMD_FAST) ? 1 : 0], duration_us / 1000);
    if (!(c->cmd->flags & (CMD_ADMIN | CMD_SKIP_MONITOR)) && !block_is_retry(c))
        introspect_feed_monitors(c);
}

/* ---- latency tracking ---- */

#define LAT_SUB 16                        /* slots per power of two */
#define LAT_MAX_NS 1000000000LL           /* Redis's ceiling: 1 s */
#define LAT_SLOTS ((30 - 3) * LAT_SUB)    /* values below 2^30 ns */

struct latency_hist {
    uint64_t total;
    uint64_t n[LAT_SLOTS];
};

static int lat_slot(long long ns)
{
    if (ns < LAT_SUB) return (int)ns;
    int p = 63 - __builtin_clzll((unsigned long long)ns); /* 4 .. 29 */
    return (p - 3) * LAT_SUB + (int)((ns >> (p - 4)) - LAT_SUB);
}

/* The lowest and highest nanoseconds slot i holds. */
static long long lat_lo(int i)
{
    if (i < LAT_SUB) return i;
    int p = i / LAT_SUB + 3;
    return (long long)(LAT_SUB + i % LAT_SUB) << (p - 4);
}

static long long lat_hi(int i)
{
    if (i < LAT_SUB) return i;
    int p = i / LAT_SUB + 3;
    return ((long long)(LAT_SUB + i % LAT_SUB + 1) << (p - 4)) - 1;
}

void introspect_track_latency(command_t *cmd, long long duration_us)
{
    long long ns = duration_us * 1000;
    if (ns < 1) ns = 1;
    if (ns > LAT_MAX_NS) ns = LAT_MAX_NS;
    if (!cmd->latency) cmd->latency = xcalloc(1, sizeof(*cmd->latency));
    cmd->latency->n[lat_slot(ns)]++;
    cmd->latency->total++;
}

void introspect_reset_latency(command_t *cmd)
{
    xfree(cmd->latency);
    cmd->latency = NULL;
}

/* The value at percentile pct (0..100) in nanoseconds: the highest value of the slot where the
 * cumulative count reaches pct of the total (the lowest for 0), as an HDR histogram answers. */
static long long lat_percentile(const struct latency_hist *h, double pct)
{
    uint64_t want = (uint64_t)(pct / 100.0 * (double)h->total + 0.5);
    if (want < 1) want = 1;
    uint64_t seen = 0;
    for (int i = 0; i < LAT_SLOTS; i++) {
        seen += h->n[i];
        if (seen >= want) return pct == 0.0 ? lat_lo(i) : lat_hi(i);
    }
    return LAT_MAX_NS;
}

/* {calls N histogram_usec {usec cumulative ...}}: cumulative counts at 1024 ns x 2^k, keyed by
 * the microseconds Redis names each level with (its HDR histogram's highest value equivalent to
 * 1024 x 2^k ns, in whole microseconds: 1 2 4 8 16 33 66 132 ...), only levels whose count grew. */
static void reply_histogram(client_t *c, const struct latency_hist *h)
{
    reply_map(c, 2);
    reply_bulk_cstr(c, "calls");
    reply_int(c, (long long)h->total);
    reply_bulk_cstr(c, "histogram_usec");
    size_t handle = reply_defer(c);
    long long pairs = 0;
    uint64_t cum = 0, prev = 0;
    int slot = 0;
    for (int k = 0; cum < h->total && k < 40; k++) {
        long long level = 1024LL << k;
        while (slot < LAT_SLOTS && lat_hi(slot) < level) cum += h->n[slot++];
        if (level >= LAT_MAX_NS) /* the last level holds the clamped values */
            while (slot < LAT_SLOTS) cum += h->n[slot++];
        if (cum > prev) {
            reply_int(c, (level + (8LL << k) - 1) / 1000);
            reply_int(c, (long long)cum);
            pairs++;
        }
        prev = cum;
    }
    reply_defer_finish(c, handle, '%', pairs);
}

typedef struct hist_walk {
    client_t *c;
    long long n;
} hist_walk_t;

static void reply_command_histograms(hist_walk_t *w, const command_t *cmd)
{
    if (cmd->latency) {
        reply_bulk_cstr(w->c, cmd->fullname);
        reply_histogram(w->c, cmd->latency);
        w->n++;
    }
    for (const command_t *s = cmd->subcommands; s && s->name; s++) {
        if (!s->latency) continue;
        reply_bulk_cstr(w->c, s->fullname);
        reply_histogram(w->c, s->latency);
        w->n++;
    }
}

static void histogram_each(void *ud, const command_t *cmd)
{
    reply_command_histograms(ud, cmd);
}

/* A command named as COMMAND INFO and ACL name them: "get", or "client|id". */
static const command_t *lookup_fullname(const resp_arg_t *a)
{
    const char *bar = memchr(a->ptr, '|', a->len);
    resp_arg_t name = *a;
    if (bar) name.len = (size_t)(bar - a->ptr);
    const command_t *cmd = command_lookup(&name);
    if (!cmd || !bar) return cmd;
    resp_arg_t sub = {.ptr = (char *)bar + 1, .len = a->len - name.len - 1};
    if (memchr(sub.ptr, '|', sub.len)) return NULL;
    return command_lookup_sub(cmd, &sub);
}

/* LATENCY HISTOGRAM [command ...]: every command with calls, or those named (a container
 * command brings its subcommands; unknown names are skipped), as a map. */
static void latency_histogram_cmd(client_t *c)
{
    hist_walk_t w = {c, 0};
    size_t handle = reply_defer(c);
    if (c->argc == 2) {
        command_foreach(histogram_each, &w);
    } else {
        for (int j = 2; j < c->argc; j++) {
            const command_t *cmd = lookup_fullname(&c->argv[j]);
            if (cmd) reply_command_histograms(&w, cmd);
        }
    }
    reply_defer_finish(c, handle, '%', w.n);
}

static void latencystats_line(buf_t *b, const command_t *cmd)
{
    if (!cmd->latency) return;
    buf_printf(b, "latency_percentiles_usec_%s:", cmd->fullname);
    const char *p = srv.cfg.latency_tracking_info_percentiles;
    int first = 1;
    while (p && *p) {
        char *end;
        double pct = strtod(p, &end);
        if (end == p) break;
        char name[32];
        snprintf(name, sizeof(name), "%.15g", pct); /* "99.9", "50", "0" as Redis prints them */
        buf_printf(b, "%sp%s=%.3f", first ? "" : ",", name,
                   (double)lat_percentile(cmd->latency, pct) / 1000.0);
        first = 0;
        p = end + strspn(end, " ");
    }
    buf_append_str(b, "\r\n");
}

static void latencystats_each(void *ud, const command_t *cmd)
{
    latencystats_line(ud, cmd);
    for (const command_t *s = cmd->subcommands; s && s->name; s++) latencystats_line(ud, s);
}

void introspect_info_latencystats(buf_t *b)
{
    command_foreach(latencystats_each, b);
}

/* ---- CLIENT PAUSE / UNPAUSE ---- */

int introspect_paused(const client_t *c, const command_t *cmd)
{
    if (!paused) return 0;
    if (pause_all) return 1;
    /* WRITE mode holds back writes and commands that may write (as Redis): by the call's
     * flags, so a transaction that holds one, and a script that does not declare no-writes */
    return (command_call_flags(c, cmd) & (CMD_WRITE | CMD_MAY_REPLICATE)) != 0;
}

static void unpause(void)
{
    paused = 0;
    db_expire_paused = 0;
    pause_until_ms = 0;
    block_release_postponed();
}

int introspect_pause_check(long long now_ms)
{
    if (paused && now_ms >= pause_until_ms) {
        unpause();
        return 1;
    }
    return 0;
}

void client_pause_cmd(client_t *c)
{
    long long ms;
    if (arg_ll_or_reply(c, &c->argv[2], &ms, "ERR timeout is not an integer or out of range") < 0)
        return;
    if (ms < 0) {
        reply_error(c, "ERR timeout is negative");
        return;
    }
    int all = 1;
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "WRITE")) all = 0;
        else if (!arg_is(&c->argv[3], "ALL")) {
            reply_error(c, "ERR CLIENT PAUSE mode must be WRITE or ALL");
            return;
        }
    } else if (c->argc > 4) {
        reply_syntax_error(c);
        return;
    }
    long long until = time_ms() + ms;
    /* a longer or stricter pause wins, as Redis */
    if (!paused || until > pause_until_ms) pause_until_ms = until;
    if (!paused || all) pause_all = all;
    paused = 1;
    db_expire_paused = 1; /* keys whose time is up are hidden, deleted after the pause */
    reply_ok(c);
}

void client_unpause_cmd(client_t *c)
{
    unpause();
    reply_ok(c);
}

static void drop_histograms(void *ud, const command_t *cmd)
{
    (void)ud;
    introspect_reset_latency((command_t *)cmd);
    for (const command_t *s = cmd->subcommands; s && s->name; s++)
        introspect_reset_latency((command_t *)s);
}

void introspect_deinit(void)
{
    command_foreach(drop_histograms, NULL);
    slow_resize(0);
    xfree(monitors);
    monitors = NULL;
    nmonitors = capmonitors = 0;
    for (int i = 0; i < NLATENCY; i++) latency_events[i].n = latency_events[i].idx = 0;
    paused = 0;
    db_expire_paused = 0;
}

int introspect_pause_active(void)
{
    return paused;
}

static command_t slowlog_sub[] = {
    {"get", slowlog_get_cmd, -2, CMD_ADMIN | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.2.12",
     "Returns the slow log's entries.", "O(N) where N is the number of entries returned"},
    {"len", slowlog_len_cmd, 2, CMD_ADMIN | CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.2.12",
     "Returns the number of entries in the slow log.", "O(1)"},
    {"reset", slowlog_reset_cmd, 2, CMD_ADMIN | CMD_LOADING | CMD_STALE, 0, 0, 0, "server",
     "2.2.12", "Clears all entries from the slow log.",
     "O(N) where N is the number of entries in the slowlog"},
    {"help", slowlog_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "6.2.0",
     "Show helpful text about the different subcommands", "O(1)"},
    {NULL},
};

static command_t latency_sub[] = {
    {"latest", latency_latest_cmd, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0,
     0, "server", "2.8.13", "Returns the latest latency samples for all events.",
     "O(1)"},
    {"history", latency_history_cmd, 3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0,
     0, 0, "server", "2.8.13", "Returns timestamp-latency samples for an event.", "O(1)"},
    {"reset", latency_reset_cmd, -2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0,
     0, "server", "2.8.13", "Resets the latency data for one or more events.", "O(1)"},
    {"histogram", latency_histogram_cmd, -2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     0, 0, 0, "server", "7.0.0",
     "Returns the cumulative distribution of latencies of a subset or all commands.",
     "O(N) where N is the number of commands with latency information being retrieved."},
    {"doctor", latency_doctor_cmd, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0,
     0, "server", "2.8.13", "Returns a human-readable latency analysis report.", "O(1)"},
    {"help", latency_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.8.13",
     "Returns helpful text about the different subcommands.", "O(1)"},
    {NULL},
};

static void container_cmd(client_t *c)
{
    reply_arity_error(c);
}

command_t cmds_introspect[] = {
    {"slowlog", container_cmd, -2, 0, 0, 0, 0, "server", "2.2.12",
     "A container for slow log commands.", "Depends on subcommand.", NULL, slowlog_sub},
    {"latency", container_cmd, -2, 0, 0, 0, 0, "server", "2.8.13",
     "A container for latency diagnostics commands.", "Depends on subcommand.", NULL,
     latency_sub},
    {"monitor", monitor_cmd, 1, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "server", "1.0.0", "Listens for all requests received by the server in real-time.", ""},
    {NULL},
};
