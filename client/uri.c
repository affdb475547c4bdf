/* uri.c - libcte's address parser: tcp://[[user]:pass@]host[:port][/db][?opts], unix:PATH[?opts],
 * shm:PATH[?opts]; opts are resp=2|3, db=N, user=U, password=P joined by '&'. Strict: anything
 * it does not understand is CTE_E_ADDRESS with a reason, never a guess. Pure; any thread. */
#include "uri.h"

#include "cte/cte.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static int bad(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    if (why && whylen) {
        va_start(ap, fmt);
        vsnprintf(why, whylen, fmt, ap);
        va_end(ap);
    }
    return CTE_E_ADDRESS;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Percent-decodes s[0..n) into out (cap bytes with the NUL); -1 on a bad escape or overflow. */
static int decode(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '%') {
            if (i + 2 >= n) return -1;
            int hi = hexval(s[i + 1]);
            int lo = hexval(s[i + 2]);
            if (hi < 0 || lo < 0) return -1;
            c = (char)(hi * 16 + lo);
            i += 2;
        }
        if (c == '\0' || o + 1 >= cap) return -1;
        out[o++] = c;
    }
    out[o] = '\0';
    return 0;
}

/* A decimal in [lo, hi] of exactly n bytes. */
static int number(const char *s, size_t n, long lo, long hi, int *out)
{
    long v = 0;
    if (n == 0 || n > 10) return -1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9') return -1;
        v = v * 10 + (s[i] - '0');
    }
    if (v < lo || v > hi) return -1;
    *out = (int)v;
    return 0;
}

static int option(const char *k, size_t kn, const char *v, size_t vn, cte_addr_t *a, char *why,
                  size_t whylen)
{
    if (kn == 4 && !memcmp(k, "resp", 4)) {
        if (number(v, vn, 2, 3, &a->resp) != 0) return bad(why, whylen, "resp must be 2 or 3");
    } else if (kn == 2 && !memcmp(k, "db", 2)) {
        if (number(v, vn, 0, INT_MAX, &a->db) != 0)
            return bad(why, whylen, "db must be a non-negative integer");
    } else if (kn == 4 && !memcmp(k, "user", 4)) {
        if (decode(v, vn, a->user, sizeof a->user) != 0) return bad(why, whylen, "bad user");
    } else if (kn == 8 && !memcmp(k, "password", 8)) {
        if (decode(v, vn, a->pass, sizeof a->pass) != 0) return bad(why, whylen, "bad password");
        a->has_pass = 1;
    } else {
        return bad(why, whylen, "unknown option '%.*s'", (int)kn, k);
    }
    return 0;
}

/* "k=v&k=v" of n bytes. */
static int options(const char *s, size_t n, cte_addr_t *a, char *why, size_t whylen)
{
    const char *end = s + n;
    while (s < end) {
        const char *amp = memchr(s, '&', (size_t)(end - s));
        const char *stop = amp ? amp : end;
        const char *eq = memchr(s, '=', (size_t)(stop - s));
        if (!eq) return bad(why, whylen, "option without '=': '%.*s'", (int)(stop - s), s);
        int rc = option(s, (size_t)(eq - s), eq + 1, (size_t)(stop - eq - 1), a, why, whylen);
        if (rc) return rc;
        s = amp ? amp + 1 : end;
    }
    return 0;
}

static int userinfo(const char *s, size_t n, cte_addr_t *a, char *why, size_t whylen)
{
    const char *colon = memchr(s, ':', n);
    size_t un = colon ? (size_t)(colon - s) : n;
    if (!colon) { /* tcp://pass@host: a password alone, as redis-cli reads it */
        if (decode(s, n, a->pass, sizeof a->pass) != 0) return bad(why, whylen, "bad password");
        a->has_pass = 1;
        return 0;
    }
    if (decode(s, un, a->user, sizeof a->user) != 0) return bad(why, whylen, "bad user");
    if (decode(colon + 1, n - un - 1, a->pass, sizeof a->pass) != 0)
        return bad(why, whylen, "bad password");
    a->has_pass = 1;
    return 0;
}

/* host[:port] or [v6][:port] of n bytes. */
static int hostport(const char *s, size_t n, cte_addr_t *a, char *why, size_t whylen)
{
    const char *h = s, *rest;
    size_t hn;
    if (n && s[0] == '[') {
        const char *rb = memchr(s, ']', n);
        if (!rb) return bad(why, whylen, "missing ']' after an IPv6 address");
        h = s + 1;
        hn = (size_t)(rb - h);
        rest = rb + 1;
    } else {
        const char *colon = memchr(s, ':', n);
        hn = colon ? (size_t)(colon - s) : n;
        rest = s + hn;
    }
    if (hn == 0) return bad(why, whylen, "missing host");
    if (hn >= sizeof a->host) return bad(why, whylen, "host name too long");
    memcpy(a->host, h, hn);
    a->host[hn] = '\0';
    size_t left = (size_t)(s + n - rest);
    if (left == 0) return 0;
    if (rest[0] != ':' || number(rest + 1, left - 1, 1, 65535, &a->port) != 0)
        return bad(why, whylen, "port must be an integer in 1..65535");
    return 0;
}

static int parse_tcp(const char *s, cte_addr_t *a, char *why, size_t whylen)
{
    size_t n = strlen(s);
    const char *q = memchr(s, '?', n);
    size_t main_n = q ? (size_t)(q - s) : n;
    const char *slash = memchr(s, '/', main_n);
    size_t auth_n = slash ? (size_t)(slash - s) : main_n;
    const char *at = NULL;
    int rc;

    for (size_t i = 0; i < auth_n; i++)
        if (s[i] == '@') at = s + i; /* the last '@': a password may hold one unescaped */
    if (at && (rc = userinfo(s, (size_t)(at - s), a, why, whylen))) return rc;
    const char *hp = at ? at + 1 : s;
    if ((rc = hostport(hp, (size_t)(s + auth_n - hp), a, why, whylen))) return rc;
    if (slash && slash + 1 < s + main_n &&
        number(slash + 1, (size_t)(s + main_n - slash - 1), 0, INT_MAX, &a->db) != 0)
        return bad(why, whylen, "db must be a non-negative integer");
    return q ? options(q + 1, n - main_n - 1, a, why, whylen) : 0;
}

static int parse_path(const char *s, cte_addr_t *a, char *why, size_t whylen)
{
    size_t n = strlen(s);
    const char *q = memchr(s, '?', n);
    size_t pn = q ? (size_t)(q - s) : n;
    if (pn == 0) return bad(why, whylen, "missing socket path");
    if (pn >= sizeof a->path) return bad(why, whylen, "socket path longer than 107 bytes");
    memcpy(a->path, s, pn);
    a->path[pn] = '\0';
    return q ? options(q + 1, n - pn - 1, a, why, whylen) : 0;
}

int cte__addr_parse(const char *s, cte_addr_t *a, char *why, size_t whylen)
{
    memset(a, 0, sizeof *a);
    a->port = 6379;
    a->resp = 2;
    if (why && whylen) why[0] = '\0';
    if (!s) return bad(why, whylen, "no address");
    if (!strncmp(s, "tcp://", 6)) {
        a->kind = CTE_ADDR_TCP;
        return parse_tcp(s + 6, a, why, whylen);
    }
    if (!strncmp(s, "unix:", 5) || !strncmp(s, "shm:", 4)) {
        a->kind = s[0] == 'u' ? CTE_ADDR_UNIX : CTE_ADDR_SHM;
        s += s[0] == 'u' ? 5 : 4;
        if (!strncmp(s, "//", 2)) s += 2; /* unix:///run/x.sock reads as /run/x.sock */
        return parse_path(s, a, why, whylen);
    }
    return bad(why, whylen, "unknown scheme (expected tcp://, unix: or shm:)");
}
