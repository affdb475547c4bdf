/* server/cmd/bits.c - the bit commands (SETBIT GETBIT BITCOUNT BITPOS BITOP BITFIELD BITFIELD_RO)
 * and LCS.
 *
 * Replies, errors, argument order and keyspace events as Redis 7.0 (bitops.c, t_string.c's
 * lcsCommand), including its quirks: BITCOUNT and BITPOS look the key up before they parse the
 * range (a missing key answers 0 / -1 whatever the range says), SETBIT and BITFIELD notify
 * "setbit" only when the string was created, grew or a value changed, BITOP stores with a "set"
 * event or deletes the target ("del") when every source is empty, BITFIELD with OVERFLOW FAIL
 * may create a zero-filled key without an event.
 *
 * Bit 0 is the most significant bit of the first byte. A string is one str_obj_t: writers grow
 * it with str_grow (which may move it: kv->val is then assigned directly) and mark it raw, as
 * Redis's dbUnshareStringValue makes the value a raw sds. Offsets are bounded by
 * proto-max-bulk-len (8 * proto-max-bulk-len bits). Fast paths: BITCOUNT counts 64-bit words
 * with the POPCNT instruction when the CPU has it (a SWAR count otherwise), BITPOS skips whole
 * words, BITOP combines words in cache-sized chunks. Lookups count keyspace hits and misses
 * where Redis's lookupKeyRead does. Runs on the loop thread. */
#include "common/alloc.h"
#include "common/util.h"
#include "server/command.h"
#include "server/reply.h"
#include "server/server.h"

#include <limits.h>
#include <stdint.h>
#include <string.h>

#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."
#define ERR_BIT_OFFSET "ERR bit offset is not an integer or out of range"
#define ERR_BIT_VALUE "ERR bit is not an integer or out of range"
#define ERR_BF_TYPE                                                                                \
    "ERR Invalid bitfield type. Use something like i16 u8. Note that u64 is not supported but "    \
    "i64 is."

/* ---- lookups: lookup_read/lookup_write of server/reply.h ---- */

static inline str_obj_t *as_str(kv_t *kv)
{
    return (str_obj_t *)kv->val;
}

/* 1 if kv holds a value of another type than string (WRONGTYPE replied). kv may be NULL. */
static inline int wrongtype(client_t *c, kv_t *kv)
{
    if (kv && kv->val->type != OBJ_STRING) {
        reply_wrongtype(c);
        return 1;
    }
    return 0;
}

static inline void changed(client_t *c, const resp_arg_t *key, int klass, const char *event)
{
    server_key_changed(c, c->db, key->ptr, key->len, klass, event);
}

/* ---- argument parsing ---- */

/* A bit offset (Redis's getBitOffsetFromArgument): a non-negative integer whose byte lies
 * below proto-max-bulk-len; with hash and bits > 0, "#N" means N * bits. The multiplication
 * wraps as Redis's does. Replies and returns -1 when bad. */
static int bit_offset_or_reply(client_t *c, const resp_arg_t *a, int hash, int bits, uint64_t *out)
{
    int usehash = a->len > 0 && a->ptr[0] == '#' && hash && bits > 0;
    long long v;
    if (!str_to_ll(a->ptr + usehash, a->len - (size_t)usehash, &v)) goto bad;
    if (usehash) v = (long long)((unsigned long long)v * (unsigned long long)bits);
    if (v < 0 || (!(c->flags & CLIENT_FAKE) && (v >> 3) >= srv.cfg.proto_max_bulk_len)) goto bad;
    *out = (uint64_t)v;
    return 0;
bad:
    reply_error(c, ERR_BIT_OFFSET);
    return -1;
}

/* A BITFIELD type: i1..i64 or u1..u63. Replies and returns -1 when bad. */
static int bitfield_type_or_reply(client_t *c, const resp_arg_t *a, int *sign, int *bits)
{
    long long n;
    if (a->len == 0 || (a->ptr[0] != 'i' && a->ptr[0] != 'u')) goto bad;
    *sign = a->ptr[0] == 'i';
    if (!str_to_ll(a->ptr + 1, a->len - 1, &n) || n < 1 || n > (*sign ? 64 : 63)) goto bad;
    *bits = (int)n;
    return 0;
bad:
    reply_error(c, ERR_BF_TYPE);
    return -1;
}

/* "BIT" -> 1, "BYTE" -> 0, else a syntax error replied and -1. */
static int bit_unit_or_reply(client_t *c, const resp_arg_t *a)
{
    if (arg_is(a, "bit")) return 1;
    if (arg_is(a, "byte")) return 0;
    reply_syntax_error(c);
    return -1;
}

/* ---- the string to write bits into ---- */

/* The string value of argv[1], created or zero-padded so that bit maxbit exists, and marked
 * raw (Redis's lookupStringForBitCommand). *dirty is 1 when it was created or grew. Returns
 * NULL with WRONGTYPE or OOM replied. */
static str_obj_t *string_for_bits(client_t *c, uint64_t maxbit, int *dirty)
{
    const resp_arg_t *key = &c->argv[1];
    size_t need = (size_t)(maxbit >> 3) + 1;
    kv_t *kv = lookup_write(c, key);
    str_obj_t *s;
    if (wrongtype(c, kv)) return NULL;
    *dirty = 0;
    if (!kv) {
        if (!(s = str_try_new(NULL, need, need))) goto oom;
        db_add(c->db, key->ptr, key->len, &s->h);
        *dirty = 1;
    } else {
        s = as_str(kv);
        if (need > s->len) {
            if (!(s = str_grow(s, need))) goto oom;
            kv->val = &s->h; /* the old block may be gone: see db_replace_value */
            *dirty = 1;
        }
    }
    s->h.flags = (uint16_t)((s->h.flags & ~STR_FLAGS_ENC) | STR_FLAG_RAW);
    return s;
oom:
    reply_error(c, ERR_OOM);
    return NULL;
}

/* ---- range normalization shared by BITCOUNT and BITPOS ---- */

/* A byte range [start, end] of a string of len bytes, and masks of the bits of the first and
 * last byte that lie outside a BIT range (Redis's first/last_byte_neg_mask). */
typedef struct bit_range {
    long long start, end;
    unsigned char first_neg, last_neg;
} bit_range_t;

/* Converts user indexes (negative from the end, clamped) to a byte range, as Redis does. */
static void range_normalize(bit_range_t *r, long long len, int isbit)
{
    long long total = isbit ? len << 3 : len;
    long long start = r->start, end = r->end;
    if (start < 0) start = total + start;
    if (end < 0) end = total + end;
    if (start < 0) start = 0;
    if (end < 0) end = 0;
    if (end >= total) end = total - 1;
    r->first_neg = r->last_neg = 0;
    if (isbit && start <= end) {
        r->first_neg = (unsigned char)(~((1u << (8 - (start & 7))) - 1) & 0xff);
        r->last_neg = (unsigned char)((1u << (7 - (end & 7))) - 1);
        start >>= 3;
        end >>= 3;
    }
    r->start = start;
    r->end = end;
}

/* ---- popcount ---- */

static inline uint64_t load64(const unsigned char *p)
{
    uint64_t w;
    memcpy(&w, p, sizeof(w));
    return w;
}

static inline uint64_t swar_popcount64(uint64_t x)
{
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (x * 0x0101010101010101ull) >> 56;
}

static uint64_t popcount_swar(const unsigned char *p, size_t n)
{
    uint64_t bits = 0;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) bits += swar_popcount64(load64(p + i));
    for (; i < n; i++) bits += swar_popcount64(p[i]);
    return bits;
}

#if defined(__x86_64__) && defined(__GNUC__)
/* Four independent counters so the POPCNTs of one round do not wait on each other. */
__attribute__((target("popcnt"))) static uint64_t popcount_hw(const unsigned char *p, size_t n)
{
    uint64_t c0 = 0, c1 = 0, c2 = 0, c3 = 0;
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        c0 += (uint64_t)__builtin_popcountll(load64(p + i));
        c1 += (uint64_t)__builtin_popcountll(load64(p + i + 8));
        c2 += (uint64_t)__builtin_popcountll(load64(p + i + 16));
        c3 += (uint64_t)__builtin_popcountll(load64(p + i + 24));
    }
    for (; i + 8 <= n; i += 8) c0 += (uint64_t)__builtin_popcountll(load64(p + i));
    for (; i < n; i++) c1 += (uint64_t)__builtin_popcount(p[i]);
    return c0 + c1 + c2 + c3;
}
#endif

/* Number of set bits in p[0..n). */
static uint64_t popcount(const unsigned char *p, size_t n)
{
#if defined(__x86_64__) && defined(__GNUC__)
    static int has_popcnt = -1;
    if (has_popcnt < 0) {
        __builtin_cpu_init();
        has_popcnt = __builtin_cpu_supports("popcnt") != 0;
    }
    if (has_popcnt) return popcount_hw(p, n);
#endif
    return popcount_swar(p, n);
}

/* ---- bit position ---- */

/* Position of the first bit equal to bit in p[0..n) (Redis's redisBitpos): -1 when bit is 1
 * and there is none; when bit is 0 and there is none, n * 8 (the string reads as zero padded on
 * the right). */
static long long bitpos_scan(const unsigned char *p, size_t n, int bit)
{
    const uint64_t skipw = bit ? 0 : UINT64_MAX;
    const unsigned char skip = bit ? 0 : 0xff;
    size_t i = 0;
    if (bit) {
        while (i + 32 <= n &&
               (load64(p + i) | load64(p + i + 8) | load64(p + i + 16) | load64(p + i + 24)) == 0)
            i += 32;
    } else {
        while (i + 32 <= n && (load64(p + i) & load64(p + i + 8) & load64(p + i + 16) &
                               load64(p + i + 24)) == UINT64_MAX)
            i += 32;
    }
    while (i + 8 <= n && load64(p + i) == skipw) i += 8;
    while (i < n && p[i] == skip) i++;
    if (i == n) return bit ? -1 : (long long)n * 8;
    unsigned b = bit ? p[i] : (unsigned char)~p[i];
    return (long long)i * 8 + (__builtin_clz(b) - (int)(sizeof(unsigned) * 8 - 8));
}

/* ---- SETBIT / GETBIT ---- */

static void setbit_cmd(client_t *c)
{
    uint64_t offset;
    long long on;
    int dirty;
    if (bit_offset_or_reply(c, &c->argv[2], 0, 0, &offset)) return;
    if (arg_ll_or_reply(c, &c->argv[3], &on, ERR_BIT_VALUE)) return;
    if (on & ~1LL) {
        reply_error(c, ERR_BIT_VALUE);
        return;
    }
    str_obj_t *s = string_for_bits(c, offset, &dirty);
    if (!s) return;
    unsigned char *byte = (unsigned char *)s->data + (offset >> 3);
    unsigned mask = 1u << (7 - (offset & 7));
    int old = (*byte & mask) != 0;
    if (dirty || old != on) {
        *byte = (unsigned char)(on ? (*byte | mask) : (*byte & ~mask));
        changed(c, &c->argv[1], NOTIFY_STRING, "setbit");
    }
    reply_int(c, old);
}

static void getbit_cmd(client_t *c)
{
    uint64_t offset;
    if (bit_offset_or_reply(c, &c->argv[2], 0, 0, &offset)) return;
    kv_t *kv = lookup_read(c, &c->argv[1]);
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    if (wrongtype(c, kv)) return;
    const str_obj_t *s = as_str(kv);
    uint64_t byte = offset >> 3;
    int bit = byte < s->len && (((unsigned char)s->data[byte] >> (7 - (offset & 7))) & 1);
    reply_int(c, bit);
}

/* ---- BITCOUNT ---- */

static void bitcount_cmd(client_t *c)
{
    bit_range_t r;
    int isbit = 0;
    kv_t *kv = lookup_read(c, &c->argv[1]);
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    if (wrongtype(c, kv)) return;
    const str_obj_t *s = as_str(kv);
    const unsigned char *p = (const unsigned char *)s->data;
    if (c->argc == 4 || c->argc == 5) {
        if (arg_ll_or_reply(c, &c->argv[2], &r.start, NULL)) return;
        if (arg_ll_or_reply(c, &c->argv[3], &r.end, NULL)) return;
        if (r.start < 0 && r.end < 0 && r.start > r.end) {
            reply_int(c, 0);
            return;
        }
        if (c->argc == 5 && (isbit = bit_unit_or_reply(c, &c->argv[4])) < 0) return;
        range_normalize(&r, s->len, isbit);
    } else if (c->argc == 2) {
        r.start = 0;
        r.end = (long long)s->len - 1;
        r.first_neg = r.last_neg = 0;
    } else {
        reply_syntax_error(c);
        return;
    }
    if (r.start > r.end) {
        reply_int(c, 0);
        return;
    }
    uint64_t count = popcount(p + r.start, (size_t)(r.end - r.start + 1));
    /* the bits of the edge bytes that lie outside a BIT range were counted: take them off */
    if (r.first_neg || r.last_neg) {
        count -= (uint64_t)__builtin_popcount(p[r.start] & r.first_neg);
        count -= (uint64_t)__builtin_popcount(p[r.end] & r.last_neg);
    }
    reply_int(c, (long long)count);
}

/* ---- BITPOS ---- */

/* Redis's bitposCommand search over the normalized range r (start <= end) of p. */
static long long bitpos_in_range(const unsigned char *p, bit_range_t r, int bit, int end_given)
{
    long long start = r.start, end = r.end;
    long long bytes = end - start + 1, pos = -1;
    unsigned char tmp;
    if (r.first_neg) {
        tmp = bit ? (unsigned char)(p[start] & ~r.first_neg)
                  : (unsigned char)(p[start] | r.first_neg);
        if (r.last_neg && bytes == 1)
            tmp = bit ? (unsigned char)(tmp & ~r.last_neg) : (unsigned char)(tmp | r.last_neg);
        pos = bitpos_scan(&tmp, 1, bit);
        if (bytes == 1 || (pos != -1 && pos != 8)) goto result;
        start++;
        bytes--;
    }
    /* the last byte is searched on its own when it has bits outside the range */
    long long cur = bytes - (r.last_neg ? 1 : 0);
    if (cur > 0) {
        pos = bitpos_scan(p + start, (size_t)cur, bit);
        if (bytes == cur || (pos != -1 && pos != cur << 3)) goto result;
        start += cur;
        bytes -= cur;
    }
    tmp = bit ? (unsigned char)(p[end] & ~r.last_neg) : (unsigned char)(p[end] | r.last_neg);
    pos = bitpos_scan(&tmp, 1, bit);
result:
    /* with an explicit end, the right of the range is not zero padded: no clear bit found */
    if (end_given && bit == 0 && pos == bytes << 3) return -1;
    if (pos != -1) pos += start << 3;
    return pos;
}

static void bitpos_cmd(client_t *c)
{
    long long bit;
    bit_range_t r;
    int isbit = 0, end_given = 0;
    if (arg_ll_or_reply(c, &c->argv[2], &bit, NULL)) return;
    if (bit != 0 && bit != 1) {
        reply_error(c, "ERR The bit argument must be 1 or 0.");
        return;
    }
    kv_t *kv = lookup_read(c, &c->argv[1]);
    if (!kv) {
        /* a missing key is an endless run of zero bits */
        reply_int(c, bit ? -1 : 0);
        return;
    }
    if (wrongtype(c, kv)) return;
    const str_obj_t *s = as_str(kv);
    long long len = s->len;
    if (c->argc >= 4 && c->argc <= 6) {
        if (arg_ll_or_reply(c, &c->argv[3], &r.start, NULL)) return;
        if (c->argc == 6 && (isbit = bit_unit_or_reply(c, &c->argv[5])) < 0) return;
        if (c->argc >= 5) {
            if (arg_ll_or_reply(c, &c->argv[4], &r.end, NULL)) return;
            end_given = 1;
        } else {
            r.end = isbit ? (len << 3) + 7 : len - 1;
        }
        range_normalize(&r, len, isbit);
    } else if (c->argc == 3) {
        r.start = 0;
        r.end = len - 1;
        r.first_neg = r.last_neg = 0;
    } else {
        reply_syntax_error(c);
        return;
    }
    if (r.start > r.end) {
        reply_int(c, -1); /* an empty range holds neither a 0 nor a 1 */
        return;
    }
    reply_int(c, bitpos_in_range((const unsigned char *)s->data, r, bit, end_given));
}

/* ---- BITOP ---- */

enum { BITOP_AND, BITOP_OR, BITOP_XOR, BITOP_NOT };

/* dst[0..n) op= src[0..n), a word at a time. */
static void bitop_apply(int op, unsigned char *dst, const unsigned char *src, size_t n)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t a = load64(dst + i), b = load64(src + i);
        a = op == BITOP_AND ? a & b : op == BITOP_OR ? a | b : a ^ b;
        memcpy(dst + i, &a, sizeof(a));
    }
    for (; i < n; i++)
        dst[i] = (unsigned char)(op == BITOP_AND  ? dst[i] & src[i]
                                 : op == BITOP_OR ? dst[i] | src[i]
                                                  : dst[i] ^ src[i]);
}

/* Computes the result into res[0..maxlen) in chunks that stay in the cache while every
 * source is combined into them. A source shorter than the result reads as zero bytes. */
static void bitop_compute(int op, unsigned char *res, size_t maxlen, const str_obj_t **src, int n)
{
    enum { CHUNK = 8192 };
    for (size_t a = 0; a < maxlen; a += CHUNK) {
        size_t b = maxlen - a < CHUNK ? maxlen : a + CHUNK;
        size_t len0 = src[0] ? src[0]->len : 0;
        size_t have = len0 > a ? (len0 < b ? len0 : b) - a : 0;
        if (have) memcpy(res + a, src[0]->data + a, have);
        memset(res + a + have, 0, b - a - have);
        if (op == BITOP_NOT) {
            size_t i = a;
            for (; i + 8 <= b; i += 8) {
                uint64_t w = ~load64(res + i);
                memcpy(res + i, &w, sizeof(w));
            }
            for (; i < b; i++) res[i] = (unsigned char)~res[i];
            continue;
        }
        for (int k = 1; k < n; k++) {
            size_t lk = src[k] ? src[k]->len : 0;
            size_t hk = lk > a ? (lk < b ? lk : b) - a : 0;
            if (hk) bitop_apply(op, res + a, (const unsigned char *)src[k]->data + a, hk);
            if (op == BITOP_AND && hk < b - a) memset(res + a + hk, 0, b - a - hk);
        }
    }
}

static int bitop_parse(const resp_arg_t *a)
{
    if (arg_is(a, "and")) return BITOP_AND;
    if (arg_is(a, "or")) return BITOP_OR;
    if (arg_is(a, "xor")) return BITOP_XOR;
    if (arg_is(a, "not")) return BITOP_NOT;
    return -1;
}

static void bitop_cmd(client_t *c)
{
    const resp_arg_t *target = &c->argv[2];
    int op = bitop_parse(&c->argv[1]);
    int n = c->argc - 3;
    size_t maxlen = 0;
    if (op < 0) {
        reply_syntax_error(c);
        return;
    }
    if (op == BITOP_NOT && c->argc != 4) {
        reply_error(c, "ERR BITOP NOT must be called with a single source key.");
        return;
    }
    const str_obj_t *stack_src[16];
    const str_obj_t **src = n <= 16 ? stack_src : try_malloc(sizeof(*src) * (size_t)n);
    if (!src) {
        reply_error(c, ERR_OOM);
        return;
    }
    for (int j = 0; j < n; j++) {
        kv_t *kv = lookup_read(c, &c->argv[j + 3]);
        if (wrongtype(c, kv)) goto done;
        src[j] = kv ? as_str(kv) : NULL; /* a missing key reads as an empty string */
        if (src[j] && src[j]->len > maxlen) maxlen = src[j]->len;
    }
    if (maxlen) {
        str_obj_t *res = str_try_new(NULL, 0, maxlen);
        if (!res) {
            reply_error(c, ERR_OOM);
            goto done;
        }
        bitop_compute(op, (unsigned char *)res->data, maxlen, src, n);
        res->len = (uint32_t)maxlen;
        res->data[maxlen] = '\0';
        res->h.flags |= STR_FLAG_RAW;
        /* the sources are not used past this point: the target may be one of them */
        kv_t *kv = lookup_write(c, target);
        if (kv) {
            db_replace_value(c->db, kv, &res->h);
            db_remove_expire(c->db, kv);
        } else {
            db_add(c->db, target->ptr, target->len, &res->h);
        }
        changed(c, target, NOTIFY_STRING, "set");
    } else {
        /* as Redis's dbDelete: an expired target is deleted (and reported) too */
        kv_t *kv = db_find(c->db, target->ptr, target->len);
        if (kv) {
            db_delete_kv(c->db, kv);
            changed(c, target, NOTIFY_GENERIC, "del");
        }
    }
    reply_int(c, (long long)maxlen);
done:
    if (src != stack_src) xfree(src);
}

/* ---- BITFIELD ---- */

enum { BF_WRAP, BF_SAT, BF_FAIL };
enum { BF_GET, BF_SET, BF_INCRBY };

typedef struct bf_op {
    uint64_t offset;
    int64_t i64; /* SET value or INCRBY increment */
    uint8_t opcode, owtype, bits, sign;
} bf_op_t;

/* The bits-wide unsigned integer at bit offset off of p (big endian bit order), a byte at a
 * time. */
static uint64_t bf_get_unsigned(const unsigned char *p, uint64_t off, int bits)
{
    const unsigned char *b = p + (off >> 3);
    int avail = 8 - (int)(off & 7), take = bits < avail ? bits : avail, rest = bits - take;
    uint64_t v = ((uint64_t)*b++ >> (avail - take)) & ((1u << take) - 1);
    for (; rest >= 8; rest -= 8) v = (v << 8) | *b++;
    if (rest) v = (v << rest) | ((uint64_t)*b >> (8 - rest));
    return v;
}

static int64_t bf_get_signed(const unsigned char *p, uint64_t off, int bits)
{
    uint64_t v = bf_get_unsigned(p, off, bits);
    if (bits < 64 && (v & ((uint64_t)1 << (bits - 1)))) v |= UINT64_MAX << bits;
    return (int64_t)v;
}

/* Stores the low bits of value at bit offset off of p. */
static void bf_set(unsigned char *p, uint64_t off, int bits, uint64_t value)
{
    unsigned char *b = p + (off >> 3);
    int avail = 8 - (int)(off & 7), take = bits < avail ? bits : avail, rest = bits - take;
    unsigned mask = ((1u << take) - 1) << (avail - take);
    *b = (unsigned char)((*b & ~mask) | (((unsigned)(value >> rest) << (avail - take)) & mask));
    b++;
    for (; rest >= 8; rest -= 8) *b++ = (unsigned char)(value >> (rest - 8));
    if (rest) {
        unsigned m = (0xffu << (8 - rest)) & 0xff;
        *b = (unsigned char)((*b & ~m) | (((unsigned)value << (8 - rest)) & m));
    }
}

/* Redis's checkUnsignedBitfieldOverflow: 0 if value + incr fits in bits, else 1 (overflow)
 * or -1 (underflow) with *limit the value to store under owtype WRAP or SAT. */
static int bf_overflow_unsigned(uint64_t value, int64_t incr, int bits, int owtype, uint64_t *limit)
{
    uint64_t max = bits == 64 ? UINT64_MAX : ((uint64_t)1 << bits) - 1;
    int64_t maxincr = (int64_t)(max - value);
    int64_t minincr = (int64_t)(0 - value);
    int r;
    if (value > max || (incr > 0 && incr > maxincr))
        r = 1;
    else if (incr < 0 && incr < minincr)
        r = -1;
    else
        return 0;
    if (owtype == BF_WRAP)
        *limit = (value + (uint64_t)incr) & max;
    else if (owtype == BF_SAT)
        *limit = r > 0 ? max : 0;
    return owtype == BF_WRAP ? 1 : r;
}

/* Redis's checkSignedBitfieldOverflow, with the same results (its intermediate overflows are
 * done in unsigned arithmetic here). */
static int bf_overflow_signed(int64_t value, int64_t incr, int bits, int owtype, int64_t *limit)
{
    int64_t max = bits == 64 ? INT64_MAX : (int64_t)(((uint64_t)1 << (bits - 1)) - 1);
    int64_t min = -max - 1;
    int64_t maxincr = (int64_t)((uint64_t)max - (uint64_t)value);
    int64_t minincr = (int64_t)((uint64_t)min - (uint64_t)value);
    int r;
    if (value > max || (bits != 64 && incr > maxincr) || (value >= 0 && incr > 0 && incr > maxincr))
        r = 1;
    else if (value < min || (bits != 64 && incr < minincr) ||
             (value < 0 && incr < 0 && incr < minincr))
        r = -1;
    else
        return 0;
    if (owtype == BF_WRAP) {
        uint64_t v = (uint64_t)value + (uint64_t)incr;
        if (bits < 64) {
            uint64_t mask = UINT64_MAX << bits;
            v = (v & ((uint64_t)1 << (bits - 1))) ? v | mask : v & ~mask;
        }
        *limit = (int64_t)v;
        return 1;
    }
    if (owtype == BF_SAT) *limit = r > 0 ? max : min;
    return r;
}

/* Parses the subcommands of BITFIELD into ops (room for argc/2 entries). Returns the number
 * of operations, or -1 with the error replied. *readonly is 1 when there is no SET or INCRBY;
 * *highest is the last bit a write reaches. */
static int bitfield_parse(client_t *c, bf_op_t *ops, int *readonly, uint64_t *highest)
{
    int owtype = BF_WRAP, n = 0;
    *readonly = 1;
    *highest = 0;
    for (int j = 2; j < c->argc; j++) {
        int remargs = c->argc - j - 1, opcode, sign, bits;
        const resp_arg_t *sub = &c->argv[j];
        long long i64 = 0;
        uint64_t offset;
        if (arg_is(sub, "get") && remargs >= 2) {
            opcode = BF_GET;
        } else if (arg_is(sub, "set") && remargs >= 3) {
            opcode = BF_SET;
        } else if (arg_is(sub, "incrby") && remargs >= 3) {
            opcode = BF_INCRBY;
        } else if (arg_is(sub, "overflow") && remargs >= 1) {
            const resp_arg_t *t = &c->argv[++j];
            if (arg_is(t, "wrap")) {
                owtype = BF_WRAP;
            } else if (arg_is(t, "sat")) {
                owtype = BF_SAT;
            } else if (arg_is(t, "fail")) {
                owtype = BF_FAIL;
            } else {
                reply_error(c, "ERR Invalid OVERFLOW type specified");
                return -1;
            }
            continue;
        } else {
            reply_syntax_error(c);
            return -1;
        }
        if (bitfield_type_or_reply(c, &c->argv[j + 1], &sign, &bits)) return -1;
        if (bit_offset_or_reply(c, &c->argv[j + 2], 1, bits, &offset)) return -1;
        if (opcode != BF_GET) {
            *readonly = 0;
            if (*highest < offset + (uint64_t)bits - 1) *highest = offset + (uint64_t)bits - 1;
            if (arg_ll_or_reply(c, &c->argv[j + 3], &i64, NULL)) return -1;
        }
        ops[n++] =
            (bf_op_t){offset, i64, (uint8_t)opcode, (uint8_t)owtype, (uint8_t)bits, (uint8_t)sign};
        j += opcode == BF_GET ? 2 : 3;
    }
    return n;
}

/* GET on a string that may be shorter than the field: reads from a zero-padded copy of the
 * (at most 9) bytes the field covers, as Redis does. */
static void bitfield_get(client_t *c, const str_obj_t *s, const bf_op_t *op)
{
    unsigned char buf[9] = {0};
    uint64_t byte = op->offset >> 3;
    for (int i = 0; s && i < 9 && byte + (uint64_t)i < s->len; i++)
        buf[i] = (unsigned char)s->data[byte + (uint64_t)i];
    uint64_t off = op->offset & 7;
    if (op->sign)
        reply_int(c, bf_get_signed(buf, off, op->bits));
    else
        reply_int(c, (long long)bf_get_unsigned(buf, off, op->bits));
}

/* SET or INCRBY on s (long enough). Returns 1 when it counts as a change. */
static int bitfield_write(client_t *c, str_obj_t *s, const bf_op_t *op, int dirty)
{
    unsigned char *p = (unsigned char *)s->data;
    int overflow;
    if (op->sign) {
        int64_t oldval = bf_get_signed(p, op->offset, op->bits), newval, wrapped = 0, ret;
        if (op->opcode == BF_INCRBY) {
            overflow = bf_overflow_signed(oldval, op->i64, op->bits, op->owtype, &wrapped);
            newval = overflow ? wrapped : oldval + op->i64;
            ret = newval;
        } else {
            newval = op->i64;
            overflow = bf_overflow_signed(newval, 0, op->bits, op->owtype, &wrapped);
            if (overflow) newval = wrapped;
            ret = oldval;
        }
        if (overflow && op->owtype == BF_FAIL) goto fail;
        reply_int(c, ret);
        bf_set(p, op->offset, op->bits, (uint64_t)newval);
        return dirty || oldval != newval;
    } else {
        uint64_t oldval = bf_get_unsigned(p, op->offset, op->bits), newval, wrapped = 0, ret;
        if (op->opcode == BF_INCRBY) {
            newval = oldval + (uint64_t)op->i64;
            overflow = bf_overflow_unsigned(oldval, op->i64, op->bits, op->owtype, &wrapped);
            if (overflow) newval = wrapped;
            ret = newval;
        } else {
            newval = (uint64_t)op->i64;
            overflow = bf_overflow_unsigned(newval, 0, op->bits, op->owtype, &wrapped);
            if (overflow) newval = wrapped;
            ret = oldval;
        }
        if (overflow && op->owtype == BF_FAIL) goto fail;
        reply_int(c, (long long)ret);
        bf_set(p, op->offset, op->bits, newval);
        return dirty || oldval != newval;
    }
fail:
    reply_null(c); /* OVERFLOW FAIL: nothing written */
    return 0;
}

static void bitfield_generic(client_t *c, int ro)
{
    bf_op_t stack_ops[16], *ops = stack_ops;
    size_t room = (size_t)c->argc / 2;
    int readonly, dirty = 0;
    uint64_t highest;
    str_obj_t *s = NULL;
    if (room > 16 && !(ops = try_malloc(sizeof(*ops) * room))) {
        reply_error(c, ERR_OOM);
        return;
    }
    int n = bitfield_parse(c, ops, &readonly, &highest);
    if (n < 0) goto done;
    if (readonly) {
        kv_t *kv = lookup_read(c, &c->argv[1]);
        if (wrongtype(c, kv)) goto done;
        s = kv ? as_str(kv) : NULL;
    } else {
        if (ro) {
            reply_error(c, "ERR BITFIELD_RO only supports the GET subcommand");
            goto done;
        }
        if (!(s = string_for_bits(c, highest, &dirty))) goto done;
    }
    reply_array(c, n);
    long long changes = 0;
    for (int j = 0; j < n; j++) {
        if (ops[j].opcode == BF_GET)
            bitfield_get(c, s, &ops[j]);
        else
            changes += bitfield_write(c, s, &ops[j], dirty);
    }
    if (changes) {
        changed(c, &c->argv[1], NOTIFY_STRING, "setbit");
        srv.dirty += changes - 1; /* Redis counts every change; changed() counted one */
    }
done:
    if (ops != stack_ops) xfree(ops);
}

static void bitfield_cmd(client_t *c)
{
    bitfield_generic(c, 0);
}

static void bitfield_ro_cmd(client_t *c)
{
    bitfield_generic(c, 1);
}

/* ---- LCS ---- */

/* Emits one IDX match: [[a_start, a_end], [b_start, b_end]] (+ the length). */
static void lcs_reply_match(client_t *c, uint32_t as, uint32_t ae, uint32_t bs, uint32_t be,
                            int withmatchlen)
{
    reply_array(c, 2 + withmatchlen);
    reply_array(c, 2);
    reply_int(c, as);
    reply_int(c, ae);
    reply_array(c, 2);
    reply_int(c, bs);
    reply_int(c, be);
    if (withmatchlen) reply_int(c, ae - as + 1);
}

/* The dynamic programming table of Redis's lcsCommand: cell (i, j) is the LCS length of
 * a[0..i) and b[0..j). Walked backwards from the end to rebuild the LCS and its matching
 * ranges; the reply and its quirks follow Redis's code step for step. */
static void lcs_reply(client_t *c, const unsigned char *a, uint32_t alen, const unsigned char *b,
                      uint32_t blen, const uint32_t *lcs, int getidx, int getlen,
                      long long minmatchlen, int withmatchlen)
{
#define LCS(I, J) lcs[(size_t)(J) + (size_t)(I) * ((size_t)blen + 1)]
    uint32_t total = LCS(alen, blen), idx = total;
    uint32_t as = alen, ae = 0, bs = 0, be = 0; /* as == alen: no current range */
    int computelcs = getidx || !getlen;
    char *result = NULL;
    size_t arrh = 0;
    long long nranges = 0;
    if (computelcs && !(result = try_malloc((size_t)total + 1))) {
        reply_error(c, ERR_OOM);
        return;
    }
    if (getidx) {
        reply_map(c, 2);
        reply_bulk_cstr(c, "matches");
        arrh = reply_defer(c);
    }
    uint32_t i = alen, j = blen;
    while (computelcs && i > 0 && j > 0) {
        int emit = 0;
        if (a[i - 1] == b[j - 1]) {
            result[idx - 1] = (char)a[i - 1];
            if (as == alen) {
                as = ae = i - 1;
                bs = be = j - 1;
            } else if (as == i && bs == j) {
                as--; /* the range extends backwards */
                bs--;
            } else {
                emit = 1;
            }
            if (as == 0 || bs == 0) emit = 1;
            idx--;
            i--;
            j--;
        } else {
            if (LCS(i - 1, j) > LCS(i, j - 1))
                i--;
            else
                j--;
            if (as != alen) emit = 1;
        }
        if (emit) {
            uint32_t matchlen = ae - as + 1;
            if (getidx && (minmatchlen == 0 || matchlen >= minmatchlen)) {
                lcs_reply_match(c, as, ae, bs, be, withmatchlen);
                nranges++;
            }
            as = alen;
        }
    }
    if (getidx) {
        reply_bulk_cstr(c, "len");
        reply_int(c, total);
        reply_defer_finish(c, arrh, '*', nranges);
    } else if (getlen) {
        reply_int(c, total);
    } else {
        reply_bulk(c, result, total);
    }
    xfree(result);
#undef LCS
}

static void lcs_cmd(client_t *c)
{
    int getlen = 0, getidx = 0, withmatchlen = 0;
    long long minmatchlen = 0;
    kv_t *ka = lookup_read(c, &c->argv[1]);
    kv_t *kb = lookup_read(c, &c->argv[2]);
    if ((ka && ka->val->type != OBJ_STRING) || (kb && kb->val->type != OBJ_STRING)) {
        reply_error(c, "ERR The specified keys must contain string values");
        return;
    }
    for (int j = 3; j < c->argc; j++) {
        const resp_arg_t *opt = &c->argv[j];
        int moreargs = c->argc - 1 - j;
        if (arg_is(opt, "idx")) {
            getidx = 1;
        } else if (arg_is(opt, "len")) {
            getlen = 1;
        } else if (arg_is(opt, "withmatchlen")) {
            withmatchlen = 1;
        } else if (arg_is(opt, "minmatchlen") && moreargs) {
            if (arg_ll_or_reply(c, &c->argv[++j], &minmatchlen, NULL)) return;
            if (minmatchlen < 0) minmatchlen = 0;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    if (getidx && getlen) {
        reply_error(c, "ERR If you want both the length and indexes, please just use IDX.");
        return;
    }
    const str_obj_t *sa = ka ? as_str(ka) : NULL, *sb = kb ? as_str(kb) : NULL;
    uint64_t alen = sa ? sa->len : 0, blen = sb ? sb->len : 0;
    if (alen >= UINT32_MAX - 1 || blen >= UINT32_MAX - 1) {
        reply_error(c, "ERR String too long for LCS");
        return;
    }
    unsigned long long cells = (alen + 1) * (blen + 1);
    unsigned long long bytes = cells * sizeof(uint32_t);
    uint32_t *lcs = NULL;
    if (bytes < SIZE_MAX && bytes / cells == sizeof(uint32_t)) {
        if (bytes > (unsigned long long)srv.cfg.proto_max_bulk_len) {
            reply_error(c, "ERR Insufficient memory, transient memory for LCS exceeds "
                           "proto-max-bulk-len");
            return;
        }
        lcs = try_malloc((size_t)bytes);
    }
    if (!lcs) {
        reply_error(c, "ERR Insufficient memory, failed allocating transient memory for LCS");
        return;
    }
    const unsigned char *a = sa ? (const unsigned char *)sa->data : (const unsigned char *)"";
    const unsigned char *b = sb ? (const unsigned char *)sb->data : (const unsigned char *)"";
    size_t w = (size_t)blen + 1;
    for (size_t j = 0; j < w; j++) lcs[j] = 0;
    for (size_t i = 1; i <= alen; i++) {
        uint32_t *row = lcs + i * w, *prev = row - w;
        unsigned char ch = a[i - 1];
        row[0] = 0;
        for (size_t j = 1; j < w; j++) {
            if (ch == b[j - 1])
                row[j] = prev[j - 1] + 1;
            else
                row[j] = prev[j] > row[j - 1] ? prev[j] : row[j - 1];
        }
    }
    lcs_reply(c, a, (uint32_t)alen, b, (uint32_t)blen, lcs, getidx, getlen, minmatchlen,
              withmatchlen);
    xfree(lcs);
}

/* ---- table ---- */

/* BITFIELD only reads its key when every operation is a GET or OVERFLOW (anything else,
 * SET, INCRBY or a syntax error, counts as a write), as Redis's variable_flags. */
static void bitfield_keyflags(int argc, const resp_arg_t *argv, int i, char *out)
{
    (void)i;
    int j = 2;
    while (j < argc) {
        int left = argc - j - 1;
        if (arg_is(&argv[j], "get") && left >= 2)
            j += 3;
        else if (arg_is(&argv[j], "overflow") && left >= 1)
            j += 2;
        else
            break;
    }
    strcpy(out, j >= argc ? "RO access" : "RW access update");
}

command_t cmds_bits[] = {
    {"setbit", setbit_cmd, 4, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "bitmap", "2.2.0",
     "Sets or clears the bit at offset in the string value stored at key", "O(1)",
     .key_flags = "RW access update"},
    {"getbit", getbit_cmd, 3, CMD_READONLY | CMD_FAST, 1, 1, 1, "bitmap", "2.2.0",
     "Returns the bit value at offset in the string value stored at key", "O(1)"},
    {"bitcount", bitcount_cmd, -2, CMD_READONLY, 1, 1, 1, "bitmap", "2.6.0",
     "Count set bits in a string", "O(N)"},
    {"bitpos", bitpos_cmd, -3, CMD_READONLY, 1, 1, 1, "bitmap", "2.8.7",
     "Find first bit set or clear in a string", "O(N)"},
    {"bitop", bitop_cmd, -4, CMD_WRITE | CMD_DENYOOM, 2, -1, 1, "bitmap", "2.6.0",
     "Perform bitwise operations between strings", "O(N)", .key_flags = "OW update|RO access"},
    {"bitfield", bitfield_cmd, -2, CMD_WRITE | CMD_DENYOOM, 1, 1, 1, "bitmap", "3.2.0",
     "Perform arbitrary bitfield integer operations on strings",
     "O(1) for each subcommand specified", .key_flags = "RW access update variable_flags",
     .keyflags = bitfield_keyflags},
    {"bitfield_ro", bitfield_ro_cmd, -2, CMD_READONLY | CMD_FAST, 1, 1, 1, "bitmap", "6.0.0",
     "Perform arbitrary bitfield integer operations on strings. Read-only variant of BITFIELD",
     "O(1) for each subcommand specified"},
    {"lcs", lcs_cmd, -3, CMD_READONLY, 1, 2, 1, "string", "7.0.0", "Find longest common substring",
     "O(N*M) where N and M are the lengths of s1 and s2, respectively"},
    {NULL},
};
