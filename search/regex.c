/* regex.c - cached, anchored PCRE2 patterns (see regex.h).
 *
 * The cache holds up to RX_CACHE compiled patterns in a dict; when full, the least recently
 * used one is dropped. One match-data block serves every match (loop thread only). */
#define PCRE2_CODE_UNIT_WIDTH 8
#include "search/regex.h"

#include "common/alloc.h"
#include "common/dict.h"

#include <pcre2.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define RX_CACHE 256

struct rx {
    dict_node_t node; /* node.aux: pattern length */
    pcre2_code *code;
    uint64_t used;    /* last use, for eviction */
    size_t prefix_len;
    char *prefix;
    int jit; /* compiled by the JIT: matched through its fast entry point */
    char pat[];
};

static const void *rx_key(const dict_node_t *n, size_t *len)
{
    *len = n->aux;
    return ((const rx_t *)n)->pat;
}

static void rx_free(dict_node_t *n, void *ud)
{
    rx_t *r = (rx_t *)n;
    pcre2_code_free(r->code);
    xfree(r->prefix);
    xfree(r);
}

static const dict_type_t rx_type = {rx_key, rx_free};
static dict_t cache;
static int ready;
static uint64_t clock_;
static pcre2_match_data *md;

/* The literal bytes a pattern starts with, when it has no alternation at all (a '|' anywhere
 * could make another branch match without the prefix). Stops at the first metacharacter;
 * a quantifier after the last literal takes that literal back. */
static void literal_prefix(rx_t *r, const char *p, size_t len)
{
    static const char meta[] = "\\^$.|?*+()[]{}";
    r->prefix = NULL;
    r->prefix_len = 0;
    if (memchr(p, '|', len)) return;
    size_t n = 0;
    while (n < len && !strchr(meta, p[n])) n++;
    if (n < len && strchr("?*{", p[n]) && n > 0) n--; /* "ab?" : only "a" is certain */
    if (n == 0) return;
    r->prefix = xmemdup(p, n);
    r->prefix_len = n;
}

static void evict_one(void)
{
    dict_iter_t it;
    rx_t *oldest = NULL;
    dict_iter_init(&it, &cache, 0);
    for (dict_node_t *n; (n = dict_iter_next(&it));)
        if (!oldest || ((rx_t *)n)->used < oldest->used) oldest = (rx_t *)n;
    dict_iter_deinit(&it);
    if (oldest) rx_free(dict_unlink(&cache, oldest->pat, oldest->node.aux, oldest->node.hash), NULL);
}

rx_t *rx_get(const char *pat, size_t len, char *err, size_t errlen)
{
    if (!ready) {
        dict_init(&cache, &rx_type);
        md = pcre2_match_data_create(1, NULL);
        ready = 1;
    }
    uint32_t h = dict_hash(pat, len);
    rx_t *r = (rx_t *)dict_find(&cache, pat, len, h);
    if (r) {
        r->used = ++clock_;
        return r;
    }
    /* anchor: the whole name must match */
    char *full = xmalloc(len + 8);
    memcpy(full, "^(?:", 4);
    memcpy(full + 4, pat, len);
    memcpy(full + 4 + len, ")$", 2);
    int code;
    PCRE2_SIZE off;
    pcre2_code *c = pcre2_compile((PCRE2_SPTR)full, len + 6, PCRE2_DOLLAR_ENDONLY, &code, &off, NULL);
    xfree(full);
    if (!c) {
        PCRE2_UCHAR msg[256];
        pcre2_get_error_message(code, msg, sizeof(msg));
        long at = (long)off - 4; /* within the caller's pattern, not the anchored one */
        if (at > (long)len) at = (long)len;
        snprintf(err, errlen, "%s at offset %ld", (char *)msg, at < 0 ? 0 : at);
        return NULL;
    }
    int jit = pcre2_jit_compile(c, PCRE2_JIT_COMPLETE) == 0; /* else the interpreter */
    if (dict_size(&cache) >= RX_CACHE) evict_one();
    r = xcalloc(1, sizeof(*r) + len + 1);
    memcpy(r->pat, pat, len);
    r->node.aux = (uint32_t)len;
    r->node.hash = h;
    r->code = c;
    r->jit = jit;
    r->used = ++clock_;
    literal_prefix(r, pat, len);
    dict_insert(&cache, &r->node);
    return r;
}

int rx_match(rx_t *rx, const char *s, size_t len)
{
    if (rx->jit) return pcre2_jit_match(rx->code, (PCRE2_SPTR)s, len, 0, 0, md, NULL) >= 0;
    return pcre2_match(rx->code, (PCRE2_SPTR)s, len, 0, 0, md, NULL) >= 0;
}

const char *rx_prefix(const rx_t *rx, size_t *plen)
{
    *plen = rx->prefix_len;
    return rx->prefix;
}

void rx_cache_clear(void)
{
    if (!ready) return;
    dict_clear(&cache, NULL);
    pcre2_match_data_free(md);
    md = NULL;
    ready = 0;
}
