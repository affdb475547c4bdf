/* Tests for ycsb/route.c against scripted fake nodes (a thread each, one connection at a
 * time): the slot map from CLUSTER SLOTS, -MOVED and -ASK followed (ASKING first), the
 * redirect limit, and hostile CLUSTER SLOTS and redirect replies refused without harm. */
#define _GNU_SOURCE /* asprintf */
#include "route.h"

#include "tests/leak.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

/* A fake node: answers CLUSTER ... with slots, ASKING with +OK, anything else with reply
 * (raw RESP, set before use); counts the ASKINGs and the other commands (cmds). */
typedef struct fake {
    int lfd, port;
    pthread_t th;
    char *slots, *reply;
    int cmds, askings;
} fake_t;

static int read_command(FILE *f, char *cmd, size_t cap)
{
    char line[512];
    if (!fgets(line, sizeof line, f) || line[0] != '*') return -1;
    int n = atoi(line + 1);
    cmd[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (!fgets(line, sizeof line, f) || line[0] != '$') return -1;
        size_t len = (size_t)atol(line + 1);
        char *arg = malloc(len + 2);
        size_t got = fread(arg, 1, len + 2, f);
        if (i == 0 && len < cap) snprintf(cmd, cap, "%.*s", (int)len, arg);
        free(arg);
        if (got != len + 2) return -1;
    }
    return 0;
}

static void *fake_main(void *arg)
{
    fake_t *fk = arg;
    int cfd;
    while ((cfd = accept(fk->lfd, NULL, NULL)) >= 0) {
        FILE *f = fdopen(cfd, "r+");
        char cmd[32];
        while (read_command(f, cmd, sizeof cmd) == 0) {
            const char *out = fk->reply;
            if (strcasecmp(cmd, "CLUSTER") == 0) {
                out = fk->slots;
            } else if (strcasecmp(cmd, "ASKING") == 0) {
                fk->askings++;
                out = "+OK\r\n";
            } else {
                fk->cmds++;
            }
            fputs(out, f);
            fflush(f);
        }
        fclose(f);
    }
    return NULL;
}

static void fake_start(fake_t *fk)
{
    memset(fk, 0, sizeof *fk);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    fk->lfd = socket(AF_INET, SOCK_STREAM, 0);
    cr_assert(fk->lfd >= 0);
    cr_assert_eq(bind(fk->lfd, (struct sockaddr *)&a, sizeof a), 0);
    cr_assert_eq(listen(fk->lfd, 4), 0);
    getsockname(fk->lfd, (struct sockaddr *)&a, &len);
    fk->port = ntohs(a.sin_port);
    fk->reply = strdup("+OK\r\n");
    fk->slots = strdup("*0\r\n");
}

static void fake_run(fake_t *fk)
{
    cr_assert_eq(pthread_create(&fk->th, NULL, fake_main, fk), 0);
}

static void fake_stop(fake_t *fk)
{
    shutdown(fk->lfd, SHUT_RDWR);
    pthread_join(fk->th, NULL);
    close(fk->lfd);
    free(fk->reply);
    free(fk->slots);
}

static void set(char **field, const char *fmt, int port)
{
    free(*field);
    cr_assert(asprintf(field, fmt, port) > 0);
}

/* All 16384 slots on node port. */
#define ALL_SLOTS "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$9\r\n127.0.0.1\r\n:%d\r\n"

static route_t *open_cluster(fake_t *seed)
{
    route_t *r;
    util_err_t e;
    cr_assert_eq(route_open(&r, "127.0.0.1", seed->port, NULL, 2000, 1, &e), 0, "%s", e.msg);
    return r;
}

static int get(route_t *r, cte_reply_t **rep)
{
    const char *argv[] = {"GET", "somekey"};
    return route_command(r, rep, 2, argv, NULL);
}

LTest(route, follows_moved_and_remembers_the_new_owner)
{
    fake_t a, b;
    fake_start(&a);
    fake_start(&b);
    set(&a.slots, ALL_SLOTS, a.port);
    set(&a.reply, "-MOVED 1 127.0.0.1:%d\r\n", b.port);
    set(&b.reply, "+from-b\r\n", 0);
    fake_run(&a);
    fake_run(&b);
    route_t *r = open_cluster(&a);
    cte_reply_t *rep;
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(get(r, &rep), 0, "%s", route_errmsg(r));
        cr_assert_str_eq(cte_reply_str(rep, NULL), "from-b");
        cte_reply_free(rep);
    }
    route_stats_t st = route_stats(r);
    cr_assert_eq(st.moved, 1, "the second GET went to b directly");
    cr_assert_eq(st.refreshes, 2, "at open and after the MOVED");
    route_free(r);
    fake_stop(&a);
    fake_stop(&b);
    cr_assert_eq(a.cmds, 1);
    cr_assert_eq(b.cmds, 2);
}

LTest(route, follows_ask_with_asking_and_keeps_the_map)
{
    fake_t a, b;
    fake_start(&a);
    fake_start(&b);
    set(&a.slots, ALL_SLOTS, a.port);
    set(&a.reply, "-ASK 1 127.0.0.1:%d\r\n", b.port);
    set(&b.reply, "+from-b\r\n", 0);
    fake_run(&a);
    fake_run(&b);
    route_t *r = open_cluster(&a);
    cte_reply_t *rep;
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(get(r, &rep), 0, "%s", route_errmsg(r));
        cr_assert_str_eq(cte_reply_str(rep, NULL), "from-b");
        cte_reply_free(rep);
    }
    cr_assert_eq(route_stats(r).ask, 2, "each GET asked a first");
    route_free(r);
    fake_stop(&a);
    fake_stop(&b);
    cr_assert_eq(b.askings, 2);
    cr_assert_eq(b.cmds, 2);
}

LTest(route, stops_after_five_redirects)
{
    fake_t a;
    fake_start(&a);
    set(&a.slots, ALL_SLOTS, a.port);
    set(&a.reply, "-MOVED 1 127.0.0.1:%d\r\n", a.port); /* to itself, for ever */
    fake_run(&a);
    route_t *r = open_cluster(&a);
    cte_reply_t *rep;
    cr_assert_eq(get(r, &rep), CTE_E_SERVER);
    cr_assert(strncmp(cte_reply_str(rep, NULL), "MOVED ", 6) == 0);
    cte_reply_free(rep);
    cr_assert_eq(route_stats(r).moved, ROUTE_REDIRECTS_MAX + 1);
    route_free(r);
    fake_stop(&a);
}

LTest(route, returns_a_malformed_redirect_as_the_error_it_is)
{
    static const char *const bad[] = {
        "-MOVED 16384 127.0.0.1:%d\r\n", "-MOVED 1 127.0.0.1:0\r\n", "-ASK x 127.0.0.1:%d\r\n",
        "-MOVED 1 127.0.0.1\r\n",        "-MOVED 1 a/b:%d\r\n",      "-MOVED 1 127.0.0.1:%dx\r\n",
    };
    fake_t a;
    fake_start(&a);
    set(&a.slots, ALL_SLOTS, a.port);
    fake_run(&a);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        set(&a.reply, bad[i], a.port);
        route_t *r = open_cluster(&a);
        cte_reply_t *rep;
        cr_assert_eq(get(r, &rep), CTE_E_SERVER, "%s", bad[i]);
        cte_reply_free(rep);
        route_free(r);
    }
    fake_stop(&a);
}

LTest(route, refuses_a_malformed_slot_map)
{
    static const char *const bad[] = {
        "*1\r\n*3\r\n:0\r\n:16384\r\n*2\r\n$9\r\n127.0.0.1\r\n:%d\r\n", /* slot out of range */
        "*1\r\n*3\r\n:9\r\n:8\r\n*2\r\n$9\r\n127.0.0.1\r\n:%d\r\n",     /* start after end */
        "*1\r\n*3\r\n:0\r\n:1\r\n*2\r\n$9\r\n127.0.0.1\r\n:0\r\n",      /* port 0 */
        "*1\r\n*3\r\n:0\r\n:1\r\n*2\r\n$3\r\na/b\r\n:%d\r\n",           /* not a host */
        "*1\r\n*2\r\n:0\r\n:1\r\n",                                     /* no node */
        "*1\r\n:7\r\n",                                                 /* not an entry */
        "+OK\r\n",                                                      /* not an array */
    };
    fake_t a;
    fake_start(&a);
    fake_run(&a);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        set(&a.slots, bad[i], a.port);
        route_t *r;
        util_err_t e;
        cr_assert_lt(route_open(&r, "127.0.0.1", a.port, NULL, 2000, 1, &e), 0, "%s", bad[i]);
        cr_assert_null(r);
    }
    fake_stop(&a);
}

LTest(route, an_empty_host_is_the_answering_node)
{
    fake_t a;
    fake_start(&a);
    set(&a.slots, "*1\r\n*3\r\n:0\r\n:16383\r\n*2\r\n$0\r\n\r\n:%d\r\n", a.port);
    set(&a.reply, "+here\r\n", 0);
    fake_run(&a);
    route_t *r = open_cluster(&a);
    cte_reply_t *rep;
    cr_assert_eq(get(r, &rep), 0, "%s", route_errmsg(r));
    cr_assert_str_eq(cte_reply_str(rep, NULL), "here");
    cte_reply_free(rep);
    route_free(r);
    fake_stop(&a);
}
