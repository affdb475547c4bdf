/* fuzz_hll.c - libFuzzer target for HyperLogLog values: storage/hll.c on strings a client
 * could SET, with any sparse opcodes after a valid header.
 *
 * Input layout: byte 0 picks the encoding (bit 0: sparse, else dense: the rest is repeated or
 * cut to exactly 12288 register bytes) and the sparse size limit (bits 1-2: 3000, 40, 0 or
 * 300); bytes 1-8 are the cached cardinality; the rest is the registers or opcodes. The last
 * bytes, read backwards in threes, are also register updates (index, count) applied in turn.
 *
 * Invariants checked:
 *  - every operation answers or reports HLL_ERR_INVALID, never anything else;
 *  - merging gives registers of at most 63, and the estimate of the merged registers equals
 *    hll_count's for a value that merges cleanly;
 *  - PFDEBUG DECODE's text has the length it announced;
 *  - a conversion to dense that succeeds gives exactly 12304 bytes and the same registers;
 *  - an update that reports a change leaves the register at least that high, in either
 *    encoding, and a dense value keeps its exact size.
 * ASan, UBSan and libFuzzer's leak check catch reads or writes out of bounds and leaks. */
#include "common/alloc.h"
#include "storage/hll.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "check failed: %s (line %d)\n", #cond, __LINE__);                      \
            abort();                                                                               \
        }                                                                                          \
    } while (0)

static const size_t limits[4] = {3000, 40, 0, 300};

static str_obj_t *value_from(const uint8_t *data, size_t size)
{
    int sparse = data[0] & 1;
    size_t body = size > 9 ? size - 9 : 0;
    size_t len = sparse ? HLL_HDR_SIZE + body : HLL_DENSE_SIZE;
    str_obj_t *s = str_new(NULL, len);
    uint8_t *p = (uint8_t *)s->data;
    memcpy(p, "HYLL", 4);
    p[4] = sparse ? HLL_SPARSE : HLL_DENSE;
    for (size_t i = 0; i < 8 && 1 + i < size; i++) p[8 + i] = data[1 + i];
    for (size_t i = HLL_HDR_SIZE; i < len && body; i++) p[i] = data[9 + (i - HLL_HDR_SIZE) % body];
    return s;
}

static void check_value(str_obj_t *s, uint8_t regs[HLL_REGISTERS], int *ok)
{
    const uint8_t *p = (const uint8_t *)s->data;
    CHECK(hll_is_valid(p, s->len));
    memset(regs, 0, HLL_REGISTERS);
    int rc = hll_merge(regs, p, s->len);
    CHECK(rc == 0 || rc == HLL_ERR_INVALID);
    *ok = rc == 0;
    for (int i = 0; i < HLL_REGISTERS; i++) CHECK(regs[i] <= HLL_REGISTER_MAX);
    int invalid = 0;
    uint64_t card = hll_count(p, s->len, &invalid);
    if (*ok) CHECK(!invalid && card == hll_count_registers(regs));
    if (hll_encoding_of(p) == HLL_SPARSE) {
        size_t n = hll_sparse_decode(p, s->len, NULL, 0);
        CHECK(n <= (size_t)(s->len - HLL_HDR_SIZE) * 8);
        char *text = xmalloc(n + 1);
        CHECK(hll_sparse_decode(p, s->len, text, n) == n);
        xfree(text);
    } else {
        CHECK(s->len == HLL_DENSE_SIZE);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    size_t max = limits[(data[0] >> 1) & 3];
    str_obj_t *s = value_from(data, size);
    static uint8_t regs[HLL_REGISTERS], after[HLL_REGISTERS];
    int ok;
    check_value(s, regs, &ok);

    /* a copy converted to dense holds the same registers */
    str_obj_t *d = str_new(s->data, s->len);
    int rc = hll_to_dense(&d);
    CHECK(rc == 0 || rc == HLL_ERR_INVALID);
    CHECK(rc == 0 || !ok);
    if (rc == 0) {
        int dense_ok;
        check_value(d, after, &dense_ok);
        CHECK(dense_ok && memcmp(regs, after, sizeof(regs)) == 0);
    }
    obj_free(&d->h);

    /* updates from the tail of the input */
    for (size_t k = 0; k < 16 && size >= 3 * (k + 1) + 1; k++) {
        const uint8_t *u = data + size - 3 * (k + 1);
        uint32_t index = ((uint32_t)u[0] << 8 | u[1]) & (HLL_REGISTERS - 1);
        uint8_t count = (uint8_t)(1 + u[2] % HLL_REGISTER_MAX);
        rc = hll_set(&s, index, count, max);
        CHECK(rc == 0 || rc == 1 || rc == HLL_ERR_INVALID);
        if (hll_encoding_of(s->data) == HLL_DENSE) CHECK(s->len == HLL_DENSE_SIZE);
        if (rc == HLL_ERR_INVALID) break;
        check_value(s, after, &ok);
        if (ok && rc == 1) CHECK(after[index] >= count);
    }
    obj_free(&s->h);
    return 0;
}
