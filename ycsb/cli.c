/* cli.c - cte-ycsb's command line, parsed as site.ycsb.Client parses it (see cli.h). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

void cli_usage(FILE *f)
{
    fprintf(f,
            "Usage: cte-ycsb load|run [options]\n"
            "Options:\n"
            "  -P file          load properties from a YCSB workload file (several: in order)\n"
            "  -p name=value    set a property; wins over every -P file\n"
            "  -db redis|cte    the binding (the \"db\" property)\n"
            "  -threads n       client threads (the \"threadcount\" property, default 1)\n"
            "  -target n        aim at n operations per second in all (the \"target\" property)\n"
            "  -s               print a status line to stderr every 10 s (status.interval)\n"
            "  -l label         prefix the status lines with label\n"
            "  -load, -t        as load and run\n"
            "Workloads a to f are in share/cte-server/ycsb/workloads of the installation.\n");
}

int cli_parse(int argc, char **argv, props_t *out, bool *dotx)
{
    props_t *files = props_new(), *cli = props_new();
    util_err_t e;
    int rc = 0, i = 1, phase = 0;
    for (; i < argc && rc == 0; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "load") == 0 || strcmp(a, "-load") == 0) {
            *dotx = false, phase = 1;
        } else if (strcmp(a, "run") == 0 || strcmp(a, "-t") == 0) {
            *dotx = true, phase = 1;
        } else if (strcmp(a, "-s") == 0) {
            props_set(cli, "status", "true");
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            cli_usage(stdout);
            rc = 3;
        } else if (strcmp(a, "-P") == 0 || strcmp(a, "-p") == 0 || strcmp(a, "-db") == 0 ||
                   strcmp(a, "-threads") == 0 || strcmp(a, "-target") == 0 ||
                   strcmp(a, "-l") == 0) {
            if (!v) {
                fprintf(stderr, "cte-ycsb: missing argument value for %s\n", a);
                rc = 2;
                break;
            }
            i++;
            if (strcmp(a, "-P") == 0) {
                if (props_load_file(files, v, &e) < 0) {
                    fprintf(stderr, "cte-ycsb: %s\n", e.msg);
                    rc = 2;
                }
            } else if (strcmp(a, "-p") == 0) {
                const char *eq = strchr(v, '=');
                if (!eq || eq == v) {
                    fprintf(stderr,
                            "cte-ycsb: -p expects name=value (e.g. -p operationcount=99999), not "
                            "'%s'\n",
                            v);
                    rc = 2;
                } else {
                    char *name = strndup(v, (size_t)(eq - v));
                    props_set(cli, name, eq + 1);
                    free(name);
                }
            } else {
                int64_t n;
                const char *prop = strcmp(a, "-db") == 0        ? "db"
                                   : strcmp(a, "-l") == 0       ? "label"
                                   : strcmp(a, "-threads") == 0 ? "threadcount"
                                                                : "target";
                if (prop[0] == 't' && props_parse_long(v, &n) < 0) {
                    fprintf(stderr, "cte-ycsb: %s expects an integer, not '%s'\n", a, v);
                    rc = 2;
                }
                props_set(cli, prop, v);
            }
        } else {
            fprintf(stderr, "cte-ycsb: unknown option %s\n", a);
            rc = 2;
        }
    }
    if (rc == 0 && !phase) {
        fprintf(stderr, "cte-ycsb: say load or run\n");
        rc = 2;
    }
    if (rc == 2) cli_usage(stderr);
    props_merge(out, files);
    props_merge(out, cli);
    props_free(files);
    props_free(cli);
    return rc;
}
