/* Tests for ycsb/props.c and ycsb/cli.c: java.util.Properties syntax, the typed reads and
 * their errors, YCSB's workload files, and the command line (-P files in order, -p winning
 * over every file, a later -p over an earlier one). */
#define _GNU_SOURCE /* asprintf */
#include "cli.h"
#include "props.h"

#include "tests/leak.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static props_t *parse(const char *text)
{
    props_t *p = props_new();
    util_err_t e;
    cr_assert_eq(props_parse(p, text, strlen(text), &e), 0, "%s", e.msg);
    return p;
}

LTest(props, reads_the_separators_and_comments_of_java_properties)
{
    props_t *p = parse("# a comment\n! another\n  a=1\nb : 2\nc 3\nd=\ne\n\tf = x y \nb=22\n");
    cr_assert_str_eq(props_get(p, "a"), "1");
    cr_assert_str_eq(props_get(p, "b"), "22", "a later line wins");
    cr_assert_str_eq(props_get(p, "c"), "3");
    cr_assert_str_eq(props_get(p, "d"), "");
    cr_assert_str_eq(props_get(p, "e"), "");
    cr_assert_str_eq(props_get(p, "f"), "x y ", "trailing blanks are part of the value");
    cr_assert_null(props_get(p, "#"));
    cr_assert_eq(props_count(p), 6);
    props_free(p);
}

LTest(props, joins_continuation_lines_and_unescapes)
{
    props_t *p =
        parse("long = one, \\\n      two\r\nesc=tab\\tnl\\nu\\u00e9\\q\\\\\nkey\\ with\\=sep=v\n"
              "#not continued \\\nnext=1\n");
    cr_assert_str_eq(props_get(p, "long"), "one, two");
    cr_assert_str_eq(props_get(p, "esc"), "tab\tnl\nu\xC3\xA9q\\");
    cr_assert_str_eq(props_get(p, "key with=sep"), "v");
    cr_assert_str_eq(props_get(p, "next"), "1");
    props_free(p);
}

LTest(props, refuses_a_malformed_unicode_escape)
{
    props_t *p = props_new();
    util_err_t e;
    const char *t = "a=1\nb=\\u12x4\n";
    cr_assert_eq(props_parse(p, t, strlen(t), &e), -EINVAL);
    cr_assert(strstr(e.msg, "line 2"), "%s", e.msg);
    props_free(p);
}

LTest(props, typed_reads_check_syntax_and_range)
{
    props_t *p =
        parse("n=42\nneg=-7\nbad=12x\nbig=99999999999999999999\nd=0.5\nf=1e3d\nt=TRUE\nsp= 8 \n");
    util_err_t e;
    int64_t v;
    double d;
    cr_assert_eq(props_long(p, "n", 0, 0, 100, &v, &e), 0);
    cr_assert_eq(v, 42);
    cr_assert_eq(props_long(p, "sp", 0, 0, 100, &v, &e), 0);
    cr_assert_eq(v, 8);
    cr_assert_eq(props_long(p, "missing", 5, 0, 100, &v, &e), 0);
    cr_assert_eq(v, 5);
    cr_assert_eq(props_long(p, "neg", 0, 0, 100, &v, &e), -EINVAL);
    cr_assert(strstr(e.msg, "neg") && strstr(e.msg, "out of range"), "%s", e.msg);
    cr_assert_eq(props_long(p, "bad", 0, 0, 100, &v, &e), -EINVAL);
    cr_assert(strstr(e.msg, "'12x' is not an integer"), "%s", e.msg);
    cr_assert_eq(props_long(p, "big", 0, 0, INT64_MAX, &v, &e), -EINVAL);
    cr_assert_eq(props_double(p, "d", 0, 0, 1, &d, &e), 0);
    cr_assert_eq(d, 0.5);
    cr_assert_eq(props_double(p, "f", 0, 0, 1e9, &d, &e), 0);
    cr_assert_eq(d, 1000);
    cr_assert_eq(props_double(p, "bad", 0, 0, 1, &d, &e), -EINVAL);
    cr_assert(props_bool(p, "t", false));
    cr_assert_not(props_bool(p, "n", true));
    cr_assert(props_bool(p, "missing", true));
    props_free(p);
}

static char *workload(const char *name)
{
    const char *dir = getenv("YCSB_WORKLOADS");
    cr_assert_not_null(dir, "YCSB_WORKLOADS names ycsb/workloads (set by ctest)");
    char *path;
    cr_assert(asprintf(&path, "%s/%s", dir, name) > 0);
    return path;
}

/* Each workload file with the properties YCSB 0.17 ships. */
LTest(props, the_shipped_workloads_have_ycsbs_properties)
{
    static const struct {
        const char *file, *props;
    } w[] = {
        {"workloada", "readproportion=0.5 updateproportion=0.5 scanproportion=0 insertproportion=0 "
                      "requestdistribution=zipfian"},
        {"workloadb",
         "readproportion=0.95 updateproportion=0.05 scanproportion=0 insertproportion=0 "
         "requestdistribution=zipfian"},
        {"workloadc", "readproportion=1 updateproportion=0 scanproportion=0 insertproportion=0 "
                      "requestdistribution=zipfian"},
        {"workloadd",
         "readproportion=0.95 updateproportion=0 scanproportion=0 insertproportion=0.05 "
         "requestdistribution=latest"},
        {"workloade",
         "readproportion=0 updateproportion=0 scanproportion=0.95 insertproportion=0.05 "
         "requestdistribution=zipfian maxscanlength=100 scanlengthdistribution=uniform"},
        {"workloadf", "readproportion=0.5 updateproportion=0 scanproportion=0 insertproportion=0 "
                      "readmodifywriteproportion=0.5 requestdistribution=zipfian"},
    };
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++) {
        char *path = workload(w[i].file);
        props_t *p = props_new();
        util_err_t e;
        cr_assert_eq(props_load_file(p, path, &e), 0, "%s", e.msg);
        props_t *want = props_new();
        char *list = strdup(w[i].props), *save, *tok;
        for (tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
            char *eq = strchr(tok, '=');
            *eq = '\0';
            props_set(want, tok, eq + 1);
        }
        props_set(want, "recordcount", "1000");
        props_set(want, "operationcount", "1000");
        props_set(want, "workload", "site.ycsb.workloads.CoreWorkload");
        props_set(want, "readallfields", "true");
        cr_assert_eq(props_count(p), props_count(want), "%s: %zu properties", w[i].file,
                     props_count(p));
        for (size_t k = 0; k < props_count(want); k++) {
            const char *n, *v;
            props_at(want, k, &n, &v);
            cr_assert_str_eq(props_get_or(p, n, "(absent)"), v, "%s: %s", w[i].file, n);
        }
        free(list);
        props_free(want);
        props_free(p);
        free(path);
    }
}

LTest(props, a_missing_file_is_named_in_the_error)
{
    props_t *p = props_new();
    util_err_t e;
    cr_assert_eq(props_load_file(p, "/nonexistent/workloadz", &e), -ENOENT);
    cr_assert(strstr(e.msg, "/nonexistent/workloadz"), "%s", e.msg);
    props_free(p);
}

static int cli(props_t *p, bool *dotx, const char *const *args)
{
    char *argv[32];
    int argc = 0;
    argv[argc++] = "cte-ycsb";
    for (; *args; args++) argv[argc++] = (char *)*args;
    argv[argc] = NULL;
    return cli_parse(argc, argv, p, dotx);
}

LTest(cli, later_p_wins_over_files_and_earlier_p)
{
    char dir[] = "/tmp/test_ycsb_cli_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char f1[64], f2[64];
    snprintf(f1, sizeof f1, "%s/one", dir);
    snprintf(f2, sizeof f2, "%s/two", dir);
    FILE *f = fopen(f1, "w");
    fputs("recordcount=10\nfieldcount=3\nthreadcount=7\n", f);
    fclose(f);
    f = fopen(f2, "w");
    fputs("recordcount=20\n", f);
    fclose(f);
    props_t *p = props_new();
    bool dotx = false;
    const char *args[] = {
        "run", "-p",           "recordcount=1", "-P", f1,    "-p",    "fieldcount=9", "-P", f2,
        "-p",  "fieldcount=5", "-threads",      "4",  "-db", "redis", "-s",           "-p", "x=a=b",
        NULL};
    cr_assert_eq(cli(p, &dotx, args), 0);
    cr_assert(dotx);
    cr_assert_str_eq(props_get(p, "recordcount"), "1", "-p wins even before the files");
    cr_assert_str_eq(props_get(p, "fieldcount"), "5", "a later -p wins");
    cr_assert_str_eq(props_get(p, "threadcount"), "4", "-threads wins over the file");
    cr_assert_str_eq(props_get(p, "db"), "redis");
    cr_assert_str_eq(props_get(p, "status"), "true");
    cr_assert_str_eq(props_get(p, "x"), "a=b");
    props_free(p);

    p = props_new();
    const char *args2[] = {"load", "-P", f1, "-P", f2, NULL};
    cr_assert_eq(cli(p, &dotx, args2), 0);
    cr_assert_not(dotx);
    cr_assert_str_eq(props_get(p, "recordcount"), "20", "a later file wins over an earlier one");
    cr_assert_str_eq(props_get(p, "threadcount"), "7");
    props_free(p);
    unlink(f1);
    unlink(f2);
    rmdir(dir);
}

LTest(cli, refuses_what_it_cannot_read)
{
    static const char *const bad[][4] = {
        {"run", "-p", "novalue", NULL}, {"run", "-P", NULL}, {"run", "-threads", "x", NULL},
        {"run", "-bogus", NULL},        {"-p", "a=1", NULL}, {"run", "-P", "/nonexistent", NULL},
        {"run", "-p", "=v", NULL},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        props_t *p = props_new();
        bool dotx;
        cr_assert_eq(cli(p, &dotx, bad[i]), 2, "case %zu", i);
        props_free(p);
    }
}
