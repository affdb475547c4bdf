/* tag_int.h - libcte internal: the argument lists of the query commands, built once for the
 * single-node calls (tag.c) and the cluster client's fan-out (cluster.c). */
#ifndef CTE_CLIENT_TAG_INT_H
#define CTE_CLIENT_TAG_INT_H

#include <stddef.h>
#include <stdint.h>

/* A number formatted for a request (the argument points into it). */
typedef struct cte__num {
    char s[32];
} cte__num_t;

/* Each fills argv (room for 5, 10 and 9 entries) and returns argc; numbers are formatted into
 * the caller's cte__num_t storage (one, three, one), which must live as long as argv. Limits
 * and bounds as cte_query_tags, cte_query_blobs and cte_search take them. */
int cte__query_tags_argv(const char **argv, cte__num_t *l, const char *regex, unsigned limit);
int cte__query_blobs_argv(const char **argv, cte__num_t *n, const char *tagregex,
                          const char *blobregex, int64_t since, int64_t until, unsigned limit);
int cte__search_argv(const char **argv, cte__num_t *l, const char *query, const char *tagregex,
                     const char *blobregex, unsigned limit, int withscores);
/* TPUT: off holds the offset formatted; sc gets the score's text when score >= 0 (room for
 * 6 entries). TGET: formats o and count into off and cnt (room for 5). */
int cte__put_argv(const char **argv, size_t *lens, const char *tag, const char *blob,
                  cte__num_t *off, const void *data, size_t len, double score, cte__num_t *sc);
int cte__get_argv(const char **argv, const char *tag, const char *blob, cte__num_t *off,
                  cte__num_t *cnt, uint64_t o, int64_t count);

#endif
