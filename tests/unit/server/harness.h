/* harness.h - what the command tests share: sending a command written as words to a
 * socketless client, and printing replies readably in failure messages. */
#ifndef CTE_TESTS_HARNESS_H
#define CTE_TESTS_HARNESS_H

#include "server/client.h"

#include <stddef.h>

/* Sends a command written as words separated by spaces from c (as a RESP multibulk); a word in
 * double quotes may hold spaces or be empty (""). Up to 4100 words. */
void harness_send(client_t *c, const char *line);
/* Sends line from c and checks that its whole reply is exactly want[0..n) (failing the test
 * with both shown otherwise); c->out is empty afterwards. */
void harness_expect_n(client_t *c, const char *line, const char *want, size_t n);
/* p[0..n) with \r, \n and non-printable bytes escaped, for messages; one of four rotating
 * static buffers (valid for the next three calls). */
char *harness_escaped(const char *p, size_t n);

#endif
