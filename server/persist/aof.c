/* server/persist/aof.c - the append-only file (see aof.h), and SAVE / BGSAVE / BGREWRITEAOF /
 * LASTSAVE.
 *
 * The file is what clients send, as Redis's: RESP multibulk requests, plus annotation lines
 * that start with '#' (as Redis 7's "#TS:" lines), which the loader reads and skips:
 *
 *   #MS:<unix ms>\r\n   the time the commands that follow ran at; the loader runs them with
 *                       that time frozen as "now" (blob times, relative expiries)
 *   *2\r\n$6\r\nSELECT\r\n$1\r\n3\r\n        before a record whose db differs from the last one
 *   *1\r\n$5\r\nMULTI\r\n ... *1\r\n$4\r\nEXEC\r\n   around the writes of one transaction
 *
 * Commands whose replay would differ are logged as others (transform rows below): blocking
 * pops as their non-blocking forms, relative expiries as absolute ones, INCRBYFLOAT as SET;
 * SPOP logs SREM itself (aof_replace_argv). Keys that expire or are evicted are logged as DEL.
 *
 * Writing: records collect in aof.buf during a loop turn; aof_flush() writes them before
 * replies leave (net.c calls it before handing output to sockets). appendfsync always fsyncs
 * right there, once for all the turn's writes (group commit); everysec hands an fsync to the
 * background thread at most once a second; no leaves it to the kernel. An open transaction
 * (MULTI logged, EXEC not yet: a script that runs long and serves other clients meanwhile)
 * stays in aof.buf from its record on until it ends, so the file never holds part of one:
 * what a kill -9 cuts off is the script whole, and a transaction dropped (aof_exec_discard,
 * SHUTDOWN NOSAVE during a busy script) never reaches the file.
 *
 * Rewrite: a forked child writes the dataset (server/persist/rewrite.c) to
 * temp-rewriteaof-bg-<pid>.aof while the parent goes on. Before the fork, file-tier writes in
 * flight are drained (new ones wait, see aof_fork_waitname) so that the child's snapshot of blob
 * bytes matches their metadata; while the child lives, file-tier space that is freed is held back
 * (tier_set_hold_frees) so the child never reads blocks reused by newer data, and every record
 * also goes to aof.diff. When the child succeeded, the diff is appended to its file, which is
 * fsynced, renamed over the AOF, and the directory fsynced. Bytes the parent overwrites in
 * place while the child reads them are written again by the diff's records.
 *
 * Loading: the file is read in 1 MB chunks and run through a fake client. At start the loop
 * already listens, and every 10 ms or so, between two commands, the loader lets it run
 * (load_yield): clients get -LOADING, INFO shows the progress, and a shutdown that arrives
 * stops the load with the file untouched.
 *
 * Threads: the loop thread, except bio_main (fsync and close of old files) and the child. */
#include "server/persist/aof.h"

#include "common/alloc.h"
#include "common/log.h"
#include "common/util.h"
#include "server/block.h"
#include "server/command.h"
#include "server/multi.h"
#include "server/reply.h"
#include "server/persist/rewrite.h"
#include "server/server.h"
#include "storage/t_hash.h"
#include "storage/t_tag.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define AOF_BUF_KEEP (64u << 10)     /* a record buffer larger than this is freed once empty
                                        (a burst of large writes does not keep its peak) */
#define LOAD_CHUNK (1u << 20)        /* bytes read at a time while loading */
#define LOAD_EVENTS_US 10000         /* the loop runs this often while loading (load_yield) */
#define FORK_WAITNAME "\xff" "aof-fork"
#define TEMP_PREFIX "temp-rewriteaof-"
#define BACKOFF_MIN_MS 1000           /* wait after a failed rewrite, doubled per failure ... */
#define BACKOFF_MAX_MS 60000          /* ... up to this */
#define CHILD_ERRNO_EXIT 100          /* a rewrite child that failed with errno e exits 100 + e */

enum { AOF_OFF, AOF_ON, AOF_WAIT_REWRITE /* turned on: the first rewrite makes the file */ };

static struct {
    int state;
    int fd;
    buf_t buf;         /* records not written yet */
    int seldb;         /* db of the last record in the stream, -1: state it again */
    long long last_ms; /* time of the last #MS line, 0: state it again */
    int in_exec, exec_open;
    size_t tx_start, tx_diff_start; /* where the open transaction's records start in the
                                       stream and in diff (exec_open) */
    buf_t repl; /* what the running command logs instead of its argv (aof_replace_argv) */
    long long current_size, base_size;
    long long last_fsync_ms;
    int unsynced; /* written since the last fsync was started */
    int write_errno;
    char write_err[160];
    /* rewrite */
    pid_t child;
    int fork_pending, scheduled, child_for_aof;
    char child_tmp[64];
    buf_t diff;
    long long fork_dirty, rewrite_start_ms, last_rewrite_s, retry_after_ms;
    int last_rewrite_ok;
    int failures;        /* rewrites failed in a row: the backoff step */
    char last_error[96]; /* why the last one failed, "" after a success */
    uint64_t rewrites;
    long long last_save_s;
} aof = {.fd = -1, .seldb = -1, .child = -1, .last_rewrite_ok = 1, .last_rewrite_s = -1};

/* ---- the background thread: fsync and close ---- */

enum { BIO_FSYNC, BIO_CLOSE };

typedef struct bio_job {
    struct bio_job *next;
    int op, fd;
} bio_job_t;

static pthread_mutex_t bio_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bio_cv = PTHREAD_COND_INITIALIZER;
static bio_job_t *bio_head, *bio_tail;
static pthread_t bio_thread;
static int bio_started, bio_quit;
static _Atomic int bio_fsyncs_pending;
static _Atomic int bio_fsync_errno;

static void *bio_main(void *ud)
{
    for (;;) {
        pthread_mutex_lock(&bio_mu);
        while (!bio_head && !bio_quit) pthread_cond_wait(&bio_cv, &bio_mu);
        bio_job_t *j = bio_head;
        if (j) {
            bio_head = j->next;
            if (!bio_head) bio_tail = NULL;
        }
        pthread_mutex_unlock(&bio_mu);
        if (!j) return NULL;
        if (j->op == BIO_FSYNC) {
            bio_fsync_errno = fdatasync(j->fd) < 0 ? errno : 0;
            bio_fsyncs_pending--;
        } else {
            close(j->fd);
        }
        free(j); /* plain malloc: the allocation counters belong to the loop thread */
    }
}

static void bio_submit(int op, int fd)
{
    if (!bio_started) {
        if (pthread_create(&bio_thread, NULL, bio_main, NULL) != 0) {
            if (op == BIO_FSYNC) fdatasync(fd); /* no thread: do it here */
            else close(fd);
            return;
        }
        bio_started = 1;
    }
    bio_job_t *j = malloc(sizeof(*j));
    if (!j) abort();
    *j = (bio_job_t){NULL, op, fd};
    if (op == BIO_FSYNC) bio_fsyncs_pending++;
    pthread_mutex_lock(&bio_mu);
    if (bio_tail) bio_tail->next = j;
    else bio_head = j;
    bio_tail = j;
    pthread_cond_signal(&bio_cv);
    pthread_mutex_unlock(&bio_mu);
}

/* Lets the thread finish its queue and stop. */
static void bio_stop(void)
{
    if (!bio_started) return;
    pthread_mutex_lock(&bio_mu);
    bio_quit = 1;
    pthread_cond_signal(&bio_cv);
    pthread_mutex_unlock(&bio_mu);
    pthread_join(bio_thread, NULL);
    bio_started = bio_quit = 0;
}

/* ---- encoding records ---- */

static void put_cmd(buf_t *b, int argc, const resp_arg_t *argv)
{
    buf_printf(b, "*%d\r\n", argc);
    for (int i = 0; i < argc; i++) resp_w_bulk(b, argv[i].ptr, argv[i].len);
}

/* A command from C strings (NULL-terminated list). */
static void put_strs(buf_t *b, const char *const *s)
{
    resp_arg_t a[8];
    int n = 0;
    for (; s[n] && n < 8; n++) a[n] = (resp_arg_t){s[n], strlen(s[n])};
    put_cmd(b, n, a);
}

static resp_arg_t arg_of(const char *s)
{
    return (resp_arg_t){s, strlen(s)};
}

/* ---- what some commands log instead of their argv ---- */

/* Each writes the replacement into b and returns 1, or returns 0 to log argv as it is. */
typedef int transform_fn(buf_t *b, client_t *c, int argc, const resp_arg_t *argv);

/* BLPOP/BRPOP k... timeout -> LMPOP n k... LEFT|RIGHT; BZPOPMIN/MAX -> ZMPOP n k... MIN|MAX:
 * the same key is served, since the state is the same when the log is replayed. */
static int tf_bpop(buf_t *b, client_t *c, int argc, const resp_arg_t *argv)
{
    const char *name = c->cmd->name;
    int zset = name[1] == 'z', nkeys = argc - 2;
    char n[24];
    snprintf(n, sizeof(n), "%d", nkeys);
    buf_printf(b, "*%d\r\n", nkeys + 3);
    resp_w_bulk(b, zset ? "ZMPOP" : "LMPOP", 5);
    resp_w_bulk(b, n, strlen(n));
    for (int i = 1; i <= nkeys; i++) resp_w_bulk(b, argv[i].ptr, argv[i].len);
    const char *end = zset ? (name[6] == 'i' ? "MIN" : "MAX") : (name[1] == 'l' ? "LEFT" : "RIGHT");
    resp_w_bulk(b, end, strlen(end));
    return 1;
}

/* BRPOPLPUSH src dst timeout, BLMOVE src dst from to timeout: the name without its B, the
 * timeout dropped. BLMPOP/BZMPOP timeout numkeys ...: the timeout dropped. */
static int tf_unblock(buf_t *b, client_t *c, int argc, const resp_arg_t *argv)
{
    int mpop = strstr(c->cmd->name, "mpop") != NULL;
    buf_printf(b, "*%d\r\n", argc - 1);
    resp_w_bulk(b, c->cmd->name + 1, strlen(c->cmd->name) - 1);
    for (int i = mpop ? 2 : 1; i < (mpop ? argc : argc - 1); i++)
        resp_w_bulk(b, argv[i].ptr, argv[i].len);
    return 1;
}

/* The key's TTL as it is now: PEXPIREAT, PERSIST, or DEL when the command removed the key. */
static void put_ttl_now(buf_t *b, client_t *c, const resp_arg_t *key)
{
    kv_t *kv = db_find(c->db, key->ptr, key->len);
    long long when = kv ? db_get_expire(c->db, kv) : -1;
    if (!kv) {
        resp_arg_t a[2] = {arg_of("DEL"), *key};
        put_cmd(b, 2, a);
        return;
    }
    if (when < 0) {
        resp_arg_t a[2] = {arg_of("PERSIST"), *key};
        put_cmd(b, 2, a);
        return;
    }
    char t[24];
    resp_arg_t a[3] = {arg_of("PEXPIREAT"), *key, {t, (size_t)ll_to_str(t, when)}};
    put_cmd(b, 3, a);
}

/* EXPIRE PEXPIRE EXPIREAT PEXPIREAT GETEX: the TTL they left, as an absolute time. */
static int tf_expire(buf_t *b, client_t *c, int argc, const resp_arg_t *argv)
{
    put_ttl_now(b, c, &argv[1]);
    return 1;
}

static int has_relative_ttl(int argc, const resp_arg_t *argv)
{
    for (int i = 3; i < argc; i++)
        if (argv[i].len == 2 && (!strncasecmp(argv[i].ptr, "ex", 2) || !strncasecmp(argv[i].ptr, "px", 2)))
            return 1;
    return 0;
}

/* SET with EX/PX, SETEX, PSETEX: SET key value PXAT <absolute ms>, one record (the flags that
 * decided whether it ran, NX XX GET, no longer matter). */
static int tf_set(buf_t *b, client_t *c, int argc, const resp_arg_t *argv)
{
    int setex = c->cmd->name[3] == 'e' || c->cmd->name[0] == 'p';
    if (!setex && !has_relative_ttl(argc, argv)) return 0;
    kv_t *kv = db_find(c->db, argv[1].ptr, argv[1].len);
    if (!kv || kv->val->type != OBJ_STRING) return 0;
    const str_obj_t *s = (const str_obj_t *)kv->val;
    long long when = db_get_expire(c->db, kv);
    char t[24];
    resp_arg_t a[5] = {arg_of("SET"), argv[1], {s->data, s->len}, arg_of("PXAT"),
                       {t, (size_t)ll_to_str(t, when)}};
    put_cmd(b, when < 0 ? 3 : 5, a);
    return 1;
}

/* INCRBYFLOAT: the value it left, as Redis logs it (SET key value KEEPTTL). */
static int tf_incrbyfloat(buf_t *b, client_t *c, int argc, const resp_arg_t *argv)
{
    kv_t *kv = db_find(c->db, argv[1].ptr, argv[1].len);
    if (!kv || kv->val->type != OBJ_STRING) return 0;
    const str_obj_t *s = (const str_obj_t *)kv->val;
    resp_arg_t a[4] = {arg_of("SET"), argv[1], {s->data, s->len}, arg_of("KEEPTTL")};
    put_cmd(b, 4, a);
    return 1;
}

/* HINCRBYFLOAT: HSET key field value. */
static int tf_hincrbyfloat(buf_t *b, client_t *c, int argc, const resp_arg_t *argv)
{
    kv_t *kv = db_find(c->db, argv[1].ptr, argv[1].len);
    const char *v;
    size_t vlen;
    if (!kv || kv->val->type != OBJ_HASH ||
        !hash_get((hash_t *)kv->val, argv[2].ptr, argv[2].len, &v, &vlen))
        return 0;
    resp_arg_t a[4] = {arg_of("HSET"), argv[1], argv[2], {v, vlen}};
    put_cmd(b, 4, a);
    return 1;
}

static const struct {
    const char *name;
    transform_fn *fn;
} transforms[] = {
    {"blpop", tf_bpop},           {"brpop", tf_bpop},          {"bzpopmin", tf_bpop},
    {"bzpopmax", tf_bpop},        {"brpoplpush", tf_unblock},  {"blmove", tf_unblock},
    {"blmpop", tf_unblock},       {"bzmpop", tf_unblock},      {"expire", tf_expire},
    {"pexpire", tf_expire},       {"expireat", tf_expire},     {"pexpireat", tf_expire},
    {"getex", tf_expire},         {"set", tf_set},             {"setex", tf_set},
    {"psetex", tf_set},           {"incrbyfloat", tf_incrbyfloat},
    {"hincrbyfloat", tf_hincrbyfloat},
};

static transform_fn *transform_of(const command_t *cmd)
{
    /* only these names: a first-letter filter keeps the common commands off the strcmp path */
    if (!strchr("bepgsih", cmd->name[0])) return NULL;
    for (size_t i = 0; i < sizeof(transforms) / sizeof(transforms[0]); i++)
        if (!strcmp(cmd->name, transforms[i].name)) return transforms[i].fn;
    return NULL;
}

/* ---- records ---- */

static int logging(void)
{
    return aof.state != AOF_OFF && !srv.loading;
}

/* Where records go: the file's buffer, or (turning on, no file yet) only the diff. */
static buf_t *stream(void)
{
    return aof.state == AOF_ON ? &aof.buf : &aof.diff;
}

/* Opens a record: SELECT, the time line and MULTI as needed. Returns where it starts. */
static size_t record_begin(int dbid)
{
    buf_t *b = stream();
    size_t start = b->len, diff_start = aof.diff.len;
    if (dbid != aof.seldb) {
        char id[16];
        snprintf(id, sizeof(id), "%d", dbid);
        put_strs(b, (const char *const[]){"SELECT", id, NULL});
        aof.seldb = dbid;
    }
    long long now = db_now_ms ? db_now_ms : time_ms();
    if (now != aof.last_ms) {
        buf_printf(b, "#MS:%lld\r\n", now);
        aof.last_ms = now;
    }
    if (aof.in_exec && !aof.exec_open) {
        aof.tx_start = start;
        aof.tx_diff_start = diff_start;
        put_strs(b, (const char *const[]){"MULTI", NULL});
        aof.exec_open = 1;
    }
    return start;
}

/* Closes a record: while a rewrite child lives, its bytes also go to the diff. */
static void record_end(size_t start)
{
    buf_t *b = stream();
    if (b == &aof.buf && aof.child > 0 && aof.child_for_aof)
        buf_append(&aof.diff, b->data + start, b->len - start);
}

void aof_replace_argv(client_t *c, int argc, const resp_arg_t *argv)
{
    if (logging()) put_cmd(&aof.repl, argc, argv);
}

void aof_replace_argv_drop(void)
{
    buf_clear(&aof.repl);
}

void aof_propagate(client_t *c, int dbid, int argc, const resp_arg_t *argv)
{
    if (!logging()) {
        buf_clear(&aof.repl);
        return;
    }
    size_t start = record_begin(dbid);
    buf_t *b = stream();
    transform_fn *tf;
    if (aof.repl.len) buf_append(b, aof.repl.data, aof.repl.len);
    else if (!(c && c->cmd && (tf = transform_of(c->cmd)) && tf(b, c, argc, argv)))
        put_cmd(b, argc, argv);
    buf_clear(&aof.repl);
    record_end(start);
}

void aof_propagate_del(int dbid, const char *key, size_t len)
{
    if (!logging()) return;
    size_t start = record_begin(dbid);
    resp_arg_t a[2] = {arg_of("DEL"), {key, len}};
    put_cmd(stream(), 2, a);
    record_end(start);
}

void aof_exec_begin(void)
{
    aof.in_exec = 1;
    aof.exec_open = 0;
}

void aof_exec_end(void)
{
    if (aof.exec_open) {
        size_t start = stream()->len;
        put_strs(stream(), (const char *const[]){"EXEC", NULL});
        record_end(start);
    }
    aof.in_exec = aof.exec_open = 0;
}

void aof_exec_discard(void)
{
    if (aof.exec_open) {
        buf_t *b = stream();
        if (b->len > aof.tx_start) b->len = aof.tx_start;
        if (b->data) b->data[b->len] = '\0';
        if (aof.diff.len > aof.tx_diff_start) aof.diff.len = aof.tx_diff_start;
        aof.seldb = -1; /* the dropped records may have moved both */
        aof.last_ms = 0;
    }
    aof.in_exec = aof.exec_open = 0;
}

/* ---- writing ---- */

/* write() until done; returns the bytes written (short only on an error, errno set). */
static size_t write_all(int fd, const char *p, size_t len)
{
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(fd, p + done, len - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += (size_t)n;
    }
    return done;
}

static void write_failed(int err)
{
    if (!aof.write_errno)
        log_warning("Error writing to the AOF file: %s", strerror(err));
    aof.write_errno = err;
    snprintf(aof.write_err, sizeof(aof.write_err), "MISCONF Errors writing to the AOF file: %s",
             strerror(err));
    if (srv.cfg.appendfsync == CONFIG_FSYNC_ALWAYS) {
        /* as Redis: a reply may already promise what is not on disk; stopping is the only
         * way to keep that promise false for nobody */
        log_warning("Can't recover from AOF write error when the AOF fsync policy is "
                    "'always'. Exiting...");
        exit(1);
    }
}

void aof_flush(void)
{
    /* an open transaction stays: only what precedes it is written */
    size_t len = aof.exec_open && aof.tx_start < aof.buf.len ? aof.tx_start : aof.buf.len;
    if (aof.state != AOF_ON || len == 0) return;
    size_t n = write_all(aof.fd, aof.buf.data, len);
    aof.current_size += (long long)n;
    if (aof.exec_open) aof.tx_start -= n < aof.tx_start ? n : aof.tx_start;
    if (n < len) {
        write_failed(errno ? errno : ENOSPC);
        buf_consume(&aof.buf, n); /* the rest goes with the next flush */
        return;
    }
    if (aof.write_errno) log_notice("AOF write error looks solved, the server can write again.");
    aof.write_errno = 0;
    buf_consume(&aof.buf, n);
    if (!aof.buf.len && aof.buf.cap > AOF_BUF_KEEP) buf_deinit(&aof.buf);
    if (srv.cfg.appendfsync == CONFIG_FSYNC_ALWAYS) {
        if (fdatasync(aof.fd) < 0) write_failed(errno);
        aof.last_fsync_ms = time_ms();
        return;
    }
    aof.unsynced = 1;
    if (srv.cfg.appendfsync == CONFIG_FSYNC_EVERYSEC) {
        long long now = time_ms();
        if (now - aof.last_fsync_ms >= 1000 && !bio_fsyncs_pending) {
            bio_submit(BIO_FSYNC, aof.fd);
            aof.last_fsync_ms = now;
            aof.unsynced = 0;
        }
    }
}

int aof_write_failing(void)
{
    return aof.write_errno != 0;
}

const char *aof_write_error_msg(void)
{
    return aof.write_err;
}

/* ---- files ---- */

static const char *aof_path(void)
{
    return srv.cfg.appendfilename && *srv.cfg.appendfilename ? srv.cfg.appendfilename
                                                             : "appendonly.aof";
}

/* fsyncs the directory holding the AOF, so a rename in it is durable. */
static int fsync_dir(void)
{
    int fd = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static long long file_size(int fd)
{
    struct stat st;
    return fstat(fd, &st) == 0 ? (long long)st.st_size : 0;
}

/* Opens the AOF for appending and makes it the live file. Returns 0 or -1 (logged). */
static int open_live(void)
{
    int fd = open(aof_path(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_warning("Can't open the append-only file %s: %s", aof_path(), strerror(errno));
        return -1;
    }
    if (aof.fd >= 0) bio_submit(BIO_CLOSE, aof.fd);
    aof.fd = fd;
    aof.state = AOF_ON;
    aof.current_size = aof.base_size = file_size(fd);
    aof.seldb = -1;
    aof.last_ms = 0;
    return 0;
}

int aof_open(void)
{
    aof.last_save_s = time_ms() / 1000;
    if (!srv.cfg.appendonly) return 0;
    return open_live();
}

static void remove_temp_files(void)
{
    DIR *d = opendir(".");
    if (!d) return;
    for (struct dirent *e; (e = readdir(d));)
        if (!strncmp(e->d_name, TEMP_PREFIX, strlen(TEMP_PREFIX))) unlink(e->d_name);
    closedir(d);
}

static int sink_fd(void *ud, const char *p, size_t len)
{
    return write_all(*(int *)ud, p, len) == len ? 0 : -1;
}

/* Writes the dataset to path, fsynced. Returns 0, or -1 with errno-ish message in err. */
static int write_snapshot(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "ERR can't create %s: %s", path, strerror(errno));
        return -1;
    }
    buf_t out;
    buf_init(&out);
    long long rc = rewrite_dataset(&out, sink_fd, &fd);
    buf_deinit(&out);
    if (rc != 0 || fsync(fd) < 0) {
        int e = rc > 0 ? EBUSY : errno;
        snprintf(err, errlen, "ERR %s", rc > 0 ? "blobs had writes in flight" : strerror(e));
        close(fd);
        unlink(path);
        errno = e;
        return -1;
    }
    return close(fd) == 0 ? 0 : -1;
}

/* The rewrite child: writes the snapshot and exits; never returns. */
static void child_main(const char *tmp)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* dies with its parent (kill -9 tests, crashes) */
    signal(SIGTERM, SIG_DFL);         /* libuv's handlers would wake the parent's loop */
    signal(SIGINT, SIG_DFL);
    char err[256];
    if (write_snapshot(tmp, err, sizeof(err)) == 0) _exit(0);
    _exit(errno > 0 && errno < 256 - CHILD_ERRNO_EXIT ? CHILD_ERRNO_EXIT + errno : 1);
}

/* A rewrite failed (why): the next automatic or scheduled one waits BACKOFF_MIN_MS, twice as
 * long after each further failure in a row (up to BACKOFF_MAX_MS), so a full disk is not
 * refilled by a temp file every cron tick; one log line per failure says when it retries.
 * BGREWRITEAOF still starts one at once. */
static void rewrite_failed(const char *why)
{
    int step = aof.failures < 7 ? aof.failures : 7;
    long long wait = (long long)BACKOFF_MIN_MS << step;
    if (wait > BACKOFF_MAX_MS) wait = BACKOFF_MAX_MS;
    aof.failures++;
    aof.last_rewrite_ok = 0;
    aof.retry_after_ms = time_ms() + wait;
    snprintf(aof.last_error, sizeof(aof.last_error), "%s", why);
    log_warning("Background AOF rewrite failed: %s (%d in a row); its temp file was removed, "
                "the next automatic try is in %lld s",
                why, aof.failures, wait / 1000);
}

static void rewrite_succeeded(void)
{
    aof.failures = 0;
    aof.last_error[0] = '\0';
    aof.last_rewrite_ok = 1;
    aof.retry_after_ms = 0;
}

/* After a save: the bookkeeping LASTSAVE and INFO read. */
static void saved(long long dirty_at_start)
{
    aof.last_save_s = time_ms() / 1000;
    srv.dirty -= dirty_at_start;
}

static int fork_child(char *err, size_t errlen)
{
    aof_flush(); /* what is pending belongs to the old file; the diff starts empty */
    snprintf(aof.child_tmp, sizeof(aof.child_tmp), TEMP_PREFIX "bg-%d.aof", (int)getpid());
    buf_clear(&aof.diff);
    aof.seldb = -1; /* the first record after the fork states both, in both streams */
    aof.last_ms = 0;
    if (tag_store.tiers) tier_set_hold_frees(tag_store.tiers, 1);
    long long t0 = time_us();
    pid_t pid = fork();
    if (pid == 0) child_main(aof.child_tmp);
    if (pid < 0) {
        if (tag_store.tiers) tier_set_hold_frees(tag_store.tiers, 0);
        snprintf(err, errlen, "ERR Can't rewrite append only file in background: fork: %s",
                 strerror(errno));
        log_warning("%s", err + 4);
        return -1;
    }
    log_notice("Background append only file rewriting started by pid %d (fork took %lld us)",
               (int)pid, time_us() - t0);
    aof.child = pid;
    aof.child_for_aof = aof.state != AOF_OFF;
    aof.fork_dirty = srv.dirty;
    aof.rewrite_start_ms = time_ms();
    return 0;
}

/* Forks once file-tier writes in flight are done; wakes the writes that waited. */
void aof_try_fork(void)
{
    if (!aof.fork_pending || tag_writes_in_flight() > 0) return;
    aof.fork_pending = 0;
    char err[256];
    if (fork_child(err, sizeof(err)) < 0) rewrite_failed(err + 4);
    block_signal_name(FORK_WAITNAME, sizeof(FORK_WAITNAME) - 1);
    block_handle_ready();
}

size_t aof_fork_waitname(char *name)
{
    if (!aof.fork_pending) return 0;
    memcpy(name, FORK_WAITNAME, sizeof(FORK_WAITNAME) - 1);
    return sizeof(FORK_WAITNAME) - 1;
}

int aof_rewrite_background(char *err, size_t errlen)
{
    if (aof.child > 0 || aof.fork_pending) {
        aof.scheduled = 1;
        return 1;
    }
    aof.scheduled = 0;
    aof.fork_pending = 1;
    if (tag_writes_in_flight() == 0) {
        aof.fork_pending = 0;
        if (fork_child(err, errlen) < 0) {
            rewrite_failed(err + 4);
            return -1;
        }
    }
    return 0;
}

/* The child succeeded: its file plus the diff becomes the AOF. Returns 0, or -1 with errno set
 * (the temp file removed; the caller logs it). */
static int install_rewrite(void)
{
    int fd = open(aof.child_tmp, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) goto fail;
    if (aof.child_for_aof && aof.state != AOF_OFF) {
        aof_flush(); /* the old file stays complete up to the switch */
        if (write_all(fd, aof.diff.data ? aof.diff.data : "", aof.diff.len) != aof.diff.len)
            goto fail;
    }
    if (fsync(fd) < 0 || rename(aof.child_tmp, aof_path()) < 0) goto fail;
    fsync_dir();
    if (aof.state == AOF_OFF) {
        close(fd);
    } else {
        /* everything in buf since the fork is in the diff, now in the new file */
        if (aof.fd >= 0) bio_submit(BIO_CLOSE, aof.fd);
        buf_clear(&aof.buf);
        aof.tx_start = 0; /* an open transaction's records so far are in the diff */
        aof.fd = fd;
        aof.state = AOF_ON;
    }
    aof.current_size = aof.base_size = aof.state == AOF_ON ? file_size(aof.fd) : 0;
    log_notice("Background AOF rewrite finished successfully (%zu bytes of writes during it)",
               aof.diff.len);
    return 0;
fail:;
    int e = errno; /* the caller logs it */
    if (fd >= 0) close(fd);
    unlink(aof.child_tmp);
    errno = e;
    return -1;
}

/* Why a rewrite child with wait status st failed, into why. */
static void child_failure(int st, char *why, size_t len)
{
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    if (code > CHILD_ERRNO_EXIT) snprintf(why, len, "%s", strerror(code - CHILD_ERRNO_EXIT));
    else if (WIFSIGNALED(st)) snprintf(why, len, "child killed by signal %d", WTERMSIG(st));
    else snprintf(why, len, "child exit code %d", code);
}

static void reap_child(void)
{
    int st;
    char why[96];
    if (aof.child <= 0 || waitpid(aof.child, &st, WNOHANG) != aof.child) return;
    int ok = WIFEXITED(st) && WEXITSTATUS(st) == 0;
    aof.child = -1;
    if (tag_store.tiers) tier_set_hold_frees(tag_store.tiers, 0);
    if (!ok) {
        child_failure(st, why, sizeof(why));
        unlink(aof.child_tmp);
    } else if (install_rewrite() < 0) {
        ok = 0;
        snprintf(why, sizeof(why), "installing %s: %s", aof.child_tmp, strerror(errno));
    }
    buf_clear(&aof.diff);
    if (aof.diff.cap > AOF_BUF_KEEP) buf_deinit(&aof.diff);
    aof.last_rewrite_s = (time_ms() - aof.rewrite_start_ms) / 1000;
    aof.rewrites++;
    if (ok) {
        rewrite_succeeded();
        saved(aof.fork_dirty);
    } else {
        rewrite_failed(why);
    }
}

static void auto_rewrite(void)
{
    if (aof.state != AOF_ON || aof.child > 0 || aof.fork_pending) return;
    if (time_ms() < aof.retry_after_ms) return; /* backing off after a failure */
    if (srv.cfg.auto_aof_rewrite_percentage <= 0 ||
        aof.current_size < srv.cfg.auto_aof_rewrite_min_size)
        return;
    long long base = aof.base_size ? aof.base_size : 1;
    long long growth = (aof.current_size - base) * 100 / base;
    if (growth < srv.cfg.auto_aof_rewrite_percentage) return;
    log_notice("Starting automatic rewriting of AOF on %lld%% growth", growth);
    char err[256];
    aof_rewrite_background(err, sizeof(err));
}

void aof_cron(void)
{
    reap_child();
    aof_try_fork();
    long long now = time_ms();
    if ((aof.scheduled || aof.state == AOF_WAIT_REWRITE) && aof.child <= 0 &&
        !aof.fork_pending && now >= aof.retry_after_ms) {
        char err[256];
        aof_rewrite_background(err, sizeof(err));
    }
    auto_rewrite();
    /* everysec: a write that found an fsync in flight is synced now */
    if (aof.state == AOF_ON && aof.unsynced && srv.cfg.appendfsync == CONFIG_FSYNC_EVERYSEC &&
        now - aof.last_fsync_ms >= 1000 && !bio_fsyncs_pending) {
        bio_submit(BIO_FSYNC, aof.fd);
        aof.last_fsync_ms = now;
        aof.unsynced = 0;
    }
}

int aof_rewrite_now(char *err, size_t errlen)
{
    if (aof.child > 0 || aof.fork_pending) {
        snprintf(err, errlen, "ERR Background save already in progress");
        return -1;
    }
    if (tag_writes_in_flight() > 0) {
        snprintf(err, errlen, "ERR blobs have writes in flight, retry");
        return -1;
    }
    aof_flush();
    char tmp[64];
    snprintf(tmp, sizeof(tmp), TEMP_PREFIX "%d.aof", (int)getpid());
    long long dirty = srv.dirty;
    if (write_snapshot(tmp, err, errlen) < 0) return -1;
    if (rename(tmp, aof_path()) < 0) {
        snprintf(err, errlen, "ERR rename: %s", strerror(errno));
        unlink(tmp);
        return -1;
    }
    fsync_dir();
    if (aof.state != AOF_OFF && open_live() < 0) {
        snprintf(err, errlen, "ERR can't reopen the append-only file");
        return -1;
    }
    saved(dirty);
    return 0;
}

int aof_config_changed(char *err, size_t errlen)
{
    if (srv.loading) return 0; /* CONFIG SET during the load: aof_open, after it, follows it */
    if (srv.cfg.appendonly && aof.state == AOF_OFF) {
        aof.state = AOF_WAIT_REWRITE; /* records go to the diff until the file exists */
        aof.seldb = -1;
        aof.last_ms = 0;
        if (aof.child > 0) { /* a snapshot without diff is running: the next one makes it */
            aof.scheduled = 1;
            return 0;
        }
        return aof_rewrite_background(err, errlen) < 0 ? -1 : 0;
    }
    if (!srv.cfg.appendonly && aof.state != AOF_OFF) {
        aof_flush();
        if (aof.fd >= 0) {
            fdatasync(aof.fd);
            bio_submit(BIO_CLOSE, aof.fd);
        }
        aof.fd = -1;
        aof.state = AOF_OFF;
        buf_clear(&aof.buf);
        aof.child_for_aof = 0;
    }
    return 0;
}

void aof_shutdown(void)
{
    if (aof.child > 0) {
        kill(aof.child, SIGKILL);
        waitpid(aof.child, NULL, 0);
        unlink(aof.child_tmp);
        aof.child = -1;
    }
    aof_flush();
    if (aof.fd >= 0) {
        fdatasync(aof.fd);
        close(aof.fd);
        aof.fd = -1;
    }
    bio_stop();
    aof.state = AOF_OFF;
    buf_deinit(&aof.buf);
    buf_deinit(&aof.diff);
    buf_deinit(&aof.repl);
}

long long aof_last_save(void)
{
    return aof.last_save_s;
}

/* ---- loading ---- */

typedef struct loader {
    void (*events)(void); /* lets the loop run while loading (NULL: never) */
    long long start_s;    /* Unix seconds at the start (INFO loading_start_time) */
    long long start_ms;
    long long events_us; /* mono_us() of the last events() */
    int fd;
    buf_t in;
    long long base;     /* file offset of in.data[0] */
    long long good;     /* end of the last complete record outside a transaction */
    long long size;
    long long commands;
    long long next_log_ms;
    int in_tx;
    client_t *c;
    resp_parser_t p;
} loader_t;

static loader_t *loading_now; /* the load in progress, for INFO */

/* Lets the loop accept connections and answer them (-LOADING to most commands, see
 * command.c) at most every LOAD_EVENTS_US of loading. Called between whole commands only: the
 * loader's argv never points into a buffer that events() could change. */
static void load_yield(loader_t *l)
{
    uint64_t now;
    if (!l->events || (now = mono_us()) - (uint64_t)l->events_us < LOAD_EVENTS_US) return;
    l->events_us = (long long)now;
    l->events();
}

/* An annotation line at in[pos]: 1 consumed (*used), 0 needs more bytes. */
static int load_annotation(loader_t *l, size_t pos, size_t *used)
{
    const char *s = l->in.data + pos, *eol = memchr(s, '\n', l->in.len - pos);
    if (!eol) return 0;
    long long ms;
    if (!strncmp(s, "#MS:", 4) && str_to_ll(s + 4, (size_t)(eol - s - 4 - (eol[-1] == '\r')), &ms))
        db_now_ms = ms;
    *used = (size_t)(eol - s) + 1;
    return 1;
}

/* Set by aof_load_abort while a replayed command runs. */
static int load_aborted;

/* Replayed writes whose tier write failed and that the file has not undone yet: records of
 * (int dbid, uint32 klen, uint32 blen, key, blob, why NUL-terminated). */
static buf_t load_failed;
static size_t load_nfailed;

static size_t failed_find(int dbid, const char *key, size_t klen, const char *blob, size_t blen,
                          size_t *reclen)
{
    for (size_t off = 0; off < load_failed.len;) {
        const char *r = load_failed.data + off;
        int d;
        uint32_t kl, bl;
        memcpy(&d, r, 4);
        memcpy(&kl, r + 4, 4);
        memcpy(&bl, r + 8, 4);
        size_t len = 12 + kl + bl + strlen(r + 12 + kl + bl) + 1;
        if (d == dbid && kl == klen && bl == blen && !memcmp(r + 12, key, klen) &&
            !memcmp(r + 12 + kl, blob, blen)) {
            *reclen = len;
            return off;
        }
        off += len;
    }
    return SIZE_MAX;
}

void aof_load_write_failed(int dbid, const char *key, size_t klen, const char *blob,
                           size_t blen, const char *why)
{
    size_t len;
    if (!srv.loading || failed_find(dbid, key, klen, blob, blen, &len) != SIZE_MAX) return;
    uint32_t kl = (uint32_t)klen, bl = (uint32_t)blen;
    buf_append(&load_failed, &dbid, 4);
    buf_append(&load_failed, &kl, 4);
    buf_append(&load_failed, &bl, 4);
    buf_append(&load_failed, key, klen);
    buf_append(&load_failed, blob, blen);
    buf_append(&load_failed, why, strlen(why) + 1);
    load_nfailed++;
}

void aof_load_write_undone(int dbid, const char *key, size_t klen, const char *blob,
                           size_t blen)
{
    size_t len, off = srv.loading ? failed_find(dbid, key, klen, blob, blen, &len) : SIZE_MAX;
    if (off == SIZE_MAX) return;
    memmove(load_failed.data + off, load_failed.data + off + len, load_failed.len - off - len);
    load_failed.len -= len;
    load_nfailed--;
}

/* At the end of a load: the failed writes the file never undid were acknowledged. Returns 0,
 * or -1 after naming them. */
static int check_failed_writes(void)
{
    int rc = load_nfailed ? -1 : 0;
    size_t shown = 0;
    for (size_t off = 0; off < load_failed.len && shown < 10; shown++) {
        const char *r = load_failed.data + off;
        int d;
        uint32_t kl, bl;
        memcpy(&d, r, 4);
        memcpy(&kl, r + 4, 4);
        memcpy(&bl, r + 8, 4);
        const char *why = r + 12 + kl + bl;
        log_warning("Can't load the append only file: the write of blob '%.*s' of tag '%.*s' "
                    "(db %d) failed on its tier (%s); it was acknowledged, so the start stops.",
                    (int)(bl > 200 ? 200 : bl), r + 12 + kl, (int)(kl > 200 ? 200 : kl), r + 12,
                    d, why);
        off += 12 + kl + bl + strlen(why) + 1;
    }
    if (load_nfailed > shown)
        log_warning("... and %zu more blobs whose writes failed", load_nfailed - shown);
    buf_deinit(&load_failed);
    load_nfailed = 0;
    return rc;
}

void aof_load_abort(void)
{
    if (srv.loading) load_aborted = 1;
}

/* Runs one parsed command. Returns 0, or -1 for a command the server does not know or one
 * that could not be replayed in full (aof_load_abort). */
static int load_command(loader_t *l, long long off)
{
    client_t *c = l->c;
    c->argc = l->p.argc;
    c->argv = l->p.argv;
    if (!command_lookup(&c->argv[0])) {
        log_warning("Unknown command '%.*s' reading the append only file %s at offset %lld",
                    (int)(c->argv[0].len > 64 ? 64 : c->argv[0].len), c->argv[0].ptr,
                    aof_path(), off);
        return -1;
    }
    int multi = c->argv[0].len == 5 && !strncasecmp(c->argv[0].ptr, "multi", 5);
    int exec = c->argv[0].len == 4 && !strncasecmp(c->argv[0].ptr, "exec", 4);
    load_aborted = 0;
    command_dispatch(c);
    c->argc = 0;
    c->argv = NULL;
    if (load_aborted) {
        load_aborted = 0;
        log_warning("Stopped loading the append only file %s at offset %lld", aof_path(), off);
        return -1;
    }
    if (multi) l->in_tx = 1;
    if (exec) l->in_tx = 0;
    l->commands++;
    return 0;
}

/* Parses and runs what l->in holds. Returns 0 (rest needs more bytes) or -1 (corrupt). */
static int load_buffered(loader_t *l)
{
    size_t pos = 0;
    int rc = 0;
    while (pos < l->in.len) {
        size_t used = 0;
        if (l->in.data[pos] == '#') {
            if (!load_annotation(l, pos, &used)) break;
            pos += used;
            if (!l->in_tx) l->good = l->base + (long long)pos;
            continue;
        }
        int r = resp_parse(&l->p, l->in.data + pos, l->in.len - pos, &used);
        if (r == RESP_AGAIN) break;
        if (r == RESP_ERROR) {
            log_warning("Bad file format reading the append only file %s at offset %lld: %s. "
                        "Fix it by hand (the data after that offset was not loaded), or cut it "
                        "there to start without it.",
                        aof_path(), l->base + (long long)pos, l->p.error);
            rc = -1;
            break;
        }
        if (r == RESP_OK && load_command(l, l->base + (long long)pos) < 0) {
            rc = -1;
            break;
        }
        pos += used;
        if (!l->in_tx) l->good = l->base + (long long)pos;
        if (r == RESP_OK && l->commands % 1024 == 0) load_yield(l);
    }
    buf_consume(&l->in, pos);
    l->base += (long long)pos;
    return rc;
}

static void load_progress(loader_t *l)
{
    long long now = time_ms();
    if (now < l->next_log_ms) return;
    l->next_log_ms = now + 1000;
    log_notice("Loading the append only file: %lld of %lld bytes (%.0f%%), %lld commands",
               l->base, l->size, l->size ? 100.0 * (double)l->base / (double)l->size : 100.0,
               l->commands);
}

/* End of file inside a record or a transaction: cut it off (aof-load-truncated) or fail. */
static int load_truncated(loader_t *l)
{
    long long cut = l->size - l->good;
    if (!srv.cfg.aof_load_truncated) {
        log_warning("The append only file %s ends in the middle of a command at offset %lld "
                    "(%lld bytes). Set aof-load-truncated yes to start without them, or "
                    "truncate the file at that offset.",
                    aof_path(), l->good, cut);
        return -1;
    }
    log_warning("!!! Warning: the append only file %s is truncated: the last %lld bytes (from "
                "offset %lld) hold an incomplete command and are cut off. The server starts "
                "with the data before them.",
                aof_path(), cut, l->good);
    if (l->in_tx) multi_reset(l->c); /* the open transaction's commands never ran */
    if (truncate(aof_path(), l->good) < 0) {
        log_warning("Can't truncate the append only file: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* Replays path into the keyspace, calling events (if not NULL) now and then (load_yield).
 * Returns 0 (also when there is no file), -1 (logged), or AOF_LOAD_STOPPED when events let a
 * shutdown in (srv.shutdown_asap). */
static int load_file(const char *path, void (*events)(void))
{
    loader_t l = {.fd = open(path, O_RDONLY | O_CLOEXEC), .events = events};
    if (l.fd < 0) {
        if (errno == ENOENT) return 0;
        log_warning("Can't open the append only file %s: %s", path, strerror(errno));
        return -1;
    }
    l.size = file_size(l.fd);
    if (l.size == 0) {
        close(l.fd);
        return 0;
    }
    long long t0 = time_ms();
    l.start_ms = t0;
    l.start_s = t0 / 1000;
    l.events_us = (long long)mono_us();
    buf_init(&l.in);
    resp_parser_init(&l.p);
    l.p.max_bulk = (size_t)1 << 40; /* records are ours: TPUT data may exceed the wire limit */
    l.c = client_new(NULL, NULL, -1);
    l.c->flags |= CLIENT_FAKE | CLIENT_AUTHENTICATED;
    srv.loading = 1;
    loading_now = &l;
    int rc = 0;
    for (;;) {
        size_t want = LOAD_CHUNK, need = resp_parser_need(&l.p);
        if (need > l.in.len && need - l.in.len > want) want = need - l.in.len;
        buf_reserve(&l.in, want);
        ssize_t n = read(l.fd, l.in.data + l.in.len, want);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) {
            log_warning("Error reading the append only file: %s", strerror(errno));
            rc = -1;
            break;
        }
        if (n == 0) break;
        l.in.len += (size_t)n;
        if ((rc = load_buffered(&l)) < 0) break;
        load_progress(&l);
        load_yield(&l);
        if (events && srv.shutdown_asap) { /* SIGTERM or SHUTDOWN while loading */
            rc = AOF_LOAD_STOPPED;
            break;
        }
    }
    if (rc == 0 && (l.in.len > 0 || l.in_tx)) rc = load_truncated(&l);
    if (check_failed_writes() < 0) rc = -1;
    srv.loading = 0;
    loading_now = NULL;
    db_now_ms = 0;
    client_free(l.c);
    resp_parser_deinit(&l.p);
    buf_deinit(&l.in);
    close(l.fd);
    if (rc == 0)
        log_notice("DB loaded from append only file: %.3f seconds, %lld commands",
                   (double)(time_ms() - t0) / 1000.0, l.commands);
    if (rc == AOF_LOAD_STOPPED)
        log_warning("Loading of the append only file stopped for the shutdown after %lld of "
                    "%lld bytes (the file is left as it was)",
                    l.base, l.size);
    return rc;
}

int aof_load(void (*events)(void))
{
    remove_temp_files();
    return load_file(aof_path(), events);
}

int aof_reload(char *err, size_t errlen)
{
    if (srv.loading) { /* a client of the loop that the load lets run (load_yield) */
        snprintf(err, errlen, "LOADING Redis is loading the dataset in memory");
        return -1;
    }
    if (aof_rewrite_now(err, errlen) < 0) return -1;
    for (int i = 0; i < srv.ndb; i++) {
        multi_touch_db(&srv.db[i], NULL);
        db_flush(&srv.db[i]);
    }
    if (load_file(aof_path(), NULL) < 0) {
        snprintf(err, errlen, "ERR Error trying to load the append only file");
        return -1;
    }
    return 0;
}

/* ---- INFO and commands ---- */

/* Seconds until the next automatic rewrite may start after failures (0: no wait). */
static long long retry_in_s(void)
{
    long long left = aof.retry_after_ms - time_ms();
    return aof.failures && left > 0 ? (left + 999) / 1000 : 0;
}

/* INFO's loading_* fields, as Redis shows them while it loads (not loading_rdb_used_mem:
 * there is no RDB). */
static void loading_info(buf_t *b, const loader_t *l)
{
    long long done = l->base, total = l->size, elapsed = time_ms() - l->start_ms;
    double perc = total ? 100.0 * (double)done / (double)total : 100.0;
    long long eta =
        done ? (long long)((double)elapsed / 1000.0 * (double)(total - done) / (double)done) : 1;
    buf_printf(b,
               "loading_start_time:%lld\r\nloading_total_bytes:%lld\r\n"
               "loading_loaded_bytes:%lld\r\nloading_loaded_perc:%.2f\r\n"
               "loading_eta_seconds:%lld\r\n",
               l->start_s, total, done, perc, eta);
}

void aof_info(buf_t *b)
{
    int busy = aof.child > 0 || aof.fork_pending;
    buf_printf(b, "# Persistence\r\nloading:%d\r\nasync_loading:0\r\n", srv.loading);
    buf_printf(b,
               "rdb_changes_since_last_save:%lld\r\nrdb_bgsave_in_progress:%d\r\n"
               "rdb_last_save_time:%lld\r\nrdb_last_bgsave_status:%s\r\n"
               "aof_enabled:%d\r\naof_rewrite_in_progress:%d\r\naof_rewrite_scheduled:%d\r\n"
               "aof_last_rewrite_time_sec:%lld\r\naof_current_rewrite_time_sec:%lld\r\n"
               "aof_last_bgrewrite_status:%s\r\naof_rewrites:%llu\r\n"
               "aof_rewrites_consecutive_failures:%d\r\naof_rewrite_retry_in_sec:%lld\r\n"
               "aof_last_bgrewrite_error:%s\r\naof_last_write_status:%s\r\n",
               srv.dirty, busy, aof.last_save_s, aof.last_rewrite_ok ? "ok" : "err",
               aof.state != AOF_OFF, busy, aof.scheduled, aof.last_rewrite_s,
               aof.child > 0 ? (time_ms() - aof.rewrite_start_ms) / 1000 : -1LL,
               aof.last_rewrite_ok ? "ok" : "err", (unsigned long long)aof.rewrites,
               aof.failures, retry_in_s(), aof.last_error, aof.write_errno ? "err" : "ok");
    if (aof.state != AOF_OFF)
        buf_printf(b,
                   "aof_current_size:%lld\r\naof_base_size:%lld\r\naof_pending_rewrite:%d\r\n"
                   "aof_buffer_length:%zu\r\naof_pending_bio_fsync:%d\r\n",
                   aof.current_size, aof.base_size, aof.scheduled, aof.buf.len,
                   (int)bio_fsyncs_pending);
    if (loading_now) loading_info(b, loading_now); /* last, as in Redis */
    buf_printf(b, "\r\n");
}

static void bgrewriteaof_cmd(client_t *c)
{
    char err[256];
    if (aof.child > 0 || aof.fork_pending) {
        reply_error(c, "ERR Background append only file rewriting already in progress");
        return;
    }
    if (aof_rewrite_background(err, sizeof(err)) < 0) reply_error(c, err);
    else reply_simple(c, "Background append only file rewriting started");
}

static void bgsave_cmd(client_t *c)
{
    char err[256];
    int schedule = c->argc == 2 && c->argv[1].len == 8 && !strncasecmp(c->argv[1].ptr, "schedule", 8);
    if (c->argc > 2 || (c->argc == 2 && !schedule)) {
        reply_syntax_error(c);
        return;
    }
    if (aof.child > 0 || aof.fork_pending) {
        if (!schedule) {
            reply_error(c, "ERR Background save already in progress");
            return;
        }
        aof.scheduled = 1;
        reply_simple(c, "Background saving scheduled");
        return;
    }
    if (aof_rewrite_background(err, sizeof(err)) < 0) reply_error(c, err);
    else reply_simple(c, "Background saving started");
}

static void save_cmd(client_t *c)
{
    char err[256];
    if (aof_rewrite_now(err, sizeof(err)) < 0) reply_error(c, err);
    else reply_ok(c);
}

static void lastsave_cmd(client_t *c)
{
    reply_int(c, aof_last_save());
}

command_t cmds_aof[] = {
    {"bgrewriteaof", bgrewriteaof_cmd, 1, CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING, 0, 0, 0,
     "server", "1.0.0", "Asynchronously rewrites the append-only file to disk.", "O(1)"},
    {"bgsave", bgsave_cmd, -1, CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_ASYNC_LOADING, 0, 0, 0, "server",
     "1.0.0", "Asynchronously saves the database(s) to disk (here: rewrites the append-only file).",
     "O(1)"},
    {"save", save_cmd, 1, CMD_ADMIN | CMD_NOSCRIPT | CMD_NO_MULTI | CMD_NO_ASYNC_LOADING, 0, 0, 0,
     "server", "1.0.0",
     "Synchronously saves the database(s) to disk (here: rewrites the append-only file).",
     "O(N) where N is the total number of keys in all databases"},
    {"lastsave", lastsave_cmd, 1, CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "server", "1.0.0",
     "Returns the Unix timestamp of the last successful save to disk.", "O(1)"},
    {NULL},
};
