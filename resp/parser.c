/* parser.c - the incremental request parser: multibulk and inline, byte for byte as Redis 7.0
 * reads them (networking.c: processMultibulkBuffer, processInlineBuffer; sds.c: sdssplitargs;
 * util.c: string2ll).
 *
 * Shape: a small nginx-style state machine over a caller-owned buffer. The parser keeps offsets
 * relative to buf[0] (the first byte of the current request), never pointers, so the caller may
 * realloc and append between RESP_AGAIN calls; argument views are made from the offsets only
 * when a request is complete. No call searches again what an earlier call searched: p->scan
 * remembers where the search for the current line's end resumes, and bulk payloads are skipped,
 * never scanned. The usual header ("$3\r\n") is read in one pass by fast_header before any
 * memchr; every other line takes the general path, with identical results.
 *
 * Redis quirks kept on purpose, because clients see them on the wire:
 *  - A header line ("*<n>", "$<len>") ends at the first '\r' and needs one more byte, which is
 *    skipped unchecked; the two bytes after a bulk payload are skipped unchecked too.
 *  - Redis finds line ends with strchr() on its NUL-terminated query buffer, so a NUL byte before
 *    a line's end hides that end for good: the request waits until the buffer exceeds
 *    max_inline and then fails with the "too big" error. p->scan == SCAN_BLOCKED records this.
 *  - Numbers are what string2ll accepts: "0", or an optional '-', a digit 1-9, more digits,
 *    fewer than 21 characters, no overflow.
 *  - Inline lines split as sdssplitargs does (see split_token).
 *
 * Invariants between calls: state == ST_IDLE, or pos <= len of the last call and scan is
 * SCAN_BLOCKED or in [pos, len]; offs holds argc pairs (offset, length) for the arguments
 * of the current request. Memory: offs/argv grow with arguments actually received (each costs
 * at least 6 bytes on the wire), never with the declared count; inline_copy grows with the
 * line, which the caller already holds. Both are kept between requests, so the steady state
 * allocates nothing, and are trimmed when a large request left them big. These sizes are
 * bounded by bytes already in memory, so they use the aborting x* allocators.
 *
 * Thread: whichever thread owns the connection's read buffer; no globals. */
#include "resp/resp.h"

#include "common/alloc.h"

#include <assert.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

enum { ST_IDLE, ST_COUNT, ST_BULK_HDR, ST_BULK_DATA, ST_INLINE };

enum { STEP_DONE = 100 }; /* internal: this step finished, go on */

#define NPOS SIZE_MAX
#define SCAN_BLOCKED SIZE_MAX
#define BIG_ARG (32 * 1024)     /* Redis's PROTO_MBULK_BIG_ARG: resp_parser_need reports */
#define KEEP_ARGS 1024          /* argv/offs entries kept between requests */
#define KEEP_INLINE (64 * 1024) /* inline_copy bytes kept between requests */
#define LONG_STR_SIZE 21        /* string2ll rejects strings this long */

static const char E_MBULK_LEN[] = "Protocol error: invalid multibulk length";
static const char E_MBULK_BIG[] = "Protocol error: too big mbulk count string";
static const char E_BULK_LEN[] = "Protocol error: invalid bulk length";
static const char E_BULK_BIG[] = "Protocol error: too big bulk count string";
static const char E_UNAUTH_MBULK[] = "Protocol error: unauthenticated multibulk length";
static const char E_UNAUTH_BULK[] = "Protocol error: unauthenticated bulk length";
static const char E_INLINE_BIG[] = "Protocol error: too big inline request";
static const char E_QUOTES[] = "Protocol error: unbalanced quotes in request";
static const char E_DOLLAR[] = "Protocol error: expected '$', got '";
static const char E_AREA_REF[] = "Protocol error: invalid data area reference";

#define AREA_BIT ((size_t)1 << (sizeof(size_t) * CHAR_BIT - 1)) /* offs: an offset into area */

void resp_parser_init(resp_parser_t *p)
{
    memset(p, 0, sizeof *p);
    p->max_bulk = 512u << 20;
    p->max_args = 1024 * 1024;
    p->max_inline = 64 * 1024;
    p->state = ST_IDLE;
    p->bulk_len = -1;
}

void resp_parser_deinit(resp_parser_t *p)
{
    xfree(p->argv);
    xfree(p->offs);
    xfree(p->inline_copy);
    memset(p, 0, sizeof *p);
}

void resp_parser_reset(resp_parser_t *p)
{
    p->state = ST_IDLE;
    p->argc = 0;
    p->pos = 0;
    p->scan = 0;
    p->mb_left = 0;
    p->bulk_len = -1;
    p->nrefs = 0;
}

size_t resp_parser_need(const resp_parser_t *p)
{
    if (p->state != ST_BULK_DATA || p->bulk_len < BIG_ARG) return 0;
    size_t n = (size_t)p->bulk_len;
    if (n > SIZE_MAX - 2 - p->pos) return SIZE_MAX;
    return p->pos + n + 2;
}

static int fail(resp_parser_t *p, const char *msg)
{
    p->error = msg;
    resp_parser_reset(p);
    return RESP_ERROR;
}

/* Redis formats "got '%c'" and then maps \r and \n in the message to spaces. */
static int fail_dollar(resp_parser_t *p, char got)
{
    size_t n = sizeof E_DOLLAR - 1;
    _Static_assert(sizeof E_DOLLAR + 2 <= sizeof p->errbuf, "errbuf too small");
    memcpy(p->errbuf, E_DOLLAR, n);
    p->errbuf[n] = got == '\r' || got == '\n' ? ' ' : got;
    p->errbuf[n + 1] = '\'';
    p->errbuf[n + 2] = '\0';
    return fail(p, p->errbuf);
}

/* string2ll: same accepted set, same result. Returns 1 and sets *out, or 0. */
static int parse_ll(const char *s, size_t n, long long *out)
{
    if (n == 0 || n >= LONG_STR_SIZE) return 0;
    if (n == 1 && s[0] == '0') {
        *out = 0;
        return 1;
    }
    size_t i = s[0] == '-';
    if (i == n || s[i] < '1' || s[i] > '9') return 0;
    unsigned long long v = (unsigned long long)(s[i++] - '0');
    for (; i < n; i++) {
        unsigned d = (unsigned)(unsigned char)s[i] - '0';
        if (d > 9 || v > ULLONG_MAX / 10) return 0;
        v *= 10;
        if (v > ULLONG_MAX - d) return 0;
        v += d;
    }
    if (s[0] != '-') {
        if (v > LLONG_MAX) return 0;
        *out = (long long)v;
    } else {
        if (v > (unsigned long long)LLONG_MAX + 1) return 0;
        *out = v == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)v;
    }
    return 1;
}

/* Offset of the first `eol` byte at or past p->scan, or NPOS if it has not arrived (or never
 * will: a NUL came first, as strchr would see it). Advances p->scan past what it searched. */
static size_t find_eol(resp_parser_t *p, const char *buf, size_t len, int eol)
{
    if (p->scan == SCAN_BLOCKED) return NPOS;
    const char *s = buf + p->scan;
    size_t n = len - p->scan;
    const char *e = n ? memchr(s, eol, n) : NULL;
    size_t upto = e ? (size_t)(e - s) : n;
    if (upto && memchr(s, '\0', upto)) {
        p->scan = SCAN_BLOCKED;
        return NPOS;
    }
    p->scan = e ? (size_t)(e - buf) : len;
    return e ? p->scan : NPOS;
}

/* Makes room for one more argument. bound is the most arguments this request can have. */
static void grow_args(resp_parser_t *p, size_t bound)
{
    size_t cap = p->offs_cap ? p->offs_cap * 2 : 16;
    if (cap > bound) cap = bound > 16 ? bound : 16; /* bound > offs_cap here */
    p->offs = xrealloc(p->offs, cap * 2 * sizeof *p->offs);
    p->offs_cap = cap;
}

static inline void push_arg(resp_parser_t *p, size_t off, size_t len, size_t bound)
{
    if ((size_t)p->argc == p->offs_cap) grow_args(p, bound);
    p->offs[2 * p->argc] = off;
    p->offs[2 * p->argc + 1] = len;
    p->argc++;
}

static void make_argv(resp_parser_t *p, const char *base)
{
    if (p->argv_cap < (size_t)p->argc) {
        xfree(p->argv);
        p->argv = xmalloc(p->offs_cap * sizeof *p->argv);
        p->argv_cap = p->offs_cap;
    }
    for (int i = 0; i < p->argc; i++) {
        size_t off = p->offs[2 * i];
        p->argv[i].ptr = off & AREA_BIT ? p->area + (off & ~AREA_BIT) : base + off;
        p->argv[i].len = p->offs[2 * i + 1];
    }
}

/* Starts a new request; drops buffers a large earlier request left behind. */
static void begin(resp_parser_t *p, int state)
{
    if (p->offs_cap > KEEP_ARGS) {
        xfree(p->offs);
        xfree(p->argv);
        p->offs = NULL;
        p->argv = NULL;
        p->offs_cap = p->argv_cap = 0;
    }
    if (p->inline_cap > KEEP_INLINE) {
        xfree(p->inline_copy);
        p->inline_copy = NULL;
        p->inline_cap = 0;
    }
    resp_parser_reset(p);
    p->state = state;
}

/* The usual header, "<prefix><1 to 18 digits>\r" and one more byte, read straight from p->pos
 * before any search. Such a line holds no NUL and its number is valid unless it has a leading
 * zero, so this gives exactly what the general path would; on anything else it returns 0. */
static inline int fast_header(const resp_parser_t *p, const char *buf, size_t len, size_t *cr,
                              long long *n)
{
    size_t i = p->pos + 1;
    if (p->scan != p->pos || len < i + 3) return 0; /* a digit, '\r', one more byte */
    size_t lim = len - 2 < i + 18 ? len - 2 : i + 18, j = i;
    unsigned long long v = 0;
    for (; j < lim; j++) {
        unsigned d = (unsigned)(unsigned char)buf[j] - '0';
        if (d > 9) break;
        v = v * 10 + d;
    }
    if (j == i || buf[j] != '\r' || (buf[i] == '0' && j > i + 1)) return 0;
    *cr = j;
    *n = (long long)v;
    return 1;
}

/* Reads the header line at p->pos ("*<n>", or "$<len>" when bulk): sets *cr to its '\r' and
 * *ok to whether its number parsed into *n. Returns STEP_DONE, RESP_AGAIN or RESP_ERROR. */
static inline int read_header(resp_parser_t *p, const char *buf, size_t len, int bulk, size_t *cr,
                              long long *n, int *ok)
{
    size_t at = p->pos;
    *ok = 1;
    if ((!bulk || (at < len && buf[at] == '$')) && fast_header(p, buf, len, cr, n))
        return STEP_DONE;
    *cr = find_eol(p, buf, len, '\r');
    if (*cr == NPOS) {
        if (len - at <= p->max_inline) return RESP_AGAIN;
        return fail(p, bulk ? E_BULK_BIG : E_MBULK_BIG);
    }
    if (*cr + 1 >= len) return RESP_AGAIN; /* the byte after '\r' */
    if (bulk && buf[at] != '$') return fail_dollar(p, buf[at]);
    *ok = parse_ll(buf + at + 1, *cr - at - 1, n);
    return STEP_DONE;
}

/* "*<n>\r\n": RESP_EMPTY for n <= 0, STEP_DONE when bulks follow. */
static int read_count(resp_parser_t *p, const char *buf, size_t len, size_t *consumed)
{
    size_t cr;
    long long n;
    int ok, rc = read_header(p, buf, len, 0, &cr, &n, &ok);
    if (rc != STEP_DONE) return rc;
    if (!ok || n > INT_MAX || (n > 0 && (unsigned long long)n > p->max_args))
        return fail(p, E_MBULK_LEN);
    if (n > 10 && p->unauthenticated) return fail(p, E_UNAUTH_MBULK);
    p->pos = cr + 2;
    if (n <= 0) {
        *consumed = p->pos;
        resp_parser_reset(p);
        return RESP_EMPTY;
    }
    p->mb_left = n;
    p->scan = p->pos;
    p->state = ST_BULK_HDR;
    return STEP_DONE;
}

/* "$<len>\r\n" at p->pos. */
static int read_bulk_header(resp_parser_t *p, const char *buf, size_t len)
{
    size_t cr;
    long long n;
    int ok, rc = read_header(p, buf, len, 1, &cr, &n, &ok);
    if (rc != STEP_DONE) return rc;
    if (!ok || n < 0 || (unsigned long long)n > p->max_bulk || (unsigned long long)n > SIZE_MAX / 2)
        return fail(p, E_BULK_LEN);
    if (n > 16384 && p->unauthenticated) return fail(p, E_UNAUTH_BULK);
    p->pos = cr + 2;
    p->bulk_len = n;
    p->state = ST_BULK_DATA;
    return STEP_DONE;
}

/* "&<len>,<offset>\r\n" at p->pos (p->area set): an argument in the data area, bounds checked
 * (the area's size is fixed, so a view checked here stays inside it). */
static int read_area_ref(resp_parser_t *p, const char *buf, size_t len, size_t bound)
{
    size_t cr = find_eol(p, buf, len, '\r');
    if (cr == NPOS) return len - p->pos <= p->max_inline ? RESP_AGAIN : fail(p, E_AREA_REF);
    if (cr + 1 >= len) return RESP_AGAIN;
    const char *s = buf + p->pos + 1, *comma = memchr(s, ',', cr - p->pos - 1);
    long long n, off;
    if (!comma || !parse_ll(s, (size_t)(comma - s), &n) ||
        !parse_ll(comma + 1, (size_t)(buf + cr - comma - 1), &off) || n < 0 || off < 0 ||
        (unsigned long long)n > p->max_bulk || (unsigned long long)off > p->area_size ||
        (unsigned long long)n > p->area_size - (unsigned long long)off)
        return fail(p, E_AREA_REF);
    if (n > 16384 && p->unauthenticated) return fail(p, E_UNAUTH_BULK);
    push_arg(p, (size_t)off | AREA_BIT, (size_t)n, bound);
    p->nrefs++;
    p->pos = cr + 2;
    p->scan = p->pos;
    p->mb_left--;
    return STEP_DONE;
}

/* Reads bulks until the request is whole (STEP_DONE), more bytes are needed, or an error. */
static int read_bulks(resp_parser_t *p, const char *buf, size_t len)
{
    size_t bound = (size_t)p->argc + (size_t)p->mb_left;
    while (p->mb_left > 0) {
        if (p->state == ST_BULK_HDR && p->area && p->pos < len && buf[p->pos] == '&') {
            int rc = read_area_ref(p, buf, len, bound);
            if (rc != STEP_DONE) return rc;
            continue;
        }
        if (p->state == ST_BULK_HDR) {
            int rc = read_bulk_header(p, buf, len);
            if (rc != STEP_DONE) return rc;
        }
        size_t n = (size_t)p->bulk_len;
        if (len - p->pos < n + 2) return RESP_AGAIN;
        push_arg(p, p->pos, n, bound);
        p->pos += n + 2;
        p->scan = p->pos;
        p->mb_left--;
        p->bulk_len = -1;
        p->state = ST_BULK_HDR;
    }
    return STEP_DONE;
}

static int is_space(int c)
{
    return c == ' ' || (c >= '\t' && c <= '\r'); /* isspace() in the C locale */
}

static int hex_val(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static char unescape(int c)
{
    switch (c) {
    case 'n':
        return '\n';
    case 'r':
        return '\r';
    case 't':
        return '\t';
    case 'b':
        return '\b';
    case 'a':
        return '\a';
    default:
        return (char)c;
    }
}

/* One token of sdssplitargs, starting at a non-blank s[*ip]; unescaped bytes go to out[*op..].
 * Reading past the line end yields 0, as the NUL after Redis's copy of the line does (the line
 * holds no NUL: find_eol saw to that). Returns 0, or -1 on unbalanced quotes. Each output byte
 * consumes at least one input byte, so out needs no more room than the line. The loop mirrors
 * Redis's, branch for branch, hence its length. */
static int split_token(const char *s, size_t n, size_t *ip, char *out, size_t *op)
{
#define AT(k) ((k) < n ? (unsigned char)s[k] : 0)
    size_t i = *ip, o = *op;
    int inq = 0, insq = 0;
    for (;;) {
        int c = AT(i);
        if (inq) {
            if (c == '\\' && AT(i + 1) == 'x' && hex_val(AT(i + 2)) >= 0 &&
                hex_val(AT(i + 3)) >= 0) {
                out[o++] = (char)(hex_val(AT(i + 2)) * 16 + hex_val(AT(i + 3)));
                i += 4;
            } else if (c == '\\' && AT(i + 1)) {
                out[o++] = unescape(AT(i + 1));
                i += 2;
            } else if (c == '"') {
                if (AT(i + 1) && !is_space(AT(i + 1))) return -1;
                i++;
                break;
            } else if (!c) {
                return -1;
            } else {
                out[o++] = (char)c;
                i++;
            }
        } else if (insq) {
            if (c == '\\' && AT(i + 1) == '\'') {
                out[o++] = '\'';
                i += 2;
            } else if (c == '\'') {
                if (AT(i + 1) && !is_space(AT(i + 1))) return -1;
                i++;
                break;
            } else if (!c) {
                return -1;
            } else {
                out[o++] = (char)c;
                i++;
            }
        } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t' || !c) {
            if (c) i++;
            break;
        } else if (c == '"') {
            inq = 1;
            i++;
        } else if (c == '\'') {
            insq = 1;
            i++;
        } else {
            out[o++] = (char)c;
            i++;
        }
    }
#undef AT
    *ip = i;
    *op = o;
    return 0;
}

/* sdssplitargs over s[0..n) into p->inline_copy and p->offs. Returns 0 or -1. */
static int split_args(resp_parser_t *p, const char *s, size_t n)
{
    if (n > p->inline_cap) {
        xfree(p->inline_copy);
        p->inline_copy = xmalloc(n);
        p->inline_cap = n;
    }
    size_t i = 0, o = 0;
    for (;;) {
        while (i < n && is_space((unsigned char)s[i])) i++;
        if (i == n) return 0;
        size_t start = o, from = i;
        if (split_token(s, n, &i, p->inline_copy, &o) < 0) return -1;
        assert(i > from); /* the line holds no NUL, so every token consumes input */
        push_arg(p, start, o - start, SIZE_MAX);
    }
}

static int read_inline(resp_parser_t *p, const char *buf, size_t len, size_t *consumed)
{
    size_t nl = find_eol(p, buf, len, '\n');
    if (nl == NPOS) return len > p->max_inline ? fail(p, E_INLINE_BIG) : RESP_AGAIN;
    size_t end = nl > 0 && buf[nl - 1] == '\r' ? nl - 1 : nl;
    if (split_args(p, buf, end) < 0) return fail(p, E_QUOTES);
    *consumed = nl + 1;
    p->state = ST_IDLE;
    if (p->argc == 0) return RESP_EMPTY;
    make_argv(p, p->inline_copy);
    return RESP_OK;
}

int resp_parse(resp_parser_t *p, const char *buf, size_t len, size_t *consumed)
{
    *consumed = 0;
    if (p->state == ST_IDLE) {
        if (len == 0) return RESP_AGAIN;
        begin(p, buf[0] == '*' ? ST_COUNT : ST_INLINE);
    }
    assert(len >= p->pos && (p->scan == SCAN_BLOCKED || p->scan <= len));
    if (p->state == ST_INLINE) return read_inline(p, buf, len, consumed);
    if (p->state == ST_COUNT) {
        int rc = read_count(p, buf, len, consumed);
        if (rc != STEP_DONE) return rc;
    }
    int rc = read_bulks(p, buf, len);
    if (rc != STEP_DONE) return rc;
    *consumed = p->pos;
    p->state = ST_IDLE;
    make_argv(p, buf);
    return RESP_OK;
}
