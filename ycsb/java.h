/* java.h - the few Java behaviours YCSB's numbers and keys depend on, reproduced in C.
 *
 * YCSB is Java: its key names, the scores its redis binding sends, the numbers in its report
 * and the order of its report's sections all come out of java.lang and java.util. These
 * functions give the same results for the same inputs. None allocates; none can fail. */
#ifndef YCSB_JAVA_H
#define YCSB_JAVA_H

#include <stddef.h>
#include <stdint.h>

/* Room for any java_double_str / java_decimal2 result, NUL included. */
#define JAVA_DOUBLE_STR_MAX 40

/* String.hashCode() of the string whose UTF-8 bytes are s[0..len): s[0]*31^(n-1) + ... over
 * its UTF-16 code units, in 32-bit wrapping arithmetic. A malformed UTF-8 byte counts as
 * U+FFFD, as Java's decoder makes it. */
int32_t java_string_hash(const char *s, size_t len);
/* The hash of a string that continues one whose hash is h: hash(a + b) from hash(a) and b. */
int32_t java_string_hash_more(int32_t h, const char *s, size_t len);

/* String.valueOf(double) into out (JAVA_DOUBLE_STR_MAX bytes): the shortest decimal that reads
 * back as d, written as Java writes it: "123456.0", "0.001", "1.0E7", "-5.94971599E8", "NaN",
 * "Infinity", "-0.0". Returns the length. */
size_t java_double_str(double d, char *out);

/* new DecimalFormat("#.##").format(d) into out (JAVA_DOUBLE_STR_MAX bytes; d up to 1e30):
 * at most two decimals, half-even on d's exact binary value, no trailing zeros, no grouping;
 * NaN as "NaN", infinities as "∞" / "-∞". Returns the length. */
size_t java_decimal2(double d, char *out);

/* Math.abs(long): Long.MIN_VALUE stays negative, as in Java. */
int64_t java_labs(int64_t v);
/* The (long) and (int) casts of a double: toward zero, saturating, NaN -> 0. */
int64_t java_d2l(double d);
int32_t java_d2i(double d);

/* Iteration order of java.util.HashMap / HashSet / ConcurrentHashMap holding keys with hash
 * codes hash[0..n), inserted in that order, in a table of `capacity` buckets (a power of two):
 * bucket by bucket, and within a bucket in insertion order. Writes the permutation to
 * order[0..n). Exact while no bucket is turned into a tree (more than 8 keys in one bucket). */
void java_hash_order(const int32_t *hash, size_t n, size_t capacity, size_t *order);
/* The table size of a HashMap after n put()s into `new HashMap<>()` (16, doubled at 3/4). */
size_t java_hashmap_capacity(size_t n);
/* The table size of `new HashSet<>(collection of n)`. */
size_t java_hashset_capacity(size_t n);
/* The table size of a `new ConcurrentHashMap<>()` after n insertions (16, doubled when the
 * size reaches 3/4). Past 11 keys its resizes may reorder a bucket: the order is then close
 * to, not always equal to, Java's. */
size_t java_chm_capacity(size_t n);

#endif
