/* harness.h - what the command tests share: sending a command written as words to a
 * socketless client, and printing replies readably in failure messages. */
#ifndef CTE_TESTS_HARNESS_H
#define CTE_TESTS_HARNESS_H

#include "server/client.h"
#include "storage/db.h"

#include <stddef.h>

/* Sets up the server as a command test needs it: the default config with command-line style
 * overrides argv[1..argc) applied (argc 0: none), server_init (both must succeed) and one
 * socketless client, returned. harness_server_stop undoes it. */
client_t *harness_server_start(int argc, char **argv);
void harness_server_stop(void);
/* Makes a fresh directory /tmp/<prefix>-XXXXXX for a test's files (file tiers, the
 * append-only file: a test may chdir into it) and returns its path (static storage).
 * harness_tmpdir_remove returns to the working directory of the make call and removes the
 * directory with everything in it. */
const char *harness_tmpdir_make(const char *prefix);
void harness_tmpdir_remove(void);

/* Sends a command written as words separated by spaces from c (as a RESP multibulk); a word in
 * double quotes may hold spaces or be empty (""). Up to 4100 words. */
void harness_send(client_t *c, const char *line);
/* Sends line from c and checks that its whole reply is exactly want[0..n) (failing the test
 * with both shown otherwise); c->out is empty afterwards. */
void harness_expect_n(client_t *c, const char *line, const char *want, size_t n);
/* The object type no command handles (slot 7 is unused): WRONGTYPE tests store one. */
#define HARNESS_FAKE_TYPE 7
/* Adds key to db holding a value of HARNESS_FAKE_TYPE; returns the value. */
obj_t *harness_add_fake(db_t *db, const char *key);

/* A command and its expected replies: resp3 NULL means the same as resp2. */
typedef struct harness_step {
    const char *cmd;
    const char *resp2;
    const char *resp3;
} harness_step_t;
/* Sends line from c and checks its reply equals the C string want (RESP version in the
 * failure message). */
void harness_expect(client_t *c, const char *line, const char *want);
/* Runs the steps in RESP2, then again on an emptied database 0 in RESP3; before each pass the
 * prelude commands (NULL-terminated list, may be NULL) run in RESP2 and must answer +OK. */
void harness_run_steps(client_t *c, const harness_step_t *steps, size_t n,
                       const char *const *prelude);

/* p[0..n) with \r, \n and non-printable bytes escaped, for messages; one of four rotating
 * static buffers (valid for the next three calls). */
char *harness_escaped(const char *p, size_t n);

#endif
