/* glob.c - Redis-style glob matching (see glob.h for the syntax).
 *
 * This follows Redis's stringmatchlen() case by case, so that KEYS and SCAN answer exactly what
 * Redis answers, including its handling of odd patterns ("[a-]", an unterminated '['), but
 * never reads outside the given lengths, and "*" matches the empty string (Redis's callers
 * special-case "*" to get that). The "skip longer matches" flag is Redis's fix for
 * exponential time: once the rest of a pattern after a '*' failed to match at every position
 * of the remaining subject, no earlier '*' can help by consuming more, so the whole match
 * fails at once. Pure code, any thread. */
#include "common/glob.h"

#include <ctype.h>

#define GLOB_MAX_NESTING 1000

static int fold(int ch, int nocase)
{
    return nocase ? tolower(ch) : ch;
}

/* Matches one bracket class against the byte ch. On entry *pp points just past the '['; on
 * return it points at the class's closing ']' (or at its last byte when unterminated), so the
 * caller's usual "advance one" steps past it. */
static int class_match(const unsigned char **pp, size_t *plenp, int ch, int nocase)
{
    const unsigned char *p = *pp;
    size_t plen = *plenp;
    int neg = plen > 0 && p[0] == '^', hit = 0;

    if (neg) p++, plen--;
    for (;;) {
        if (plen == 0) { /* unterminated: step back so the caller's advance ends the pattern */
            p--, plen++;
            break;
        }
        if (p[0] == '\\' && plen >= 2) {
            p++, plen--;
            if (fold(p[0], nocase) == fold(ch, nocase)) hit = 1;
        } else if (p[0] == ']') {
            break;
        } else if (plen >= 3 && p[1] == '-') {
            int lo = p[0], hi = p[2], c = ch;
            if (lo > hi) {
                int t = lo;
                lo = hi, hi = t;
            }
            lo = fold(lo, nocase), hi = fold(hi, nocase), c = fold(c, nocase);
            p += 2, plen -= 2;
            if (c >= lo && c <= hi) hit = 1;
        } else if (fold(p[0], nocase) == fold(ch, nocase)) {
            hit = 1;
        }
        p++, plen--;
    }
    *pp = p;
    *plenp = plen;
    return neg ? !hit : hit;
}

/* The matcher proper; longer than most functions here because it is one state machine over
 * the pattern, kept in the same shape as Redis's so the two can be compared line by line. */
static int match(const unsigned char *p, size_t plen, const unsigned char *s, size_t slen,
                 int nocase, int *skip_longer, int depth)
{
    if (depth > GLOB_MAX_NESTING) return 0;
    while (plen && slen) {
        switch (p[0]) {
        case '*':
            while (plen > 1 && p[1] == '*') p++, plen--;
            if (plen == 1) return 1;
            while (slen) {
                if (match(p + 1, plen - 1, s, slen, nocase, skip_longer, depth + 1)) return 1;
                if (*skip_longer) return 0;
                s++, slen--;
            }
            *skip_longer = 1;
            return 0;
        case '?':
            s++, slen--;
            break;
        case '[':
            p++, plen--;
            if (!class_match(&p, &plen, s[0], nocase)) return 0;
            s++, slen--;
            break;
        case '\\':
            if (plen >= 2) p++, plen--;
            /* fall through */
        default:
            if (fold(p[0], nocase) != fold(s[0], nocase)) return 0;
            s++, slen--;
            break;
        }
        p++, plen--;
        if (slen == 0) {
            while (plen && p[0] == '*') p++, plen--;
            break;
        }
    }
    if (slen == 0) /* also for an empty subject, where Redis says "*" does not match "" */
        while (plen && p[0] == '*') p++, plen--;
    return plen == 0 && slen == 0;
}

int strglob_match(const char *pat, size_t plen, const char *s, size_t slen, int nocase)
{
    int skip_longer = 0;
    return match((const unsigned char *)pat, plen, (const unsigned char *)s, slen, nocase,
                 &skip_longer, 0);
}
