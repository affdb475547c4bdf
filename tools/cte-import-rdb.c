/* cte-import-rdb - streams a Redis RDB file into a running server as pipelined RESTOREs.
 *
 *   cte-import-rdb [-h host] [-p port] [-s unixsocket] [-a password] [--user name]
 *                  [--pipeline N] [--no-replace] [-q] FILE
 *
 * The second path of "import from Redis" beside `cte-server --import-rdb FILE` (which loads
 * before serving): this one fills a server that is already running, and works against any
 * server that speaks RESTORE (a redis-server too). Each key's value bytes are taken from the
 * file as they are and wrapped as a DUMP payload (type, value, the file's RDB version, CRC-64),
 * so the server decodes them with the same code RESTORE uses; the file is only walked here
 * (common/rdb_walk.h), never decoded. SELECT follows the file's databases, expiry times go as
 * RESTORE ... ABSTTL (keys already expired are left out and counted), LRU idle times and LFU
 * counters as IDLETIME and FREQ, function libraries as FUNCTION LOAD REPLACE. Existing keys are
 * replaced unless --no-replace.
 *
 * Nothing is dropped silently: every key the server refuses (a module value, BUSYKEY with
 * --no-replace) is printed with its name and the error,
 * and the exit status is 1 when any was. A file that is not an RDB, a bad checksum (checked
 * before anything is sent) or a record that cannot be walked stops with status 2. A progress
 * line on stderr shows bytes and keys once a second. */
#include "common/crc64.h"
#include "common/rdb_walk.h"

#include <hiredis/hiredis.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

typedef struct opts {
    const char *host, *sock, *pass, *user, *file;
    int port, pipeline, replace, quiet;
} opts_t;

/* One command sent and not yet answered: what to name in a report. */
typedef struct pending {
    char *key; /* NULL: not a key (SELECT, FUNCTION LOAD) */
    size_t klen;
    int db;
} pending_t;

typedef struct importer {
    opts_t o;
    redisContext *rc;
    const unsigned char *base;
    size_t size;
    rdb_reader_t r;
    int version, db, sent_db;
    long long expire, idle, freq, now;
    pending_t *q;
    int nq;
    unsigned char *pay;
    size_t paycap;
    unsigned long long keys, expired, failed, functions, not_sent;
    long long next_progress;
    int on_progress_line; /* the cursor is at the end of a progress line */
} importer_t;

static long long now_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (long long)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

static void usage(void)
{
    fprintf(stderr, "usage: cte-import-rdb [-h host] [-p port] [-s unixsocket] [-a password] "
                    "[--user name] [--pipeline N] [--no-replace] [-q] FILE\n");
    exit(2);
}

static void parse_args(int argc, char **argv, opts_t *o)
{
    *o = (opts_t){.host = "127.0.0.1", .port = 6379, .pipeline = 512, .replace = 1};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "-h") && more)
            o->host = argv[++i];
        else if (!strcmp(a, "-p") && more)
            o->port = atoi(argv[++i]);
        else if (!strcmp(a, "-s") && more)
            o->sock = argv[++i];
        else if (!strcmp(a, "-a") && more)
            o->pass = argv[++i];
        else if (!strcmp(a, "--user") && more)
            o->user = argv[++i];
        else if (!strcmp(a, "--pipeline") && more)
            o->pipeline = atoi(argv[++i]);
        else if (!strcmp(a, "--no-replace"))
            o->replace = 0;
        else if (!strcmp(a, "-q"))
            o->quiet = 1;
        else if (a[0] == '-' || o->file)
            usage();
        else
            o->file = a;
    }
    if (!o->file || o->pipeline < 1) usage();
}

/* A key name for messages: printable bytes as they are, others as \xNN. */
static void print_key(FILE *f, const char *k, size_t len)
{
    for (size_t i = 0; i < len && i < 200; i++) {
        unsigned char ch = (unsigned char)k[i];
        if (ch >= 32 && ch < 127 && ch != '\\' && ch != '\'')
            fputc(ch, f);
        else
            fprintf(f, "\\x%02x", ch);
    }
    if (len > 200) fputs("...", f);
}

/* Ends a progress line before a message of its own. */
static void end_progress(importer_t *im)
{
    if (im->on_progress_line) fputc('\n', stderr);
    im->on_progress_line = 0;
}

static void die(importer_t *im, const char *what)
{
    end_progress(im);
    fprintf(stderr, "cte-import-rdb: %s: %s at byte %zu\n", im->o.file, what,
            (size_t)(im->r.p - im->base));
    exit(2);
}

/* Reads the answers to everything pending; reports the errors by key. */
static void drain(importer_t *im)
{
    for (int i = 0; i < im->nq; i++) {
        redisReply *rep = NULL;
        if (redisGetReply(im->rc, (void **)&rep) != REDIS_OK) {
            end_progress(im);
            fprintf(stderr, "cte-import-rdb: connection lost: %s\n", im->rc->errstr);
            exit(2);
        }
        pending_t *p = &im->q[i];
        if (rep->type == REDIS_REPLY_ERROR) {
            end_progress(im);
            if (p->key) {
                fprintf(stderr, "key '");
                print_key(stderr, p->key, p->klen);
                fprintf(stderr, "' (db %d) not imported: %s\n", p->db, rep->str);
            } else {
                fprintf(stderr, "%s\n", rep->str);
            }
            im->failed++;
        } else if (p->key) {
            im->keys++;
        } else if (p->db < 0) {
            im->functions++;
        }
        freeReplyObject(rep);
        free(p->key);
    }
    im->nq = 0;
}

static void send_argv(importer_t *im, int argc, const char **argv, const size_t *lens,
                      const char *key, size_t klen, int db)
{
    if (redisAppendCommandArgv(im->rc, argc, argv, lens) != REDIS_OK) {
        fprintf(stderr, "cte-import-rdb: %s\n", im->rc->errstr);
        exit(2);
    }
    pending_t *p = &im->q[im->nq++];
    p->key = NULL;
    p->klen = klen;
    p->db = db;
    if (key) {
        p->key = malloc(klen ? klen : 1);
        if (!p->key) exit(2);
        memcpy(p->key, key, klen);
    }
    if (im->nq == im->o.pipeline) drain(im);
}

static void select_db(importer_t *im)
{
    if (im->db == im->sent_db) return;
    char n[16];
    const char *argv[2] = {"SELECT", n};
    size_t lens[2] = {6, (size_t)snprintf(n, sizeof n, "%d", im->db)};
    send_argv(im, 2, argv, lens, NULL, 0, 0);
    im->sent_db = im->db;
}

/* Wraps the value bytes v[0..len) of type type as a DUMP payload in im->pay. */
static size_t wrap_payload(importer_t *im, int type, const unsigned char *v, size_t len)
{
    size_t need = len + 11;
    if (need > im->paycap) {
        im->paycap = need * 2;
        im->pay = realloc(im->pay, im->paycap);
        if (!im->pay) exit(2);
    }
    im->pay[0] = (unsigned char)type;
    memcpy(im->pay + 1, v, len);
    im->pay[1 + len] = (unsigned char)(im->version & 0xff);
    im->pay[2 + len] = (unsigned char)(im->version >> 8);
    uint64_t crc = crc64(0, im->pay, len + 3);
    for (int i = 0; i < 8; i++) im->pay[3 + len + i] = (unsigned char)(crc >> (8 * i));
    return need;
}

static void import_key(importer_t *im, int type)
{
    rdbw_str_t k;
    if (rdbw_string(&im->r, &k) != RDB_OK) die(im, "a key name is corrupt");
    const unsigned char *v = im->r.p;
    if (type == RDB_TYPE_MODULE || rdbw_skip_value(&im->r, type) != RDB_OK)
        die(im, type == RDB_TYPE_MODULE ? "a module value of the pre-4.0 format cannot be walked"
                                        : "a value cannot be walked");
    if (im->expire >= 0 && im->expire <= im->now) {
        im->expired++;
    } else {
        size_t plen = wrap_payload(im, type, v, (size_t)(im->r.p - v));
        char ttl[24], extra[24];
        const char *argv[8] = {"RESTORE", k.p, ttl, (const char *)im->pay};
        size_t lens[8] = {7, k.len, 0, plen};
        int argc = 4;
        lens[2] = (size_t)snprintf(ttl, sizeof ttl, "%lld", im->expire >= 0 ? im->expire : 0);
        if (im->o.replace) argv[argc] = "REPLACE", lens[argc++] = 7;
        if (im->expire >= 0) argv[argc] = "ABSTTL", lens[argc++] = 6;
        if (im->freq >= 0 || im->idle >= 0) {
            int f = im->freq >= 0;
            argv[argc] = f ? "FREQ" : "IDLETIME";
            lens[argc++] = f ? 4 : 8;
            argv[argc] = extra;
            lens[argc++] = (size_t)snprintf(extra, sizeof extra, "%lld", f ? im->freq : im->idle);
        }
        select_db(im);
        send_argv(im, argc, argv, lens, k.p, k.len, im->db);
    }
    rdbw_str_release(&k);
    im->expire = im->idle = im->freq = -1;
}

static void import_function(importer_t *im)
{
    rdbw_str_t code;
    if (rdbw_string(&im->r, &code) != RDB_OK) die(im, "a function library is corrupt");
    const char *argv[4] = {"FUNCTION", "LOAD", "REPLACE", code.p};
    size_t lens[4] = {8, 4, 7, code.len};
    send_argv(im, 4, argv, lens, NULL, 0, -1);
    rdbw_str_release(&code);
}

static void progress(importer_t *im, int last)
{
    long long t = now_ms();
    if (im->o.quiet || (!last && t < im->next_progress)) return;
    im->next_progress = t + 1000;
    size_t done = (size_t)(im->r.p - im->base);
    fprintf(stderr, "\r%zu of %zu bytes (%.0f%%), %llu keys sent%s", done, im->size,
            100.0 * (double)done / (double)im->size, im->keys + (unsigned long long)im->nq,
            last ? "\n" : "");
    im->on_progress_line = !last;
}

static int le8(importer_t *im, long long *v, int n)
{
    if (rdbw_left(&im->r) < (size_t)n) return -1;
    *v = (long long)rdbw_load_le(im->r.p, n);
    im->r.p += n;
    return 0;
}

/* Walks the records up to EOF. */
static void walk(importer_t *im)
{
    for (;;) {
        uint64_t a, b;
        long long t;
        if (rdbw_left(&im->r) < 1) die(im, "the file ends before its EOF marker");
        int op = *im->r.p++;
        switch (op) {
        case RDB_OP_EOF:
            return;
        case RDB_OP_SELECTDB:
            if (rdbw_len(&im->r, &a) != RDB_OK || a > 1u << 20) die(im, "a SELECTDB is corrupt");
            im->db = (int)a;
            break;
        case RDB_OP_RESIZEDB:
            if (rdbw_len(&im->r, &a) != RDB_OK || rdbw_len(&im->r, &b) != RDB_OK)
                die(im, "a RESIZEDB is corrupt");
            break;
        case RDB_OP_EXPIRETIME_MS:
            if (le8(im, &t, 8) < 0) die(im, "an expire time is cut off");
            im->expire = t;
            break;
        case RDB_OP_EXPIRETIME:
            if (le8(im, &t, 4) < 0) die(im, "an expire time is cut off");
            im->expire = (long long)(int32_t)t * 1000;
            break;
        case RDB_OP_IDLE:
            if (rdbw_len(&im->r, &a) != RDB_OK) die(im, "an idle time is corrupt");
            im->idle = (long long)(a > (1u << 24) ? 1u << 24 : a);
            break;
        case RDB_OP_FREQ:
            if (rdbw_left(&im->r) < 1) die(im, "a frequency is cut off");
            im->freq = *im->r.p++;
            break;
        case RDB_OP_AUX:
            if (rdbw_skip_string(&im->r) != RDB_OK || rdbw_skip_string(&im->r) != RDB_OK)
                die(im, "an aux field is corrupt");
            break;
        case RDB_OP_MODULE_AUX:
            if (rdbw_skip_module_aux(&im->r) != RDB_OK) die(im, "module aux data is corrupt");
            end_progress(im);
            fprintf(stderr, "module aux data not imported (modules are not supported)\n");
            im->not_sent++;
            break;
        case RDB_OP_FUNCTION2:
            import_function(im);
            break;
        case RDB_OP_FUNCTION:
            die(im, "function records of a 7.0 release candidate");
            break;
        default:
            if (!rdbw_is_value_type(op)) die(im, "an unknown record type");
            import_key(im, op);
        }
        progress(im, 0);
    }
}

static void map_file(importer_t *im)
{
    int fd = open(im->o.file, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0 || sb.st_size < 9) {
        fprintf(stderr, "cte-import-rdb: can't read %s: %s\n", im->o.file,
                fd < 0 ? strerror(errno) : "too short");
        exit(2);
    }
    im->size = (size_t)sb.st_size;
    void *m = mmap(NULL, im->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        fprintf(stderr, "cte-import-rdb: can't map %s: %s\n", im->o.file, strerror(errno));
        exit(2);
    }
    im->base = m;
    im->r.p = im->base;
    im->r.end = im->base + im->size;
    if (memcmp(im->base, "REDIS", 5) != 0) die(im, "not an RDB file (no REDIS signature)");
    im->version = atoi((const char *)im->base + 5) % 10000;
    if (im->version < 1 || im->version > RDB_VERSION) die(im, "an RDB version not supported");
    im->r.version = im->version;
    if (im->version >= 5) { /* the CRC-64 of everything before it, 0 when not computed */
        uint64_t want = rdbw_load_le(im->base + im->size - 8, 8);
        if (want && crc64(0, im->base, im->size - 8) != want) die(im, "wrong checksum");
    }
    im->r.p = im->base + 9;
}

static void connect_server(importer_t *im)
{
    im->rc = im->o.sock ? redisConnectUnix(im->o.sock) : redisConnect(im->o.host, im->o.port);
    if (!im->rc || im->rc->err) {
        fprintf(stderr, "cte-import-rdb: can't connect: %s\n",
                im->rc ? im->rc->errstr : "out of memory");
        exit(2);
    }
    if (!im->o.pass) return;
    redisReply *rep = im->o.user ? redisCommand(im->rc, "AUTH %s %s", im->o.user, im->o.pass)
                                 : redisCommand(im->rc, "AUTH %s", im->o.pass);
    if (!rep || rep->type == REDIS_REPLY_ERROR) {
        fprintf(stderr, "cte-import-rdb: AUTH failed: %s\n", rep ? rep->str : im->rc->errstr);
        exit(2);
    }
    freeReplyObject(rep);
}

int main(int argc, char **argv)
{
    importer_t im = {.expire = -1, .idle = -1, .freq = -1};
    parse_args(argc, argv, &im.o);
    im.q = calloc((size_t)im.o.pipeline, sizeof *im.q);
    if (!im.q) return 2;
    map_file(&im);
    connect_server(&im);
    im.now = now_ms();
    long long t0 = im.now;
    walk(&im);
    drain(&im);
    progress(&im, 1);
    fprintf(stderr,
            "%s: %llu keys and %llu function libraries imported in %.3f s; %llu keys already "
            "expired left out; %llu not imported (named above)\n",
            im.o.file, im.keys, im.functions, (double)(now_ms() - t0) / 1000.0, im.expired,
            im.failed + im.not_sent);
    redisFree(im.rc);
    free(im.q);
    free(im.pay);
    return im.failed || im.not_sent ? 1 : 0;
}
