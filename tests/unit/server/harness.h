/* harness.h - what the command tests share: sending a command written as words to a
 * socketless client, and printing replies readably in failure messages. */
#ifndef CTE_TESTS_HARNESS_H
#define CTE_TESTS_HARNESS_H

#include "server/client.h"

#include <stddef.h>

/* Sends a command written as words separated by spaces from c (as a RESP multibulk); a word in
 * double quotes may hold spaces or be empty (""). Up to 4100 words. */
void harness_send(client_t *c, const char *line);
/* p[0..n) with \r, \n and non-printable bytes escaped, for messages; one of four rotating
 * static buffers (valid for the next three calls). */
char *harness_escaped(const char *p, size_t n);

#endif
