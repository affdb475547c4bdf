/* cli.h - cte-ycsb's command line, as YCSB's Client reads it:
 *
 *   cte-ycsb load|run [-P file]... [-p name=value]... [-db name] [-threads n] [-target n]
 *                     [-s] [-l label]
 *
 * The -P files are read in order (a later file wins); -p, -db, -threads, -target, -s and -l
 * set properties (db, threadcount, target, status, label) that win over every file, a later
 * one over an earlier one. YCSB's -load and -t are accepted for load and run. */
#ifndef YCSB_CLI_H
#define YCSB_CLI_H

#include "props.h"

#include <stdbool.h>
#include <stdio.h>

/* Parses argv into out and *dotransactions (run: true). Returns 0; 2 after printing why to
 * stderr (a missing value, an unknown option, a file that does not load, no load/run); 3 after
 * printing the usage for -h. */
int cli_parse(int argc, char **argv, props_t *out, bool *dotransactions);
/* The usage text. */
void cli_usage(FILE *f);

#endif
