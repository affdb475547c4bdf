/* reply.h - libcte internal: the reply tree node and the incremental RESP2/RESP3 reply parser.
 *
 * The parser (nginx-style) keeps its state in cte_parser_t, takes bytes as they arrive in any
 * split, and hands out one whole reply tree at a time. It is bounded: nesting depth, line
 * length, bulk size and aggregate size are checked before anything is allocated for them,
 * and every byte it does not expect is a protocol error, never a crash. */
#ifndef CTE_CLIENT_REPLY_H
#define CTE_CLIENT_REPLY_H

#include "cte/cte.h"

#include <stddef.h>
#include <stdint.h>

struct cte_reply {
    cte_reply_kind_t kind;
    char *str;      /* string kinds: NUL-terminated, len bytes */
    size_t len;     /* string length, or number of elements */
    size_t cap;     /* allocated bytes of str, or slots of elem */
    long long ival; /* INTEGER, BOOL */
    double dval;    /* DOUBLE */
    char fmt[4];    /* VERBATIM */
    int borrowed;   /* str points into a shm reply data area, not owned (not freed) */
    unsigned area_refs; /* root: how many of its bulks came through the reply data area */
    uint64_t area_first, area_end; /* root: the first one's index, the end of the last */
    struct cte_reply **elem;
};

#define CTE_PARSER_MAX_DEPTH 32

typedef struct cte_parser_limits {
    size_t max_bulk;  /* largest bulk / verbatim / blob error */
    size_t max_line;  /* longest simple line (header, +, -, :, ...) */
    size_t max_elems; /* largest aggregate */
} cte_parser_limits_t;

typedef struct cte_parser_frame {
    cte_reply_t *node; /* aggregate being filled (or an attribute, dropped when complete) */
    size_t want;       /* elements still expected */
    int attr;          /* 1: an attribute map, dropped when complete */
} cte_parser_frame_t;

typedef struct cte_parser {
    cte_parser_limits_t lim;
    cte_parser_frame_t stack[CTE_PARSER_MAX_DEPTH];
    int depth;
    cte_reply_t *bulk; /* string whose payload is arriving */
    size_t bulk_left;  /* payload bytes still to come */
    int crlf_left;     /* 2, 1: the CRLF after a payload; 0: none */
    int verbatim;      /* the bulk is a verbatim string: strip "fmt:" when complete */
    char *sink;        /* set by the caller: a top-level bulk's bytes go here, not to str */
    size_t sink_cap;   /* bytes the sink holds; the rest of the payload is dropped */
    int sinking;       /* the bulk arriving goes to the sink */
    char *area;         /* shm: the reply data area ("&<len>,<index>" bulks), or NULL */
    uint64_t area_size; /* its bytes, a power of two */
    uint64_t area_end;  /* the end (index) of the last of its bulks parsed */
    unsigned reply_refs; /* area bulks in the reply being parsed (the caller resets it) */
    uint64_t reply_first; /* the index of its first one */
    char *line;        /* a line split across feeds */
    size_t line_len, line_cap;
    int err; /* sticky: once failed, always failed */
} cte_parser_t;

/* Default limits: bulk 512 MiB, line 64 KiB, 1<<24 elements per aggregate. */
void cte__parser_init(cte_parser_t *p, const cte_parser_limits_t *lim);
/* Frees everything the parser still holds (a half-built reply, a partial line). */
void cte__parser_deinit(cte_parser_t *p);
/* The sink: while p->sink is set, a bulk string that is a whole reply (not inside an
 * aggregate) is written straight into sink[0..sink_cap) as it arrives: its node has kind BULK,
 * len the payload's full length (possibly more than sink_cap) and str NULL. The caller may
 * change the sink between feeds only while no reply is half-parsed, or keep it the same. */

/* While a sunk bulk's payload is arriving: *dst gets where its next bytes go and the result
 * is how many fit (0 when not sinking, or the sink is full). A caller that reads them there
 * itself reports them with cte__parser_sunk(p, n), n <= that result. */
size_t cte__parser_sink_room(const cte_parser_t *p, char **dst);
void cte__parser_sunk(cte_parser_t *p, size_t n);

/* Takes up to len bytes. Returns 1 when a whole reply is ready (*out, the caller's; *used
 * bytes were taken and the rest belongs to the next reply), 0 when all len bytes were taken
 * and more are needed, or CTE_E_PROTOCOL / CTE_E_LIMIT / CTE_E_NOMEM (sticky). */
int cte__parser_feed(cte_parser_t *p, const char *buf, size_t len, size_t *used, cte_reply_t **out);

cte_reply_t *cte__reply_new(cte_reply_kind_t kind);

#endif
