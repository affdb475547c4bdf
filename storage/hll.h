/* hll.h - HyperLogLog sketches in Redis 7.0's exact string representation.
 *
 * A HyperLogLog is an ordinary string value (str_obj_t) whose bytes are the ones Redis writes,
 * so GET returns what Redis would and a string taken from Redis (SET) counts the same here:
 *
 *   offset  size  field
 *   0       4     magic "HYLL"
 *   4       1     encoding: 0 dense, 1 sparse (HLL_DENSE, HLL_SPARSE)
 *   5       3     unused, zero when we create them
 *   8       8     cached cardinality, little endian; bit 7 of byte 15 set = cache invalid
 *   16      ...   registers: dense = 16384 registers of 6 bits packed from the low bit of
 *                 each byte up (12288 bytes, total length exactly HLL_DENSE_SIZE); sparse =
 *                 run-length opcodes covering the 16384 registers in order:
 *                   00xxxxxx           ZERO:  xxxxxx + 1 registers (1..64) are 0
 *                   01xxxxxx yyyyyyyy  XZERO: (xxxxxx << 8 | yyyyyyyy) + 1 registers are 0
 *                   1vvvvvxx           VAL:   xx + 1 registers (1..4) hold vvvvv + 1 (1..32)
 *
 * An element is hashed with MurmurHash64A (seed 0xadc83b19): the low 14 bits pick the
 * register, and the position of the lowest set bit of the rest (1-based, at most 51) is the
 * value the register keeps the maximum of. The estimate is Ertl's improved estimator over the
 * histogram of register values, as Redis 7.0's hllCount.
 *
 * Strings arrive from clients (SET, SETRANGE), so nothing here trusts the bytes past the
 * header checks of hll_is_valid: every sparse walk is bounded by the string's length and a
 * malformed run is reported (HLL_ERR_INVALID), never followed out of bounds. Where Redis
 * reads the byte after the string (an XZERO opcode cut by the end of a corrupted value reads
 * the sds terminator slot), we read the byte after it too: every p[0..len) given here must
 * have p[len] readable, as a str_obj_t's data has. Updates of such a corrupted value may leave
 * a nonzero byte in that slot, as Redis does (hll.c explains), so corrupted values behave
 * exactly as in Redis.
 *
 * Functions that may grow or convert the value take str_obj_t **sp: on return *sp may be a
 * different block (the old one was reallocated or freed): the caller stores the new pointer
 * where the old one was (kv->val) without freeing anything. The object header (flags, access
 * clock) is kept. Pure code: no clients, no config (the sparse size limit is a parameter).
 * Loop thread (or any thread, on values it owns). */
#ifndef CTE_STORAGE_HLL_H
#define CTE_STORAGE_HLL_H

#include "storage/object.h"

#include <stddef.h>
#include <stdint.h>

#define HLL_P 14
#define HLL_REGISTERS (1 << HLL_P) /* 16384 */
#define HLL_BITS 6
#define HLL_REGISTER_MAX ((1 << HLL_BITS) - 1)
#define HLL_HDR_SIZE 16
#define HLL_DENSE_SIZE (HLL_HDR_SIZE + (HLL_REGISTERS * HLL_BITS + 7) / 8) /* 12304 */
#define HLL_SPARSE_MAX_BYTES_DEFAULT 3000 /* hll-sparse-max-bytes */

enum hll_encoding { HLL_DENSE = 0, HLL_SPARSE = 1 };

/* Results besides 0 and 1. */
#define HLL_ERR_INVALID (-1) /* corrupted sparse opcodes: Redis's INVALIDOBJ */
#define HLL_ERR_NOMEM (-2)   /* growing the value failed; the value is unchanged */

/* MurmurHash64A of p[0..len) with the given seed, reading the bytes little endian. */
uint64_t hll_murmur64a(const void *p, size_t len, uint64_t seed);
/* The register ele falls in (*index, < HLL_REGISTERS) and the value it proposes (1..51). */
int hll_pattern(const void *ele, size_t len, uint32_t *index);

/* 1 if p[0..len) passes Redis's checks for a HyperLogLog string (length >= 16, magic,
 * encoding 0 or 1, a dense one exactly HLL_DENSE_SIZE bytes), else 0. The sparse opcodes are
 * not checked here: operations report them. */
int hll_is_valid(const void *p, size_t len);
/* The encoding byte of a value that passed hll_is_valid. */
static inline int hll_encoding_of(const void *p)
{
    return ((const uint8_t *)p)[4];
}

/* A new empty sparse HyperLogLog (XZERO:16384, cache valid and 0), as PFADD creates it.
 * Aborts on OOM (18 bytes). */
str_obj_t *hll_new(void);

/* Adds ele: 1 if a register grew (the cache is then invalid), 0 if not, HLL_ERR_INVALID for
 * a corrupted sparse value, HLL_ERR_NOMEM. A sparse value whose update would pass
 * sparse_max bytes, or needs a value over 32, becomes dense first. *sp may move. */
int hll_add(str_obj_t **sp, const void *ele, size_t len, size_t sparse_max);
/* Raises register index to count (1..63) when it is lower: the same results as hll_add. */
int hll_set(str_obj_t **sp, uint32_t index, uint8_t count, size_t sparse_max);
/* Converts a sparse value to dense (header copied, encoding byte 0, cache kept); 0 also when
 * already dense, HLL_ERR_INVALID (value unchanged) or HLL_ERR_NOMEM. *sp may move. */
int hll_to_dense(str_obj_t **sp);

/* Raises max[i] to register i of the valid value p[0..len) for every i. 0, or
 * HLL_ERR_INVALID for corrupted sparse opcodes (max is then partly updated): runs that do
 * not add up to 16384 registers, or a VAL run past the last register, which Redis 7.0.15 as
 * Debian ships it (with the fix for CVE-2025-32023) refuses even when the runs before it
 * ended exactly at the last register. hll_to_dense decodes with the same rules. */
int hll_merge(uint8_t max[HLL_REGISTERS], const uint8_t *p, size_t len);
/* The estimate for the valid value p[0..len) (its registers, not the cache). *invalid is set
 * to 1 when sparse opcodes do not cover exactly 16384 registers (the estimate is then
 * meaningless), else left alone; invalid may be NULL. */
uint64_t hll_count(const uint8_t *p, size_t len, int *invalid);
/* The estimate for plain registers, one byte each (PFCOUNT of several keys). */
uint64_t hll_count_registers(const uint8_t max[HLL_REGISTERS]);

/* The cached cardinality: 1 and *card when valid, else 0. */
int hll_cache_get(const uint8_t *p, uint64_t *card);
void hll_cache_set(uint8_t *p, uint64_t card);
void hll_cache_invalidate(uint8_t *p);

/* Dense register access on the 12288 register bytes (after the header). */
uint8_t hll_dense_get(const uint8_t *regs, uint32_t index);
void hll_dense_set(uint8_t *regs, uint32_t index, uint8_t val);

/* The sparse opcodes of p[0..len) as PFDEBUG DECODE prints them ("Z:16384 v:3,1 z:5",
 * space separated, no trailing space), written to out (its first outlen bytes; out may be
 * NULL to measure). Returns the text's whole length, at most 8 bytes per opcode byte. */
size_t hll_sparse_decode(const uint8_t *p, size_t len, char *out, size_t outlen);

/* PFSELFTEST: register packing and estimate error checks as Redis's. 0, or -1 with Redis's
 * "TESTFAILED ..." message in err. Takes about a second (10 million additions). */
int hll_selftest(size_t sparse_max, char *err, size_t errlen);

#endif
