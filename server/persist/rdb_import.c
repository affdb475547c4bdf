/* rdb_import.c - a Redis RDB file into the keyspace (see rdb_import.h).
 *
 * File layout (RDB 10):
 *
 *   "REDIS" + 4 ASCII digits (version)
 *   records, each an opcode byte or a value type byte:
 *     0xFA AUX        key string, value string
 *     0xFB RESIZEDB   keys length, expires length
 *     0xFE SELECTDB   db length
 *     0xFC EXPIRETIME_MS  8 bytes LE (applies to the next key)
 *     0xFD EXPIRETIME     4 bytes LE, seconds
 *     0xF8 IDLE       length (seconds)      0xF9 FREQ  1 byte (LFU counter)
 *     0xF7 MODULE_AUX module id, when opcode, when, annotated data
 *     0xF5 FUNCTION2  library code string   0xF6 FUNCTION  (7.0 release candidates)
 *     type byte       key string, value (rdb_load.c)
 *     0xFF EOF        then (version >= 5) 8-byte CRC-64 LE of every byte before it, 0 = none
 *
 * The file is mapped and read in place; the CRC is computed over the part read so far as the
 * reading goes, a slice at a time. */
#include "server/persist/rdb_import.h"

#include "common/alloc.h"
#include "common/buf.h"
#include "common/crc64.h"
#include "common/log.h"
#include "common/util.h"
#include "server/command.h"
#include "server/persist/rdb.h"
#include "server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LRU_CLOCK_MAX ((1u << 24) - 1)

typedef struct importer {
    const char *path;
    const unsigned char *base;
    size_t size;
    rdb_reader_t r;
    int db;
    long long expire; /* for the next key, -1 none */
    long long idle, freq;
    long long now;
    long long next_log_ms, next_events_us;
    void (*events)(void);
    rdb_import_stats_t st;
    uint64_t crc;
    const unsigned char *crc_upto; /* bytes before this are in crc */
} importer_t;

/* A key name for the log: printable bytes as they are, others as \xNN, cut at 120. */
static void key_for_log(buf_t *b, const char *k, size_t len)
{
    for (size_t i = 0; i < len && i < 120; i++) {
        unsigned char ch = (unsigned char)k[i];
        if (ch >= 32 && ch < 127 && ch != '\\' && ch != '\'')
            buf_push(b, (char)ch);
        else
            buf_printf(b, "\\x%02x", ch);
    }
    if (len > 120) buf_append_str(b, "...");
}

static void report_key(importer_t *im, const char *k, size_t len, const char *why)
{
    buf_t b;
    buf_init(&b);
    key_for_log(&b, k, len);
    log_warning("Could not import key '%s' (db %d) from %s: %s", b.data, im->db, im->path, why);
    buf_deinit(&b);
    im->st.skipped++;
}

/* Runs the events now and then and logs the progress line; -1 when a shutdown arrived
 * meanwhile (SIGTERM, SHUTDOWN): the import stops there. */
static int progress(importer_t *im)
{
    if (im->events && (long long)mono_us() >= im->next_events_us) {
        im->events();
        im->next_events_us = (long long)mono_us() + 10000;
        if (srv.shutdown_asap) return -1;
    }
    long long now = time_ms();
    if (now < im->next_log_ms) return 0;
    im->next_log_ms = now + 1000;
    size_t done = (size_t)(im->r.p - im->base);
    log_notice("Importing %s: %zu of %zu bytes (%.0f%%), %llu keys", im->path, done, im->size,
               im->size ? 100.0 * (double)done / (double)im->size : 100.0,
               (unsigned long long)im->st.keys);
    return 0;
}

/* Adds bytes up to the reader's position to the running CRC. */
static void crc_catch_up(importer_t *im)
{
    im->crc = crc64(im->crc, im->crc_upto, (size_t)(im->r.p - im->crc_upto));
    im->crc_upto = im->r.p;
}

static int fail(importer_t *im, const char *what)
{
    log_warning("Importing %s stopped at byte %zu: %s", im->path, (size_t)(im->r.p - im->base),
                what);
    return -1;
}

/* RDB_OPCODE_IDLE / FREQ: as RESTORE's IDLETIME and FREQ (objectSetLRUOrLFU). */
static void set_access(importer_t *im, obj_t *o)
{
    if (storage_params.lfu && im->freq >= 0) {
        o->lru = ((uint32_t)((im->now / 60000) & 0xffff) << 8) | (uint32_t)im->freq;
    } else if (!storage_params.lfu && im->idle >= 0) {
        long long abs = (long long)(storage_lru_clock & LRU_CLOCK_MAX) - im->idle;
        if (abs < 0) abs += LRU_CLOCK_MAX;
        o->lru = (uint32_t)abs & LRU_CLOCK_MAX;
    }
}

static void store_key(importer_t *im, const char *key, size_t klen, obj_t *val)
{
    db_t *db = &srv.db[im->db];
    kv_t *old = db_find(db, key, klen);
    if (old) {
        db_delete_kv(db, old);
        im->st.replaced++;
    }
    set_access(im, val);
    kv_t *kv = db_add(db, key, klen, val);
    if (im->expire >= 0) db_set_expire(db, kv, im->expire);
    im->st.keys++;
}

/* One key: its name, then its value of type type. */
static int import_key(importer_t *im, int type)
{
    size_t klen;
    int err;
    char *key = rdb_read_string_alloc(&im->r, &klen, &err);
    if (!key) return fail(im, "a key name is corrupt");
    obj_t *val = NULL;
    int rc = rdb_read_value(&im->r, type, &val);
    if (rc == RDB_ERR_UNSUPPORTED) {
        rc = rdbw_skip_value(&im->r, type);
        if (rc == RDB_OK) report_key(im, key, klen, "a module value (modules are not supported)");
    } else if (rc == RDB_ERR_EMPTY) {
        report_key(im, key, klen, "an empty collection (Redis refuses those too)");
        rc = RDB_OK;
    } else if (rc == RDB_OK && im->expire >= 0 && im->expire <= im->now) {
        obj_free(val);
        im->st.expired++;
    } else if (rc == RDB_OK) {
        store_key(im, key, klen, val);
    }
    xfree(key);
    im->expire = im->idle = im->freq = -1;
    if (rc == RDB_ERR_NOMEM) return fail(im, "out of memory for a value");
    if (rc != RDB_OK) return fail(im, "a value is corrupt");
    return 0;
}

/* A function library: FUNCTION LOAD REPLACE through a fake client, as the AOF loader runs its
 * commands; a library our engine refuses is reported. */
static void import_function(importer_t *im, const char *code, size_t len)
{
    client_t *c = client_new(NULL, NULL, -1);
    c->flags |= CLIENT_FAKE | CLIENT_AUTHENTICATED;
    resp_arg_t argv[4] = {{"FUNCTION", 8}, {"LOAD", 4}, {"REPLACE", 7}, {code, len}};
    c->argc = 4;
    c->argv = argv;
    uint64_t errors = srv.stat.total_error_replies;
    command_dispatch(c);
    c->argc = 0;
    c->argv = NULL;
    client_free(c);
    if (srv.stat.total_error_replies == errors) {
        im->st.functions++;
        return;
    }
    size_t n = 0;
    while (n < len && n < 80 && code[n] != '\n') n++;
    log_warning("Could not import a function library from %s (its first line: %.*s)", im->path,
                (int)n, code);
    im->st.skipped++;
}

static int read_u8(importer_t *im, unsigned *v)
{
    if (im->r.p >= im->r.end) return -1;
    *v = *im->r.p++;
    return 0;
}

static int read_le(importer_t *im, int n, long long *v)
{
    if (im->r.end - im->r.p < n) return -1;
    uint64_t u = 0;
    for (int i = n - 1; i >= 0; i--) u = (u << 8) | im->r.p[i];
    im->r.p += n;
    *v = (long long)u;
    return 0;
}

/* AUX fields are logged (redis-ver, ctime...), as Redis logs them. */
static int import_aux(importer_t *im)
{
    size_t klen, vlen;
    int err;
    char *k = rdb_read_string_alloc(&im->r, &klen, &err), *v = NULL;
    if (k) v = rdb_read_string_alloc(&im->r, &vlen, &err);
    if (!k || !v) {
        xfree(k);
        return fail(im, "an aux field is corrupt");
    }
    if (vlen < 200) log_verbose("RDB %s: %s", k, v);
    xfree(k);
    xfree(v);
    return 0;
}

/* The opcode records; returns 1 at EOF, 0 to go on, -1 on failure. */
static int import_record(importer_t *im)
{
    unsigned op;
    uint64_t a, b;
    long long t;
    if (read_u8(im, &op) < 0) return fail(im, "the file ends before its EOF marker");
    switch (op) {
    case RDB_OP_EOF:
        return 1;
    case RDB_OP_SELECTDB:
        if (rdbw_len(&im->r, &a) != RDB_OK) return fail(im, "a SELECTDB is corrupt");
        if (a >= (uint64_t)srv.ndb) return fail(im, "a key is in a database above databases-1");
        im->db = (int)a;
        return 0;
    case RDB_OP_RESIZEDB:
        if (rdbw_len(&im->r, &a) != RDB_OK || rdbw_len(&im->r, &b) != RDB_OK)
            return fail(im, "a RESIZEDB is corrupt");
        return 0;
    case RDB_OP_EXPIRETIME_MS:
        if (read_le(im, 8, &t) < 0) return fail(im, "an expire time is cut off");
        im->expire = t;
        return 0;
    case RDB_OP_EXPIRETIME:
        if (read_le(im, 4, &t) < 0) return fail(im, "an expire time is cut off");
        im->expire = (long long)(int32_t)t * 1000;
        return 0;
    case RDB_OP_IDLE:
        if (rdbw_len(&im->r, &a) != RDB_OK) return fail(im, "an idle time is corrupt");
        im->idle = a > LRU_CLOCK_MAX ? LRU_CLOCK_MAX : (long long)a;
        return 0;
    case RDB_OP_FREQ:
        if (read_u8(im, &op) < 0) return fail(im, "a frequency is cut off");
        im->freq = op;
        return 0;
    case RDB_OP_AUX:
        return import_aux(im);
    case RDB_OP_MODULE_AUX:
        if (rdbw_skip_module_aux(&im->r) != RDB_OK) return fail(im, "module aux data is corrupt");
        log_warning("Module aux data in %s is not imported (modules are not supported)", im->path);
        return 0;
    case RDB_OP_FUNCTION2: {
        size_t len;
        int err;
        char *code = rdb_read_string_alloc(&im->r, &len, &err);
        if (!code) return fail(im, "a function library is corrupt");
        import_function(im, code, len);
        xfree(code);
        return 0;
    }
    case RDB_OP_FUNCTION:
        return fail(im, "function records of a Redis 7.0 release candidate are not supported");
    case RDB_TYPE_MODULE:
        return fail(im, "a module value of the pre-4.0 format cannot be skipped");
    default:
        if (!rdbw_is_value_type((int)op)) return fail(im, "an unknown record type");
        return import_key(im, (int)op);
    }
}

static int check_trailer(importer_t *im)
{
    if (im->r.version < 5) return 0;
    crc_catch_up(im);
    long long want;
    if (read_le(im, 8, &want) < 0) return fail(im, "the checksum after EOF is cut off");
    if (want != 0 && (uint64_t)want != im->crc) return fail(im, "wrong checksum");
    return 0;
}

static int import_mapped(importer_t *im)
{
    if (im->size < 9 || memcmp(im->base, "REDIS", 5) != 0)
        return fail(im, "not an RDB file (no REDIS signature)");
    int v = 0;
    for (int i = 5; i < 9; i++) {
        if (im->base[i] < '0' || im->base[i] > '9') return fail(im, "a bad version number");
        v = v * 10 + (im->base[i] - '0');
    }
    if (v < 1 || v > RDB_VERSION) return fail(im, "an RDB version this server cannot read");
    im->st.version = im->r.version = v;
    im->r.p = im->base + 9;
    int rc;
    while ((rc = import_record(im)) == 0) {
        if ((size_t)(im->r.p - im->crc_upto) >= (4u << 20)) crc_catch_up(im);
        if (progress(im) < 0) {
            log_warning("Import of %s stopped for the shutdown", im->path);
            return RDB_IMPORT_STOPPED;
        }
    }
    return rc < 0 ? -1 : check_trailer(im);
}

int rdb_import_file(const char *path, void (*events)(void), rdb_import_stats_t *st)
{
    importer_t im = {.path = path, .expire = -1, .idle = -1, .freq = -1, .events = events};
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) < 0) {
        log_warning("Can't open the RDB file %s: %s", path, strerror(errno));
        if (fd >= 0) close(fd);
        return -1;
    }
    im.size = (size_t)sb.st_size;
    void *map = im.size ? mmap(NULL, im.size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
    close(fd);
    if (map == MAP_FAILED) {
        log_warning("Can't read the RDB file %s: %s", path, im.size ? strerror(errno) : "empty");
        return -1;
    }
    madvise(map, im.size, MADV_SEQUENTIAL);
    im.base = map;
    im.r.end = im.base + im.size;
    im.crc_upto = im.base;
    im.now = time_ms();
    long long t0 = im.now;
    int was_loading = srv.loading;
    srv.loading = 1;
    int rc = import_mapped(&im);
    srv.loading = was_loading;
    munmap(map, im.size);
    if (rc != RDB_IMPORT_STOPPED)
        log_notice(
            "Imported %s (RDB version %d) in %.3f seconds: %llu keys, %llu function libraries"
            "; %llu keys already expired left out, %llu keys replaced, %llu records could "
            "not be imported%s",
            path, im.st.version, (double)(time_ms() - t0) / 1000.0, (unsigned long long)im.st.keys,
            (unsigned long long)im.st.functions, (unsigned long long)im.st.expired,
            (unsigned long long)im.st.replaced, (unsigned long long)im.st.skipped,
            im.st.skipped ? " (named above)" : "");
    if (st) *st = im.st;
    return rc;
}
