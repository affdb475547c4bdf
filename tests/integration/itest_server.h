/* itest_server.h - the server under test, shared by the C integration tests (test_hiredis.c,
 * test_libcte.c, test_shm.c): one server per test, fork/exec'd on a free loopback port with
 * its own temp dir (log, Unix socket, data), stopped with SIGTERM (its exit status checked) and
 * removed afterwards. Each test file brings the server's flags (itest_exec) and how it knows
 * the server is ready (its own client library). Header only: each test is one program. */
#ifndef CTE_TESTS_ITEST_SERVER_H
#define CTE_TESTS_ITEST_SERVER_H

#include <criterion/criterion.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef struct itest_server {
    pid_t pid;
    int port;
    char dir[64];
    char sock[128];
    char log[128];
    const char *pass; /* --requirepass, or NULL (test_libcte.c) */
    int redis;        /* run Debian's redis-server instead (test_libcte.c) */
} itest_server_t;

static itest_server_t S;

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static inline const char *server_path(void)
{
    const char *p = getenv("CTE_SERVER");
    if (p && *p) return p;
    if (access("./cte-server", X_OK) == 0) return "./cte-server";
    return "build/cte-server";
}

/* How long a start or a stop may take: sanitizer builds start slowly. */
static inline double start_timeout(void)
{
    const char *s = getenv("CTE_SANITIZE");
    return s && (!strcmp(s, "ON") || !strcmp(s, "1")) ? 60.0 : 15.0;
}

/* A TCP port that was free on 127.0.0.1 a moment ago (bind to 0, read it, close). */
static inline int free_port(void)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0) return -1;
    if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    close(fd);
    return port;
}

static inline void dump_log(void)
{
    char buf[4096];
    size_t n;
    FILE *f = fopen(S.log, "r");

    if (!f) return;
    fprintf(stderr, "---- %s ----\n", S.log);
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) fwrite(buf, 1, n, stderr);
    fprintf(stderr, "---- end of server log ----\n");
    fclose(f);
}

/* SIGTERM, then waits: the exit status (128 + signal if killed), or -1 (SIGKILLed after the
 * timeout, or no server). */
static inline int stop_server(void)
{
    double deadline = now_s() + start_timeout();
    int status = 0;

    if (S.pid <= 0) return -1;
    kill(S.pid, SIGTERM);
    while (now_s() < deadline) {
        if (waitpid(S.pid, &status, WNOHANG) == S.pid) {
            S.pid = 0;
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        }
        usleep(10000);
    }
    kill(S.pid, SIGKILL);
    waitpid(S.pid, &status, 0);
    S.pid = 0;
    return -1;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path) == 0 || errno == ENOENT ? 0 : -1;
}

/* Removes the server's temp dir with everything in it (log, socket, the file tier's data). */
static inline void remove_dir(void)
{
    if (S.dir[0] && nftw(S.dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fprintf(stderr, "could not remove %s: %s\n", S.dir, strerror(errno));
}

/* In the forked child: output to S.log (appended: a restart in the same dir keeps the first
 * run's log), killed with the parent, working dir S.dir; execs the server with --port, --bind
 * 127.0.0.1, --unixsocket S.sock, --dir S.dir and then the NULL-terminated extra arguments
 * (at most 32). bin: the program (NULL: server_path(), the cte-server under test). Never
 * returns. */
static inline void itest_exec(const char *bin, const char *const *extra)
{
    char port[16];
    if (!bin) bin = server_path();
    const char *argv[48] = {bin,    "--port", port, "--bind", "127.0.0.1", "--unixsocket",
                            S.sock, "--dir",  S.dir};
    int n = 9, fd = open(S.log, O_WRONLY | O_CREAT | O_APPEND, 0644);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    snprintf(port, sizeof port, "%d", S.port);
    if (chdir(S.dir) != 0) _exit(126);
    for (int i = 0; extra && extra[i] && n < 47; i++) argv[n++] = extra[i];
    argv[n] = NULL;
    execv(bin, (char *const *)argv);
    fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
    _exit(127);
}

/* Starts a server in a new /tmp/<prefix>XXXXXX: exec_server runs in the child, ready waits
 * for it (0 ready, -1 not); five attempts (a port taken meanwhile), then the test fails. */
static inline void itest_start(const char *prefix, void (*exec_server)(void), int (*ready)(void))
{
    for (int attempt = 0; attempt < 5; attempt++) {
        snprintf(S.dir, sizeof S.dir, "/tmp/%sXXXXXX", prefix);
        cr_assert_not_null(mkdtemp(S.dir), "mkdtemp: %s", strerror(errno));
        snprintf(S.sock, sizeof S.sock, "%s/s.sock", S.dir);
        snprintf(S.log, sizeof S.log, "%s/server.log", S.dir);
        S.port = free_port();
        cr_assert_gt(S.port, 0);
        S.pid = fork();
        cr_assert_geq(S.pid, 0, "fork: %s", strerror(errno));
        if (S.pid == 0) exec_server();
        if (ready() == 0) return;
        dump_log();
        if (S.pid > 0) stop_server();
        remove_dir();
    }
    cr_assert_fail("%s did not start (5 attempts)", server_path());
}

/* Stops the server, expecting a clean exit (its log is shown otherwise), and removes its dir. */
static inline void itest_stop(void)
{
    int rc = stop_server();
    if (rc != 0) dump_log();
    cr_expect_eq(rc, 0, "the server exited with %d after SIGTERM (log above)", rc);
    remove_dir();
}

#endif
