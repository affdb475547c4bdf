/* uri.h - libcte internal: parsing a connection address (see cte/cte.h for the forms). */
#ifndef CTE_CLIENT_URI_H
#define CTE_CLIENT_URI_H

#include <stddef.h>

typedef enum cte_addr_kind { CTE_ADDR_TCP, CTE_ADDR_UNIX, CTE_ADDR_SHM } cte_addr_kind_t;

typedef struct cte_addr {
    cte_addr_kind_t kind;
    char host[256]; /* tcp: name or address, without [] */
    int port;       /* tcp: 1..65535 */
    char path[108]; /* unix, shm: the server's socket (sun_path's size) */
    char user[128]; /* "" when none */
    char pass[256]; /* "" when none */
    int has_pass;   /* a password was given (possibly empty) */
    int db;         /* 0..INT_MAX */
    int resp;       /* 2 or 3 */
} cte_addr_t;

/* Parses s into *a. Returns 0, or CTE_E_ADDRESS with a reason in why[0..whylen). Any thread. */
int cte__addr_parse(const char *s, cte_addr_t *a, char *why, size_t whylen);

#endif
