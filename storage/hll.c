/* hll.c - HyperLogLog sketches in Redis 7.0's representation (see hll.h for the layout).
 *
 * Why this shape: the value is a plain string so that it travels through GET/SET, the AOF and
 * Redis's own files unchanged; the price is that every operation re-reads the opcodes of a
 * sparse value, which stays small (hll-sparse-max-bytes, 3000 by default) because an update
 * that would pass the limit converts it to dense first.
 *
 * Invariants: every walk over sparse opcodes stops at the string's end, and writes stay
 * inside the room reserved before (sparse_set reserves 4 bytes: the worst split turns a
 * 1-byte opcode into 5 bytes). The sparse update, the to-dense conversion and the estimator
 * follow Redis 7.0's hyperloglog.c step by step, so the bytes (opcode splits and joins,
 * promotion points) and counts come out the same.
 *
 * The byte past the end: an XZERO opcode cut by the end of a corrupted value takes its second
 * byte from data[len], the slot of a str_obj_t's terminator, as Redis reads its sds
 * terminator. Splitting such a cut opcode writes one byte of the new opcodes into that slot
 * (Redis sets the terminator, then copies the opcodes over it), so a later read sees that
 * byte, not 0, exactly as in Redis; a join of opcodes, a new value or any other string write
 * puts the 0 back. Only a corrupted value ever has a nonzero byte there. Loop thread. */
#include "storage/hll.h"

#include "common/alloc.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define HLL_Q (64 - HLL_P) /* hash bits left after the register index */
#define HLL_SEED 0xadc83b19ULL
#define HLL_ALPHA_INF 0.721347520444481703680 /* 0.5 / ln(2) */

/* sparse opcodes */
#define OP_XZERO_BIT 0x40
#define OP_VAL_BIT 0x80
#define VAL_MAX_VALUE 32
#define VAL_MAX_LEN 4
#define ZERO_MAX_LEN 64
#define XZERO_MAX_LEN 16384

static inline int op_is_zero(const uint8_t *p)
{
    return (*p & 0xc0) == 0;
}
static inline int op_is_xzero(const uint8_t *p)
{
    return (*p & 0xc0) == OP_XZERO_BIT;
}
static inline int op_is_val(const uint8_t *p)
{
    return (*p & OP_VAL_BIT) != 0;
}
static inline long zero_len(const uint8_t *p)
{
    return (*p & 0x3f) + 1;
}
/* An XZERO cut by the end of the string reads its second byte from the slot past the end,
 * as Redis reads the sds terminator there (see "the byte past the end" above). */
static inline long xzero_len(const uint8_t *p)
{
    return (((long)(*p & 0x3f) << 8) | p[1]) + 1;
}
static inline int val_value(const uint8_t *p)
{
    return ((*p >> 2) & 0x1f) + 1;
}
static inline long val_len(const uint8_t *p)
{
    return (*p & 0x3) + 1;
}
static inline uint8_t val_op(int value, long len)
{
    return (uint8_t)(((value - 1) << 2) | (len - 1) | OP_VAL_BIT);
}
/* Writes a ZERO (1 byte) or XZERO (2 bytes) run of len registers; returns the bytes used. */
static int put_zeros(uint8_t *p, long len)
{
    if (len > ZERO_MAX_LEN) {
        p[0] = (uint8_t)(((len - 1) >> 8) | OP_XZERO_BIT);
        p[1] = (uint8_t)((len - 1) & 0xff);
        return 2;
    }
    p[0] = (uint8_t)(len - 1);
    return 1;
}

/* ---- hashing ---- */

uint64_t hll_murmur64a(const void *key, size_t len, uint64_t seed)
{
    const uint64_t m = 0xc6a4a7935bd1e995ULL;
    const int r = 47;
    uint64_t h = seed ^ (len * m);
    const uint8_t *data = key;
    const uint8_t *end = data + (len - (len & 7));
    for (; data != end; data += 8) {
        uint64_t k;
        memcpy(&k, data, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        k = __builtin_bswap64(k);
#endif
        k *= m;
        k ^= k >> r;
        k *= m;
        h ^= k;
        h *= m;
    }
    size_t tail = len & 7;
    if (tail) {
        for (size_t i = tail; i-- > 0;) h ^= (uint64_t)data[i] << (8 * i);
        h *= m;
    }
    h ^= h >> r;
    h *= m;
    h ^= h >> r;
    return h;
}

int hll_pattern(const void *ele, size_t len, uint32_t *index)
{
    uint64_t hash = hll_murmur64a(ele, len, HLL_SEED);
    *index = (uint32_t)(hash & (HLL_REGISTERS - 1));
    hash >>= HLL_P;
    hash |= 1ULL << HLL_Q; /* the run ends by bit Q at the latest: count <= Q + 1 */
    return __builtin_ctzll(hash) + 1;
}

/* ---- header ---- */

int hll_is_valid(const void *v, size_t len)
{
    const uint8_t *p = v;
    if (len < HLL_HDR_SIZE || memcmp(p, "HYLL", 4) != 0) return 0;
    if (p[4] > HLL_SPARSE) return 0;
    return p[4] != HLL_DENSE || len == HLL_DENSE_SIZE;
}

int hll_cache_get(const uint8_t *p, uint64_t *card)
{
    if (p[15] & 0x80) return 0;
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | p[8 + i];
    *card = v;
    return 1;
}

void hll_cache_set(uint8_t *p, uint64_t card)
{
    for (int i = 0; i < 8; i++) p[8 + i] = (uint8_t)(card >> (8 * i));
}

void hll_cache_invalidate(uint8_t *p)
{
    p[15] |= 0x80;
}

str_obj_t *hll_new(void)
{
    /* one XZERO per 16384 registers: a single one */
    str_obj_t *s = str_new(NULL, HLL_HDR_SIZE + 2);
    uint8_t *p = (uint8_t *)s->data;
    memcpy(p, "HYLL", 4);
    p[4] = HLL_SPARSE;
    put_zeros(p + HLL_HDR_SIZE, HLL_REGISTERS);
    return s;
}

/* ---- dense registers ---- */

uint8_t hll_dense_get(const uint8_t *regs, uint32_t index)
{
    size_t byte = (size_t)index * HLL_BITS / 8;
    unsigned fb = (index * HLL_BITS) & 7;
    unsigned v = regs[byte] >> fb;
    if (fb > 8 - HLL_BITS) v |= (unsigned)regs[byte + 1] << (8 - fb);
    return (uint8_t)(v & HLL_REGISTER_MAX);
}

void hll_dense_set(uint8_t *regs, uint32_t index, uint8_t val)
{
    size_t byte = (size_t)index * HLL_BITS / 8;
    unsigned fb = (index * HLL_BITS) & 7;
    unsigned v = val & HLL_REGISTER_MAX;
    regs[byte] = (uint8_t)((regs[byte] & ~(HLL_REGISTER_MAX << fb)) | (v << fb));
    if (fb > 8 - HLL_BITS) {
        unsigned sh = 8 - fb;
        regs[byte + 1] = (uint8_t)((regs[byte + 1] & ~(HLL_REGISTER_MAX >> sh)) | (v >> sh));
    }
}

/* The histogram of the 16384 packed registers: 4 registers per 3 bytes. */
static void dense_histogram(const uint8_t *r, int64_t hist[64])
{
    for (int j = 0; j < HLL_REGISTERS / 4; j++, r += 3) {
        hist[r[0] & 63]++;
        hist[(r[0] >> 6 | r[1] << 2) & 63]++;
        hist[(r[1] >> 4 | r[2] << 4) & 63]++;
        hist[r[2] >> 2]++;
    }
}

static void dense_pack(uint8_t *regs, const uint8_t raw[HLL_REGISTERS])
{
    for (int j = 0; j < HLL_REGISTERS / 4; j++, regs += 3, raw += 4) {
        regs[0] = (uint8_t)(raw[0] | raw[1] << 6);
        regs[1] = (uint8_t)(raw[1] >> 2 | raw[2] << 4);
        regs[2] = (uint8_t)(raw[2] >> 4 | raw[3] << 2);
    }
}

/* ---- the estimator (Ertl, "New cardinality estimation algorithms for HyperLogLog
 * sketches", arXiv:1702.01284), as Redis 7.0 computes it ---- */

static double ertl_sigma(double x)
{
    if (x == 1.) return INFINITY;
    double y = 1, z = x, prev;
    do {
        x *= x;
        prev = z;
        z += x * y;
        y += y;
    } while (prev != z);
    return z;
}

static double ertl_tau(double x)
{
    if (x == 0. || x == 1.) return 0.;
    double y = 1.0, z = 1 - x, prev;
    do {
        x = sqrt(x);
        prev = z;
        y *= 0.5;
        z -= pow(1 - x, 2) * y;
    } while (prev != z);
    return z / 3;
}

static uint64_t estimate(const int64_t hist[64])
{
    double m = HLL_REGISTERS;
    double z = m * ertl_tau((m - (double)hist[HLL_Q + 1]) / m);
    for (int j = HLL_Q; j >= 1; j--) {
        z += (double)hist[j];
        z *= 0.5;
    }
    z += m * ertl_sigma((double)hist[0] / m);
    double q = HLL_ALPHA_INF * m * m / z;
    /* z is 0 only for opcodes covering no register (an invalid value, whose estimate is never
     * shown): keep the conversions defined */
    if (!(q >= 0 && q < 0x1p63)) return 0;
    double e = (double)llroundl(q);
    return (uint64_t)e;
}

uint64_t hll_count_registers(const uint8_t max[HLL_REGISTERS])
{
    int64_t hist[64] = {0};
    for (int i = 0; i < HLL_REGISTERS; i++) hist[max[i] & 63]++;
    return estimate(hist);
}

uint64_t hll_count(const uint8_t *p, size_t len, int *invalid)
{
    int64_t hist[64] = {0};
    if (p[4] == HLL_DENSE) {
        assert(len == HLL_DENSE_SIZE);
        dense_histogram(p + HLL_HDR_SIZE, hist);
        return estimate(hist);
    }
    const uint8_t *q = p + HLL_HDR_SIZE, *end = p + len;
    int64_t idx = 0;
    while (q < end) {
        long run;
        if (op_is_zero(q)) {
            run = zero_len(q++);
            hist[0] += run;
        } else if (op_is_xzero(q)) {
            run = xzero_len(q);
            q += 2;
            hist[0] += run;
        } else {
            run = val_len(q);
            hist[val_value(q++)] += run;
        }
        idx += run;
    }
    if (idx != HLL_REGISTERS && invalid) *invalid = 1;
    return estimate(hist);
}

/* ---- merging and conversion ---- */

int hll_merge(uint8_t max[HLL_REGISTERS], const uint8_t *p, size_t len)
{
    if (p[4] == HLL_DENSE) {
        if (len != HLL_DENSE_SIZE) return HLL_ERR_INVALID;
        const uint8_t *r = p + HLL_HDR_SIZE;
        for (int j = 0; j < HLL_REGISTERS; j += 4, r += 3) {
            uint8_t v[4] = {(uint8_t)(r[0] & 63), (uint8_t)((r[0] >> 6 | r[1] << 2) & 63),
                            (uint8_t)((r[1] >> 4 | r[2] << 4) & 63), (uint8_t)(r[2] >> 2)};
            for (int k = 0; k < 4; k++)
                if (v[k] > max[j + k]) max[j + k] = v[k];
        }
        return 0;
    }
    const uint8_t *q = p + HLL_HDR_SIZE, *end = p + len;
    long i = 0;
    while (q < end) {
        if (op_is_zero(q)) {
            i += zero_len(q++);
        } else if (op_is_xzero(q)) {
            i += xzero_len(q);
            q += 2;
        } else {
            long run = val_len(q);
            uint8_t v = (uint8_t)val_value(q++);
            /* past the last register: corrupted, also when the runs before ended exactly
             * at the last one (Redis with the fix for CVE-2025-32023, as Debian ships it) */
            if (i + run > HLL_REGISTERS) return HLL_ERR_INVALID;
            for (; run > 0; run--, i++)
                if (v > max[i]) max[i] = v;
        }
    }
    return i == HLL_REGISTERS ? 0 : HLL_ERR_INVALID;
}

int hll_to_dense(str_obj_t **sp)
{
    str_obj_t *s = *sp;
    uint8_t *p = (uint8_t *)s->data;
    if (p[4] == HLL_DENSE) return 0;
    uint8_t raw[HLL_REGISTERS];
    memset(raw, 0, sizeof(raw));
    if (hll_merge(raw, p, s->len) != 0) return HLL_ERR_INVALID;
    str_obj_t *n = str_try_new(NULL, HLL_DENSE_SIZE, HLL_DENSE_SIZE);
    if (!n) return HLL_ERR_NOMEM;
    n->h = s->h;
    memcpy(n->data, s->data, HLL_HDR_SIZE); /* magic, unused bytes and cache, as Redis */
    n->data[4] = HLL_DENSE;
    dense_pack((uint8_t *)n->data + HLL_HDR_SIZE, raw);
    obj_free(&s->h);
    *sp = n;
    return 0;
}

/* ---- updates ---- */

/* Makes room for extra bytes past the length (kept, and the byte past the end too). */
static int reserve(str_obj_t **sp, size_t extra)
{
    str_obj_t *s = *sp;
    if ((size_t)s->len + extra <= s->cap) return 0;
    uint32_t len = s->len;
    char past = s->data[len]; /* kept, as sdsMakeRoomFor keeps the terminator slot */
    str_obj_t *n = str_grow(s, (size_t)len + extra);
    if (!n) return HLL_ERR_NOMEM;
    n->len = len;
    n->data[len] = past;
    *sp = n;
    return 0;
}

static int dense_set(uint8_t *p, uint32_t index, uint8_t count)
{
    uint8_t *regs = p + HLL_HDR_SIZE;
    if (hll_dense_get(regs, index) >= count) return 0;
    hll_dense_set(regs, index, count);
    hll_cache_invalidate(p);
    return 1;
}

/* Joins neighbouring VAL opcodes of the same value (up to 4 registers) among the 5 opcodes
 * from p on, as Redis does after an update; returns how many bytes the value shrank. */
static size_t sparse_join(uint8_t *p, uint8_t *end)
{
    size_t removed = 0;
    int scan = 5;
    while (p < end && scan--) {
        if (op_is_xzero(p)) {
            p += 2;
            continue;
        }
        if (op_is_zero(p)) {
            p++;
            continue;
        }
        if (p + 1 < end && op_is_val(p + 1) && val_value(p) == val_value(p + 1)) {
            long len = val_len(p) + val_len(p + 1);
            if (len <= VAL_MAX_LEN) {
                p[1] = val_op(val_value(p), len);
                memmove(p, p + 1, (size_t)(end - p - 1));
                *--end = '\0';
                removed++;
                continue; /* the joined opcode may join its right neighbour too */
            }
        }
        p++;
    }
    return removed;
}

/* Writes into seq the opcodes that replace the one at p (registers first..last, value cur, 0
 * for a zero run) once register index holds count; returns their length (1..5). */
static int sparse_split(uint8_t *seq, long first, long last, long index, int cur, uint8_t count)
{
    int n = 0;
    if (index != first)
        n += cur ? (seq[n] = val_op(cur, index - first), 1) : put_zeros(seq + n, index - first);
    seq[n++] = val_op(count, 1);
    if (index != last)
        n += cur ? (seq[n] = val_op(cur, last - index), 1) : put_zeros(seq + n, last - index);
    return n;
}

/* Redis's hllSparseSet: find the opcode covering index, update it in place (or split it in
 * up to three), join equal neighbours; convert to dense when the value needs more than 32 or
 * the split would pass sparse_max bytes. About 60 lines: the cases share their pointers. */
static int sparse_set(str_obj_t **sp, uint32_t index, uint8_t count, size_t sparse_max)
{
    if (count > VAL_MAX_VALUE) goto promote;
    if (reserve(sp, 4) != 0) return HLL_ERR_NOMEM;
    str_obj_t *s = *sp;
    uint8_t *sparse = (uint8_t *)s->data + HLL_HDR_SIZE, *end = (uint8_t *)s->data + s->len;
    uint8_t *p = sparse, *prev = NULL;
    long first = 0, span = 0;
    while (p < end) {
        long oplen = 1;
        if (op_is_zero(p)) {
            span = zero_len(p);
        } else if (op_is_val(p)) {
            span = val_len(p);
        } else {
            span = xzero_len(p);
            oplen = 2;
        }
        if (index <= first + span - 1) break;
        prev = p;
        p += oplen;
        first += span;
    }
    if (span == 0 || p >= end) return HLL_ERR_INVALID;

    int is_xzero = op_is_xzero(p);
    uint8_t *next = p + (is_xzero ? 2 : 1);
    if (next >= end) next = NULL;
    int cur = op_is_val(p) ? val_value(p) : 0;
    long run = cur ? val_len(p) : is_xzero ? xzero_len(p) : zero_len(p);
    if (cur && cur >= count) return 0;
    if (run == 1 && !is_xzero) { /* a VAL or ZERO of one register: rewrite it */
        *p = val_op(count, 1);
    } else {
        uint8_t seq[5];
        int seqlen = sparse_split(seq, first, first + span - 1, index, cur, count);
        int delta = seqlen - (is_xzero ? 2 : 1);
        if (delta > 0 && (size_t)s->len + (size_t)delta > sparse_max) goto promote;
        if (delta && next) memmove(next + delta, next, (size_t)(end - next));
        s->len = (uint32_t)((long)s->len + delta);
        s->data[s->len] = '\0';
        memcpy(p, seq, (size_t)seqlen); /* past the end when p was a cut XZERO */
        end += delta;
    }
    s->len -= (uint32_t)sparse_join(prev ? prev : sparse, end);
    hll_cache_invalidate((uint8_t *)s->data);
    return 1;

promote : {
    int rc = hll_to_dense(sp);
    if (rc != 0) return rc;
    return dense_set((uint8_t *)(*sp)->data, index, count);
}
}

int hll_set(str_obj_t **sp, uint32_t index, uint8_t count, size_t sparse_max)
{
    uint8_t *p = (uint8_t *)(*sp)->data;
    assert(index < HLL_REGISTERS);
    if (p[4] == HLL_DENSE) return dense_set(p, index, count);
    if (p[4] != HLL_SPARSE) return HLL_ERR_INVALID;
    return sparse_set(sp, index, count, sparse_max);
}

int hll_add(str_obj_t **sp, const void *ele, size_t len, size_t sparse_max)
{
    uint32_t index;
    int count = hll_pattern(ele, len, &index);
    return hll_set(sp, index, (uint8_t)count, sparse_max);
}

/* ---- PFDEBUG DECODE ---- */

size_t hll_sparse_decode(const uint8_t *p, size_t len, char *out, size_t outlen)
{
    const uint8_t *q = p + HLL_HDR_SIZE, *end = p + len;
    size_t n = 0;
    char tmp[24];
    while (q < end) {
        int k;
        if (op_is_zero(q)) {
            k = snprintf(tmp, sizeof(tmp), "z:%ld ", zero_len(q));
            q++;
        } else if (op_is_xzero(q)) {
            k = snprintf(tmp, sizeof(tmp), "Z:%ld ", xzero_len(q));
            q += 2;
        } else {
            k = snprintf(tmp, sizeof(tmp), "v:%d,%ld ", val_value(q), val_len(q));
            q++;
        }
        if (out && n < outlen)
            memcpy(out + n, tmp, (size_t)k < outlen - n ? (size_t)k : outlen - n);
        n += (size_t)k;
    }
    return n ? n - 1 : 0; /* without the last space */
}

/* ---- PFSELFTEST ---- */

/* xorshift64*, so the self test does not disturb rand()'s sequence */
static uint64_t test_rand(uint64_t *st)
{
    *st ^= *st >> 12;
    *st ^= *st << 25;
    *st ^= *st >> 27;
    return *st * 0x2545f4914f6cdd1dULL;
}

static int selftest_registers(uint8_t *regs, uint64_t *rng, char *err, size_t errlen)
{
    uint8_t want[HLL_REGISTERS];
    for (int cycle = 0; cycle < 1000; cycle++) {
        for (uint32_t i = 0; i < HLL_REGISTERS; i++) {
            want[i] = (uint8_t)(test_rand(rng) & HLL_REGISTER_MAX);
            hll_dense_set(regs, i, want[i]);
        }
        for (uint32_t i = 0; i < HLL_REGISTERS; i++) {
            uint8_t got = hll_dense_get(regs, i);
            if (got != want[i]) {
                snprintf(err, errlen, "TESTFAILED Register %u should be %d but is %d", i, want[i],
                         got);
                return -1;
            }
        }
    }
    return 0;
}

/* The same elements into a dense value and a sparse one: the sparse one stays sparse while
 * small, both estimate the same, within 6 standard errors. */
static int selftest_estimates(str_obj_t **dense, str_obj_t **sparse, uint64_t seed,
                              size_t sparse_max, char *err, size_t errlen)
{
    double relerr = 1.04 / sqrt(HLL_REGISTERS);
    int64_t checkpoint = 1;
    for (int64_t j = 1; j <= 10000000; j++) {
        uint64_t ele = (uint64_t)j ^ seed;
        hll_add(dense, &ele, sizeof(ele), sparse_max);
        if (hll_add(sparse, &ele, sizeof(ele), sparse_max) == HLL_ERR_NOMEM) {
            snprintf(err, errlen, "TESTFAILED out of memory");
            return -1;
        }
        if (j != checkpoint) continue;
        const uint8_t *sp = (const uint8_t *)(*sparse)->data;
        if ((size_t)j < sparse_max / 2 && sp[4] != HLL_SPARSE) {
            snprintf(err, errlen, "TESTFAILED sparse encoding not used");
            return -1;
        }
        uint64_t cd = hll_count((const uint8_t *)(*dense)->data, (*dense)->len, NULL);
        if (cd != hll_count(sp, (*sparse)->len, NULL)) {
            snprintf(err, errlen, "TESTFAILED dense/sparse disagree");
            return -1;
        }
        int64_t abserr = checkpoint - (int64_t)cd;
        uint64_t maxerr = (uint64_t)ceil(relerr * 6 * (double)checkpoint);
        if (j == 10) maxerr = 1; /* collisions are likely enough at 10 */
        if (abserr < 0) abserr = -abserr;
        if (abserr > (int64_t)maxerr) {
            snprintf(err, errlen, "TESTFAILED Too big error. card:%llu abserr:%llu",
                     (unsigned long long)checkpoint, (unsigned long long)abserr);
            return -1;
        }
        checkpoint *= 10;
    }
    return 0;
}

int hll_selftest(size_t sparse_max, char *err, size_t errlen)
{
    uint64_t rng = 0x9e3779b97f4a7c15ULL ^ (uint64_t)(uintptr_t)&rng;
    str_obj_t *dense = hll_new(), *sparse = hll_new();
    int rc = -1;
    if (hll_to_dense(&dense) != 0) {
        snprintf(err, errlen, "TESTFAILED out of memory");
        goto done;
    }
    if (selftest_registers((uint8_t *)dense->data + HLL_HDR_SIZE, &rng, err, errlen)) goto done;
    memset(dense->data + HLL_HDR_SIZE, 0, HLL_DENSE_SIZE - HLL_HDR_SIZE);
    rc = selftest_estimates(&dense, &sparse, test_rand(&rng), sparse_max, err, errlen);
done:
    obj_free(&dense->h);
    obj_free(&sparse->h);
    return rc;
}
