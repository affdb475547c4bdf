/* regex.h - PCRE2 patterns matched against whole names, with a cache of compiled patterns.
 *
 * A pattern matches a name when it matches all of it, as if written ^(?:pattern)$ (TQUERY,
 * TSCAN MATCH, TSEARCH's filters). Patterns are compiled once (with the JIT when the library
 * has it) and kept in a small cache keyed by the pattern bytes, so a query repeated by many
 * clients compiles once. Loop thread only (the cache and the match data are shared). */
#ifndef CTE_SEARCH_REGEX_H
#define CTE_SEARCH_REGEX_H

#include <stddef.h>

typedef struct rx rx_t;

/* The compiled pattern pat[0..len), from the cache or compiled now; valid until the next
 * rx_get (the cache may evict it). NULL on a bad pattern, with PCRE2's reason in err
 * (e.g. "missing closing parenthesis at offset 3"). */
rx_t *rx_get(const char *pat, size_t len, char *err, size_t errlen);
/* 1 if s[0..len) matches the whole pattern, 0 if not. */
int rx_match(rx_t *rx, const char *s, size_t len);
/* The literal prefix every match starts with (bytes before the first metacharacter of a
 * pattern with no top-level alternation); *plen 0 if none. For narrowing scans. */
const char *rx_prefix(const rx_t *rx, size_t *plen);
/* Frees the cache. */
void rx_cache_clear(void);

#endif
