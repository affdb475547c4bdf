/* conn_int.h - libcte internal: what tag.c needs from conn.c. */
#ifndef CTE_CLIENT_CONN_INT_H
#define CTE_CLIENT_CONN_INT_H

#include "cte/cte.h"
#include "uri.h"

#include <stdarg.h>
#include <stddef.h>

/* Arguments of at least this many bytes are written from the caller's buffer (writev). */
#define CTE_COPY_MAX (16 * 1024)

/* Sends one request and waits for its reply, which c keeps (valid until the next call on c)
 * and *reply points to. Returns 0, CTE_E_SERVER (reply is the ERROR, errmsg set), or the
 * connection's failure (*reply NULL). */
int cte__roundtrip(cte_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                   const cte_reply_t **reply);
/* The same, but a bulk reply's payload is written straight into sink[0..cap) as it arrives
 * (the reply then has str NULL and len the payload's full length); sink NULL: as above. */
int cte__roundtrip_into(cte_conn_t *c, int argc, const char *const *argv, const size_t *lens,
                        void *sink, size_t cap, const cte_reply_t **reply);
/* Takes the reply c keeps away from it: the caller owns it now. */
cte_reply_t *cte__take_last(cte_conn_t *c);
/* Records a local failure's description for cte_conn_errmsg; returns status. */
int cte__set_error(cte_conn_t *c, int status, const char *msg);
/* The NULL-terminated arguments of a varargs call (cte_call, cte_cluster_call): arg0 and then
 * ap's into argv (CTE_CALL_MAX_ARGS entries). Returns their count, or -1 when there are more. */
#define CTE_CALL_MAX_ARGS 64
int cte__call_args(const char *arg0, va_list ap, const char **argv);
int cte__protocol(const cte_conn_t *c);
/* The connection's sticky failure (0 while usable). */
int cte__broken(const cte_conn_t *c);
/* cte_conn_open on an address already parsed (the cluster client opens its nodes with the
 * seed's credentials this way, without printing and re-parsing them). */
int cte__conn_open_addr(cte_conn_t *c, const cte_addr_t *a, unsigned flags);

#endif
