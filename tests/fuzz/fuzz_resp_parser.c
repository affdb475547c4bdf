/* fuzz_resp_parser.c - libFuzzer target for resp/parser.c.
 *
 * Input layout: byte 0 picks the parser limits (small ones make every limit reachable) and,
 * with bit 6, a 256-byte shm data area that "&<len>,<offset>" arguments may reference, with
 * bit 7 the limits before AUTH (at most 10 arguments of at most 16384 bytes),
 * bytes 1..4 seed the generator that cuts the rest into reads; the rest is the byte stream a
 * client sends. The stream is parsed twice, as the server reads it: once whole, once in random
 * reads, each call on a fresh heap block of exactly the buffered size (so ASan catches a read
 * past the end or through a stale pointer after a "realloc").
 *
 * Invariants checked after every call:
 *  - consumed <= len; 0 on RESP_AGAIN and RESP_ERROR, > 0 on RESP_OK and RESP_EMPTY;
 *  - on RESP_OK, argc >= 1; a multibulk request has argc <= max_args, every argument within
 *    max_bulk and inside buf[0..consumed) (or the data area, nrefs of them); an inline request's arguments lie inside the
 *    parser's inline copy and add up to fewer bytes than the line;
 *  - on RESP_AGAIN, resp_parser_need is 0 or more than is buffered, and a pending inline
 *    line is at most max_inline bytes;
 *  - on RESP_ERROR, the message is a "Protocol error: ..." line without CR or LF;
 *  - how the stream is cut into reads changes nothing, except that an over-long line may fail
 *    earlier: the two runs agree on every request up to the first error of either.
 * Any violation aborts (__builtin_trap), which libFuzzer reports as a crash. */
#include "resp/resp.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) __builtin_trap();                                                             \
    } while (0)

/* One run's result: every request, serialized as "argc, (len, bytes)...", then how it ended. */
typedef struct trace {
    unsigned char *data;
    size_t len, cap;
    int nreq;
    int error; /* the run ended with RESP_ERROR */
} trace_t;

static void trace_put(trace_t *t, const void *p, size_t n)
{
    if (t->len + n > t->cap) {
        t->cap = (t->len + n) * 2 + 64;
        t->data = realloc(t->data, t->cap);
        CHECK(t->data);
    }
    memcpy(t->data + t->len, p, n);
    t->len += n;
}

static void trace_request(trace_t *t, const resp_parser_t *p)
{
    size_t argc = (size_t)p->argc;
    trace_put(t, &argc, sizeof argc);
    for (int i = 0; i < p->argc; i++) {
        trace_put(t, &p->argv[i].len, sizeof p->argv[i].len);
        trace_put(t, p->argv[i].ptr, p->argv[i].len);
    }
    t->nreq++;
}

#define AREA_SIZE 256
static char *area; /* exactly AREA_SIZE bytes on the heap, so ASan sees a read past it */

static void set_limits(resp_parser_t *p, uint8_t sel)
{
    if (sel & 64) {
        if (!area) area = calloc(1, AREA_SIZE);
        CHECK(area);
        p->area = area;
        p->area_size = AREA_SIZE;
    }
    static const size_t bulk[] = {16, 1024, 512u << 20, 1};
    static const size_t args[] = {4, 1024, 1024 * 1024, 1};
    static const size_t inl[] = {16, 64 * 1024, 3, 1024};
    p->max_bulk = bulk[sel & 3];
    p->max_args = args[(sel >> 2) & 3];
    p->max_inline = inl[(sel >> 4) & 3];
    p->unauthenticated = (sel & 128) != 0;
}

static int in_range(const char *ptr, size_t len, const char *lo, size_t n)
{
    return ptr >= lo && len <= n && (size_t)(ptr - lo) <= n - len;
}

static void check_request(const resp_parser_t *p, const char *buf, size_t consumed)
{
    CHECK(p->argc >= 1 && p->argv);
    if (buf[0] == '*') {
        CHECK((size_t)p->argc <= p->max_args);
        CHECK(!p->unauthenticated || p->argc <= 10);
        int refs = 0;
        for (int i = 0; i < p->argc; i++) {
            CHECK(p->argv[i].len <= p->max_bulk);
            CHECK(!p->unauthenticated || p->argv[i].len <= 16384);
            if (p->area && in_range(p->argv[i].ptr, p->argv[i].len, p->area, p->area_size))
                refs++;
            else
                CHECK(in_range(p->argv[i].ptr, p->argv[i].len, buf, consumed));
        }
        CHECK(refs == p->nrefs);
        return;
    }
    size_t total = 0;
    for (int i = 0; i < p->argc; i++) {
        CHECK(in_range(p->argv[i].ptr, p->argv[i].len, p->inline_copy, p->inline_cap));
        total += p->argv[i].len;
    }
    CHECK(total < consumed);
}

/* Parses every request buffered in q[0..*qlen) from a fresh exact-size copy, as the server's
 * read callback does, and drops what was consumed. Returns 0, or -1 after RESP_ERROR. */
static int drain(resp_parser_t *p, unsigned char *q, size_t *qlen, trace_t *t)
{
    size_t off = 0;
    int rc = 0;
    for (;;) {
        size_t len = *qlen - off, used = 12345;
        char *buf = malloc(len ? len : 1);
        CHECK(buf);
        memcpy(buf, q + off, len);
        int r = resp_parse(p, buf, len, &used);
        CHECK(used <= len);
        if (r == RESP_OK) {
            CHECK(used > 0);
            check_request(p, buf, used);
            trace_request(t, p);
        } else if (r == RESP_EMPTY) {
            CHECK(used > 0);
        } else if (r == RESP_AGAIN) {
            size_t need = resp_parser_need(p);
            CHECK(used == 0);
            CHECK(need == 0 || need > len);
            CHECK(len == 0 || buf[0] == '*' || len <= p->max_inline);
        } else {
            CHECK(r == RESP_ERROR && used == 0 && p->error);
            CHECK(strncmp(p->error, "Protocol error: ", 16) == 0);
            CHECK(!strpbrk(p->error, "\r\n"));
            t->error = 1;
            rc = -1;
        }
        free(buf);
        if (r != RESP_OK && r != RESP_EMPTY) break;
        off += used;
    }
    memmove(q, q + off, *qlen - off);
    *qlen -= off;
    return rc;
}

static uint32_t next_rand(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* Feeds data[0..n) in reads whose sizes come from seed (one read of n bytes when seed is 0). */
static void run(uint8_t limits, uint32_t seed, const uint8_t *data, size_t n, trace_t *t)
{
    resp_parser_t p;
    unsigned char *q = malloc(n ? n : 1);
    size_t qlen = 0, at = 0;
    CHECK(q);
    resp_parser_init(&p);
    set_limits(&p, limits);
    while (at < n) {
        size_t chunk = n - at;
        if (seed) {
            uint32_t r = next_rand(&seed);
            chunk = (r & 7) ? 1 + r % 7 : 1 + (r >> 3) % 512; /* mostly tiny reads */
            if (chunk > n - at) chunk = n - at;
        }
        memcpy(q + qlen, data + at, chunk);
        qlen += chunk;
        at += chunk;
        if (drain(&p, q, &qlen, t) < 0) break;
    }
    resp_parser_deinit(&p);
    free(q);
}

/* Requests seen by both runs must agree up to the first error of either. */
static void compare(const trace_t *whole, const trace_t *split)
{
    if (!whole->error && !split->error) {
        CHECK(whole->nreq == split->nreq && whole->len == split->len);
    }
    if (whole->nreq != split->nreq) {
        const trace_t *shorter = whole->nreq < split->nreq ? whole : split;
        CHECK(shorter->error);
    }
    size_t n = whole->len < split->len ? whole->len : split->len;
    CHECK(n == 0 || memcmp(whole->data, split->data, n) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5) return 0;
    uint8_t limits = data[0];
    uint32_t seed;
    memcpy(&seed, data + 1, 4);
    seed |= 1; /* never 0: the split run always cuts */
    trace_t whole = {0}, split = {0};
    run(limits, 0, data + 5, size - 5, &whole);
    run(limits, seed, data + 5, size - 5, &split);
    compare(&whole, &split);
    free(whole.data);
    free(split.data);
    return 0;
}
