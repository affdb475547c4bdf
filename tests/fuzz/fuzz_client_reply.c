/* fuzz_client_reply.c - libFuzzer target for client/reply.c, libcte's reply parser: the bytes
 * a hostile or broken server could send.
 *
 * Input layout: byte 0 picks the limits (small ones make every limit reachable) and a sink
 * (cte_get's buffer) of 1..32 bytes or none; bytes 1..4 seed the generator that cuts the rest
 * into feeds; the rest is the stream. It is parsed twice:
 * once whole and once in random feeds, each feed on a fresh heap block of exactly its size (so
 * ASan sees a read past the end or a pointer kept into a caller's buffer).
 *
 * Invariants checked: used <= len; a need-more status took every byte; a reply tree's strings
 * are NUL-terminated at their length and no longer than max_bulk (or max_line for simple
 * lines); an aggregate holds at most max_elems elements and nests at most 32 deep; only
 * documented statuses come back; an error is sticky; both runs produce the same replies (as a
 * digest of the tree) up to the first error of either. Any violation traps. */
#include "alloc.h"
#include "reply.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) __builtin_trap();                                                             \
    } while (0)

#define MAX_REPLIES 64

typedef struct run {
    uint64_t digest[MAX_REPLIES];
    int n, status;
} run_t;

static uint64_t mix(uint64_t h, uint64_t v)
{
    return (h ^ v) * 0x100000001b3ull;
}

/* Checks a tree's invariants and returns its digest. */
static uint64_t check_tree(const cte_reply_t *r, const cte_parser_limits_t *lim, int depth)
{
    uint64_t h = mix(0xcbf29ce484222325ull, (uint64_t)r->kind);
    CHECK(depth <= CTE_PARSER_MAX_DEPTH);
    if (r->str) {
        CHECK(r->str[r->len] == '\0');
        CHECK(r->len <= (lim->max_bulk > lim->max_line ? lim->max_bulk : lim->max_line));
        for (size_t i = 0; i < r->len; i++) h = mix(h, (unsigned char)r->str[i]);
    }
    size_t n = cte_reply_len(r);
    CHECK(n <= lim->max_elems);
    h = mix(h, (uint64_t)r->ival);
    for (size_t i = 0; i < n; i++) h = mix(h, check_tree(cte_reply_elem(r, i), lim, depth + 1));
    return h;
}

static uint32_t next_rand(uint32_t *s)
{
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}

static void parse(const uint8_t *data, size_t size, const cte_parser_limits_t *lim, uint32_t seed,
                  int whole, size_t sink_cap, run_t *out)
{
    cte_parser_t p;
    size_t pos = 0;
    char sink[32];
    cte__parser_init(&p, lim);
    if (sink_cap) {
        p.sink = sink;
        p.sink_cap = sink_cap;
    }
    out->n = 0;
    out->status = 0;
    while (pos < size && out->n < MAX_REPLIES) {
        size_t len = whole ? size - pos : 1 + next_rand(&seed) % 16;
        if (len > size - pos) len = size - pos;
        char *buf = malloc(len);
        memcpy(buf, data + pos, len);
        size_t used = 0;
        cte_reply_t *r = NULL;
        int rc = cte__parser_feed(&p, buf, len, &used, &r);
        free(buf);
        CHECK(rc == 0 || rc == 1 || rc == CTE_E_PROTOCOL || rc == CTE_E_LIMIT);
        if (rc < 0) {
            CHECK(r == NULL);
            CHECK(cte__parser_feed(&p, "+OK\r\n", 5, &used, &r) == rc); /* sticky */
            out->status = rc;
            break;
        }
        CHECK(used <= len);
        if (rc == 0) CHECK(used == len);
        if (rc == 1) {
            uint64_t h = check_tree(r, lim, 0);
            if (r->kind == CTE_REPLY_BULK && !r->str) { /* sunk: the sink holds its head */
                CHECK(sink_cap && r->len <= lim->max_bulk);
                for (size_t i = 0; i < r->len && i < sink_cap; i++)
                    h = mix(h, (unsigned char)sink[i]);
            }
            out->digest[out->n++] = h;
            cte_reply_free(r);
        }
        pos += used;
    }
    cte__parser_deinit(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 5) return 0;
    cte_parser_limits_t lim = {512u << 20, 64u << 10, 1u << 24};
    if (data[0] & 1)
        lim = (cte_parser_limits_t){1 + data[0] % 64, 4 + data[0] % 32, 1 + data[0] % 8};
    uint32_t seed;
    memcpy(&seed, data + 1, 4);
    run_t a, b;
    size_t sink_cap = data[0] & 2 ? 1 + (data[0] >> 2) % 32 : 0;
    parse(data + 5, size - 5, &lim, seed, 1, sink_cap, &a);
    parse(data + 5, size - 5, &lim, seed, 0, sink_cap, &b);
    int n = a.n < b.n ? a.n : b.n;
    for (int i = 0; i < n; i++) CHECK(a.digest[i] == b.digest[i]);
    if (!a.status && !b.status && a.n < MAX_REPLIES && b.n < MAX_REPLIES) CHECK(a.n == b.n);
    return 0;
}
