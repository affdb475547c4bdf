/* main.c - process start-up: settings, the libuv loop, signals, systemd readiness.
 *
 * Order: config (embedded default or file, then command-line overrides; a bad setting stops
 * the start with a message), log, working directory and its lock (one server per --dir),
 * keyspace and tiers, listeners, the AOF load, then READY=1 to systemd. SIGTERM/SIGINT and SHUTDOWN
 * stop the loop; listeners close and the Unix socket file is removed before exit. */
#include "common/alloc.h"
#include "common/buf.h"
#include "common/flock.h"
#include "common/log.h"
#include "common/util.h"
#include "server/persist/aof.h"
#include "server/persist/rdb_import.h"
#include "server/net/net.h"
#include "server/rooms.h"
#include "server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <uv.h>

#define CTE_VERSION "0.1.0"
#define DIR_LOCK_FILE "cte-server.lock" /* in --dir */

static uv_loop_t loop;
static uv_timer_t cron_timer;
static uv_signal_t sig_term, sig_int;

/* Sends one state line to systemd's NOTIFY_SOCKET, if there is one (Type=notify). */
static void notify_systemd(const char *state)
{
    const char *path = getenv("NOTIFY_SOCKET");
    if (!path || !*path || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) return;
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path));
    if (sa.sun_path[0] == '@') sa.sun_path[0] = '\0';
    int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return;
    socklen_t len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + strlen(path));
    if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa, len) < 0)
        log_warning("systemd notify failed: %s", strerror(errno));
    close(fd);
}

static void stop_server(const char *why)
{
    log_warning("%s", why);
    notify_systemd("STOPPING=1");
    uv_timer_stop(&cron_timer);
    uv_signal_stop(&sig_term);
    uv_signal_stop(&sig_int);
    aof_shutdown();
    net_stop();
    uv_stop(&loop);
}

static void on_cron(uv_timer_t *t)
{
    server_cron();
    if (srv.shutdown_asap) stop_server("User requested shutdown...");
}

static void on_signal(uv_signal_t *s, int signum)
{
    const char *why = signum == SIGINT ? "Received SIGINT scheduling shutdown..."
                                       : "Received SIGTERM scheduling shutdown...";
    if (srv.loading) { /* aof_load stops at its next step and main() shuts down */
        log_warning("%s", why);
        srv.shutdown_asap = 1;
        return;
    }
    stop_server(why);
}

/* --import-rdb FILE: the Redis RDB file into the keyspace, after the AOF (its keys replace
 * the AOF's), then, with appendonly on, a rewrite so that the imported keys are in the AOF
 * before the first client writes. Returns 0, -1 (do not start) or RDB_IMPORT_STOPPED. */
static void run_loop_while_loading(void);

static int import_rdb(void)
{
    char err[256];
    int rc = rdb_import_file(srv.cfg.import_rdb, run_loop_while_loading, NULL);
    if (rc == RDB_IMPORT_STOPPED) return rc;
    if (rc < 0) {
        log_warning("The import of %s failed: not starting (fix or remove --import-rdb)",
                    srv.cfg.import_rdb);
        return -1;
    }
    if (srv.cfg.appendonly && aof_rewrite_now(err, sizeof err) < 0) {
        log_warning("Can't write the imported keys to the append only file: %s", err);
        return -1;
    }
    return 0;
}

/* While the AOF loads (aof_load calls this now and then): accepts connections and answers
 * what arrived, -LOADING to most commands, without waiting. The cron starts after the load; a
 * SIGTERM or SHUTDOWN meanwhile stops the load (aof_load returns AOF_LOAD_STOPPED). */
static void run_loop_while_loading(void)
{
    uv_run(&loop, UV_RUN_NOWAIT);
}

/* Raises the descriptor limit to fit maxclients, as Redis does. */
static void raise_fd_limit(void)
{
    struct rlimit rl;
    rlim_t want = (rlim_t)srv.cfg.maxclients + 32;
    if (getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= want) return;
    rlim_t cur = want < rl.rlim_max ? want : rl.rlim_max;
    rl.rlim_cur = cur;
    if (setrlimit(RLIMIT_NOFILE, &rl) != 0 && getrlimit(RLIMIT_NOFILE, &rl) == 0) cur = rl.rlim_cur;
    if (cur >= want) return;
    /* as Redis: fewer clients, so that the last ones get "max number of clients reached"
     * instead of a failed accept */
    int fit = cur > 32 + 1 ? (int)(cur - 32) : 1;
    log_warning("Could raise the open files limit only to %lu (maxclients %d needs %lu): "
                "maxclients has been reduced to %d to compensate for the low ulimit",
                (unsigned long)cur, srv.cfg.maxclients, (unsigned long)want, fit);
    srv.cfg.maxclients = fit;
}

/* Forks into the background as redis-server does: the parent exits, the child gets a new
 * session and /dev/null for its standard streams. */
static int daemonize(void)
{
    pid_t pid = fork();
    if (pid < 0) {
        log_warning("fork failed: %s", strerror(errno));
        return -1;
    }
    if (pid > 0) exit(0);
    setsid();
    int fd = open("/dev/null", O_RDWR);
    if (fd >= 0) {
        dup2(fd, 0);
        dup2(fd, 1);
        dup2(fd, 2);
        if (fd > 2) close(fd);
    }
    return 0;
}

/* Creates and enters --dir; from then on srv.cfg.dir is its absolute path, which CONFIG GET
 * dir shows (as Redis, which answers the working directory). */
static int enter_dir(void)
{
    char *cwd;
    if (srv.cfg.dir && *srv.cfg.dir) {
        mkdir(srv.cfg.dir, 0750);
        if (chdir(srv.cfg.dir) != 0) {
            log_warning("Can't chdir to '%s': %s", srv.cfg.dir, strerror(errno));
            return -1;
        }
    }
    if ((cwd = getcwd(NULL, 0))) { /* malloc'ed by libc */
        xfree(srv.cfg.dir);
        srv.cfg.dir = xstrdup(cwd);
        free(cwd);
    }
    return 0;
}

static int dir_lock_fd = -1; /* open until exit */

/* Locks the data directory (we are in it) for this process: a second server on the same
 * --dir would truncate the tier files and interleave its AOF with ours. The lock file holds
 * our pid; the kernel drops the lock when we exit, however we exit. Before daemonize, so that
 * the refusal reaches the terminal: the child keeps the lock and writes its own pid. */
static int lock_dir(void)
{
    long holder;
    int rc = flock_pidfile_open(DIR_LOCK_FILE, &dir_lock_fd, &holder);
    if (rc == -EWOULDBLOCK && holder)
        log_warning("Can't use the data directory %s: it is in use by another cte-server "
                    "(pid %ld, lock file %s/%s)",
                    srv.cfg.dir, holder, srv.cfg.dir, DIR_LOCK_FILE);
    else if (rc == -EWOULDBLOCK)
        log_warning("Can't use the data directory %s: it is in use by another cte-server "
                    "(lock file %s/%s)",
                    srv.cfg.dir, srv.cfg.dir, DIR_LOCK_FILE);
    else if (rc == -EACCES || rc == -EROFS) { /* nothing can be written there either */
        log_warning("Can't create the lock file %s/%s (%s): starting without it", srv.cfg.dir,
                    DIR_LOCK_FILE, strerror(-rc));
        return 0;
    } else if (rc < 0)
        log_warning("Can't lock the data directory %s (%s/%s): %s", srv.cfg.dir, srv.cfg.dir,
                    DIR_LOCK_FILE, strerror(-rc));
    return rc;
}

/* Settings that are accepted (so redis.conf habits carry over) but do nothing yet. */
static void warn_unimplemented(void)
{
    if (srv.cfg.io_threads > 1)
        log_warning("io-threads %d: I/O threads are not implemented yet, the loop thread "
                    "does all the work",
                    srv.cfg.io_threads);
}

static void usage(void)
{
    printf("Usage: cte-server [/path/to/cte.yaml] [options]\n"
           "       cte-server --config FILE [--<key> <value> ...] [--tier "
           "NAME:KIND:CAP[:PATH[:SCORE]]]\n"
           "       cte-server ... --import-rdb dump.rdb   (loads a Redis RDB file first)\n"
           "       cte-server --config-doc   (prints the configuration reference)\n"
           "       cte-server -v | --version\n"
           "\n"
           "Options override the config file (the embedded default without one), in order.\n"
           "An option takes one value, except the list-valued keys (--bind, --save,\n"
           "--client-output-buffer-limit, --tiers) and --tier, which take every argument up to\n"
           "the next --option. After an option's one value, an argument that is not an option\n"
           "is the config file: `cte-server --port 7000 /etc/cte.yaml` reads /etc/cte.yaml.\n"
           "An option needs a value (give \"\" for an empty one); --save alone means save \"\".\n");
}

int main(int argc, char **argv)
{
    char err[1024];
    if (argc > 1 && (!strcmp(argv[1], "-v") || !strcmp(argv[1], "--version"))) {
        printf("cte-server v=%s malloc=%s\n", CTE_VERSION, alloc_name());
        return 0;
    }
    if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage();
        return 0;
    }
    if (argc > 1 && !strcmp(argv[1], "--config-doc")) {
        buf_t doc;
        buf_init(&doc);
        config_doc_markdown(&doc);
        fwrite(doc.data, 1, doc.len, stdout);
        buf_deinit(&doc);
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    config_init(&srv.cfg);
    if (config_apply_args(&srv.cfg, argc, argv, err, sizeof(err)) < 0) {
        fprintf(stderr, "cte-server: %s\n", err);
        return 1;
    }
    srv.executable = argv[0];
    if (log_open(srv.cfg.logfile, srv.cfg.loglevel) < 0) {
        fprintf(stderr, "cte-server: can't open the log file %s: %s\n", srv.cfg.logfile,
                strerror(errno));
        return 1;
    }
    if (enter_dir() < 0 || lock_dir() < 0) return 1;
    if (srv.cfg.daemonize && daemonize() < 0) return 1;
    if (srv.cfg.daemonize && dir_lock_fd >= 0 && flock_pidfile_write(dir_lock_fd) < 0) return 1;
    raise_fd_limit();
    /* after daemonize (threads do not survive fork): freed pages go back to the OS as they
     * decay, also while no command runs, as Redis's jemalloc-bg-thread */
    int bg = alloc_background_purge(1);
    if (bg < 0) log_warning("jemalloc background purging is off: %s", strerror(-bg));
    warn_unimplemented();
    uv_loop_init(&loop);
    srv.loop = &loop;
    server_rooms_register();
    server_init();
    if (srv.init_error[0]) {
        log_warning("%s", srv.init_error);
        return 1;
    }
    log_notice("cte-server %s starting, pid=%d", CTE_VERSION, (int)getpid());
    if (net_start() < 0) {
        log_warning("Failed listening on the configured addresses, exiting.");
        return 1;
    }
    uv_timer_init(&loop, &cron_timer);
    uv_signal_init(&loop, &sig_term);
    uv_signal_start(&sig_term, on_signal, SIGTERM);
    uv_signal_init(&loop, &sig_int);
    uv_signal_start(&sig_int, on_signal, SIGINT);
    int loaded = aof_load(run_loop_while_loading);
    if (loaded < 0 || (loaded == 0 && aof_open() < 0)) {
        net_stop(); /* the listeners were open during the load: no socket file left behind */
        return 1;
    }
    if (loaded == AOF_LOAD_STOPPED) {
        stop_server("Shutting down before the append only file finished loading");
        uv_run(&loop, UV_RUN_NOWAIT); /* close callbacks */
        log_warning("cte-server is now ready to exit, bye bye...");
        return 0;
    }
    int imported = srv.cfg.import_rdb ? import_rdb() : 0;
    if (imported < 0) {
        net_stop();
        return 1;
    }
    if (imported == RDB_IMPORT_STOPPED) {
        stop_server("Shutting down before the RDB import finished");
        uv_run(&loop, UV_RUN_NOWAIT); /* close callbacks */
        log_warning("cte-server is now ready to exit, bye bye...");
        return 0;
    }
    uv_timer_start(&cron_timer, on_cron, 1000 / (uint64_t)srv.cfg.hz, 1000 / (uint64_t)srv.cfg.hz);
    if (srv.cfg.pidfile && *srv.cfg.pidfile) {
        FILE *f = fopen(srv.cfg.pidfile, "w");
        if (f) {
            fprintf(f, "%d\n", (int)getpid());
            fclose(f);
        }
    }
    log_notice("Ready to accept connections tcp port=%d unixsocket=%s", srv.tcp_port,
               srv.cfg.unixsocket ? srv.cfg.unixsocket : "");
    notify_systemd("READY=1\nSTATUS=Ready to accept connections");
    uv_run(&loop, UV_RUN_DEFAULT);
    /* let close callbacks run */
    uv_run(&loop, UV_RUN_NOWAIT);
    if (srv.cfg.pidfile && *srv.cfg.pidfile) unlink(srv.cfg.pidfile);
    log_warning("cte-server is now ready to exit, bye bye...");
    return 0;
}
