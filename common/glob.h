/* glob.h - Redis-style glob matching, shared by KEYS, SCAN MATCH, PSUBSCRIBE and CONFIG GET.
 *
 * Pattern syntax, as Redis's stringmatchlen():
 *   *       any run of bytes, also empty
 *   ?       exactly one byte
 *   [abc]   one byte of the set;  [^abc] one byte not in the set
 *   [a-z]   one byte in the range (the ends may come in either order)
 *   \x      the byte x itself, outside or inside brackets
 * An unterminated '[' takes the rest of the pattern as its set, as Redis does.
 *
 * Pattern and subject are byte strings with explicit lengths and may hold NUL bytes. The
 * function is pure and thread-safe. Matching time is bounded by O(plen * slen) whatever the
 * pattern (no exponential backtracking on "*a*a*a*b"), and the recursion depth by the number of
 * '*' in the pattern, capped at 1000 (a deeper pattern does not match). */
#ifndef CTE_COMMON_GLOB_H
#define CTE_COMMON_GLOB_H

#include <stddef.h>

/* Returns 1 when the whole of s matches the whole of pat, 0 otherwise. With nocase set, ASCII
 * letters compare without regard to case. Never fails. */
int strglob_match(const char *pat, size_t plen, const char *s, size_t slen, int nocase);

#endif
