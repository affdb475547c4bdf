/* resp.h - the Redis protocol: an incremental request parser and a reply writer.
 *
 * Plain synchronous code: no sockets, no libuv. The parser reads requests (multibulk and
 * inline) from a caller-owned buffer and hands out arguments as views into that buffer. The
 * writer appends RESP2 or RESP3 replies to a buf_t. */
#ifndef CTE_RESP_RESP_H
#define CTE_RESP_RESP_H

#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

/* One argument: a view into the parser's input buffer, valid until the caller moves or
 * changes that buffer (normally: until the command has executed). */
typedef struct resp_arg {
    const char *ptr;
    size_t len;
} resp_arg_t;

enum {
    RESP_OK = 0,     /* a whole command is ready: p->argc, p->argv, *consumed */
    RESP_AGAIN = 1,  /* need more bytes; keep every unconsumed byte and call again */
    RESP_EMPTY = 2,  /* consumed an empty request (blank inline line, "*0", "*-1"): no command */
    RESP_ERROR = -1, /* protocol error: p->error holds Redis's message; close the connection */
};

typedef struct resp_parser {
    /* limits, set by the owner (defaults from resp_parser_init) */
    size_t max_bulk;   /* proto-max-bulk-len: 512 MiB */
    size_t max_args;   /* largest multibulk count accepted: 1024*1024 */
    size_t max_inline; /* longest inline request / count line: 64 KiB */
    /* set while the client must still authenticate: as Redis 7.0, at most 10 arguments of
     * at most 16384 bytes ("Protocol error: unauthenticated multibulk length" / "... bulk
     * length"), so a stranger cannot make the server buffer big requests */
    int unauthenticated;
    /* a shared-memory client's request data area (server/net/shm.c): when set, a multibulk
     * argument may be "&<len>,<offset>\r\n", bytes [offset, offset+len) of area instead of a
     * bulk; NULL: such a line is the usual "expected '$'" error */
    const char *area;
    size_t area_size;
    /* results of the last RESP_OK */
    int argc;
    resp_arg_t *argv;
    int nrefs; /* how many of argv point into area (only with area set) */
    const char *error; /* set on RESP_ERROR: a static string, e.g.
                          "Protocol error: invalid multibulk length", or for "expected '$',
                          got 'X'" p->errbuf (valid until the next error or deinit) */
    /* private state: offsets relative to the start of the current request */
    int state;
    size_t pos;
    long long mb_left;
    long long bulk_len;
    size_t argv_cap;
    size_t *offs; /* pairs (offset, len) of arguments parsed so far */
    size_t offs_cap;
    char *inline_copy; /* unescaped inline arguments live here */
    size_t inline_cap;
    size_t scan;     /* where the search for the current line's end resumes */
    char errbuf[48]; /* holds "Protocol error: expected '$', got 'X'" */
} resp_parser_t;

void resp_parser_init(resp_parser_t *p);
void resp_parser_deinit(resp_parser_t *p);
/* Forgets a partially parsed request (after an error, or when the connection resets). */
void resp_parser_reset(resp_parser_t *p);

/* Parses one request from buf[0..len). buf must start at the first byte of the current request
 * (the caller drops *consumed bytes after each RESP_OK/RESP_EMPTY and keeps the rest).
 * Between RESP_AGAIN calls the caller may move the buffer (realloc) and append to it; the
 * parser keeps offsets, not pointers, and does not rescan what it already parsed.
 * On RESP_OK: argc/argv describe the request; argv views point into buf (or into the parser's
 * inline copy) and stay valid until the next call or until buf changes. */
int resp_parse(resp_parser_t *p, const char *buf, size_t len, size_t *consumed);

/* After RESP_AGAIN: how many bytes the current request needs at least (counted from buf[0]),
 * known when a large bulk header has been read, else 0. Lets the caller grow its buffer once. */
size_t resp_parser_need(const resp_parser_t *p);

/* ---- reply writer. proto is 2 or 3. ---- */
void resp_w_simple(buf_t *b, const char *s, size_t len); /* "+s\r\n" */
void resp_w_error(buf_t *b, const char *s, size_t len);  /* "-s\r\n"; s includes its prefix
                                                           (ERR, WRONGTYPE...); \r\n in s become spaces */
void resp_w_int(buf_t *b, long long v);                  /* ":v\r\n" */
void resp_w_bulk(buf_t *b, const void *p, size_t len);   /* "$len\r\n...\r\n" */
void resp_w_null(buf_t *b, int proto);                    /* "$-1\r\n" or "_\r\n" */
void resp_w_null_array(buf_t *b, int proto);              /* "*-1\r\n" or "_\r\n" */
/* Aggregate headers. kind is '*' array, '%' map (n = pairs), '~' set, '>' push.
 * In RESP2 a map becomes an array of 2n, a set and a push become arrays. */
void resp_w_agg(buf_t *b, int proto, char kind, long long n);
/* Doubles as Redis 7.0 writes them: "%.17g" ("inf", "-inf" for infinities);
 * RESP2 as a bulk string, RESP3 as ",...\r\n". */
void resp_w_double(buf_t *b, int proto, double d);
void resp_w_bool(buf_t *b, int proto, int v);  /* RESP3 "#t"/"#f", RESP2 ":1"/":0" */
/* Verbatim string: RESP3 "=len\r\ntxt:...\r\n", RESP2 a bulk string. ext is 3 chars. */
void resp_w_verbatim(buf_t *b, int proto, const char *ext, const char *p, size_t len);
/* The header of an aggregate whose length is known only later: returns the offset to pass to
 * resp_w_agg_finish, which inserts the header there (moving what was written since). */
size_t resp_w_agg_defer(buf_t *b);
void resp_w_agg_finish(buf_t *b, size_t off, int proto, char kind, long long n);

#endif
