/* cte-checkpoint.c - the simulation half of tools/bench-checkpoint: a 3-D Gray-Scott
 * reaction-diffusion simulation on the CPU that checkpoints its two double fields every K
 * steps through one or more arms, then restarts from each arm's last checkpoint.
 *
 *   cte-checkpoint --size N --steps S --every K --dir DIR [--uri shm:PATH]
 *                  [--arms cte,hdf5,thread,inline] [--chunk-mib M] [--inflight-mib I]
 *                  [--warm-mib W] [--slots N]
 *                  defaults: N 256, S 65, K 10, M 4, I 512, W 0, slots 0
 *
 * Every checkpoint is a new one and is kept (nothing is overwritten or deleted during the
 * run), as a simulation keeps its restart dumps (--slots below changes that). Arms (each runs the
 * whole simulation from the same initial state, one after the other): cte     libcte datasets
 * "ckpt-<s>/u" and "ckpt-<s>/v" in tag gray-scott (chunks of whole planes, about M MiB each,
 * attribute "step"), written asynchronously (cte_dataset_write) at score 1.0 over --uri. Creating
 * the datasets is synchronous, so it also waits for the previous checkpoint's puts; the last
 * checkpoint is waited for at the end hdf5    the same chunked datasets "u" and "v" (attribute
 * "step") in a new file DIR/ckpt-<s>.h5, written with H5Dwrite and closed thread  a writer thread
 * pwrites the raw arrays to a new file DIR/thread-<s>.raw: the simulation waits for the previous
 * write, copies both fields into a staging buffer (allocated and touched once, before the run) and
 * goes on inline  pwrite of the raw arrays to a new file DIR/inline-<s>.raw from the simulation No
 * arm calls fsync: every checkpoint ends in memory (the RAM tier or the page cache). The files are
 * left in DIR (the caller removes them). The stall of an arm is the time its simulation spends in
 * checkpoint calls, plus the final wait for the last checkpoint; the total is the whole run (steps
 * and checkpoints). Setup before the first step (connecting, the thread arm's staging buffer) is
 * not counted.
 *
 * --slots N: checkpoints go round N slots instead (the k-th to slot (k - 1) mod N: dataset
 * "ckpt-<slot>/u", file ckpt-<slot>.h5 or <arm>-<slot>.raw), each written over in place
 * (cte: the same blobs; hdf5: the file opened and its datasets rewritten; raw: no O_TRUNC), as
 * a simulation that keeps its last N restart dumps does. 0 (the default): every checkpoint new.
 *
 * --warm-mib W (cte): before the run, W MiB go through the connection and are deleted, so that
 * the pages of its shm request area exist (give the area's size).
 *
 * Restart: for each arm, the fields of its last checkpoint are read back (a new connection
 * for cte, H5Fopen, pread), compared bit for bit with the state the simulation had at that
 * step, and the simulation runs on from there to step S, whose fields must equal the
 * uninterrupted run's bit for bit.
 *
 * --damage ARM (tests): before ARM's restart, one value of its last checkpoint is changed, so
 * that its restart must fail.
 *
 * Output: a progress line per checkpoint on stderr; on stdout first
 *   memory fresh_mbs=<n> touched_mbs=<n>     memset of 64 MiB never touched, and again
 * then one line per arm:
 *   arm=<name> total_s=<t> stall_s=<t> waited_s=<t> bytes=<n> checkpoints=<n>
 * restart=ok|FAIL(<why>) (waited_s: the part of the stall spent waiting for an earlier checkpoint
 * to be stored: the cte arm's wait for its puts to be answered, the thread arm's for its writer; 0
 * for the others) Exit status: 0 when every arm ran and restarted bit-exact, 1 otherwise, 2 on
 * usage errors. Single-threaded apart from the thread arm's writer. Links libcte (static) and HDF5.
 */
#define _GNU_SOURCE
#include <cte/cte.h>
#include <cte/dataset.h>

#include <hdf5.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define TAG "gray-scott"
#define IO_PIECE (16u << 20) /* bytes per pwrite/pread call */

/* ---- options ---- */

typedef struct opts {
    int n, steps, every;
    const char *dir, *uri, *arms, *damage;
    int chunk_mib, inflight_mib, warm_mib, slots;
} opts_t;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "cte-checkpoint: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    exit(1);
}

static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p) die("out of memory (%zu bytes)", n);
    return p;
}

/* ---- the simulation ---- */

typedef struct sim {
    int n;
    size_t cells;
    double *u, *v, *u2, *v2; /* current and next */
    int step;
} sim_t;

static const double DU = 0.2, DV = 0.1, FEED = 0.04, KILL = 0.06, DT = 1.0;

static void sim_init(sim_t *s, int n)
{
    s->n = n;
    s->cells = (size_t)n * n * n;
    s->u = xmalloc(s->cells * sizeof(double));
    s->v = xmalloc(s->cells * sizeof(double));
    s->u2 = xmalloc(s->cells * sizeof(double));
    s->v2 = xmalloc(s->cells * sizeof(double));
    s->step = 0;
    uint64_t r = 0x243F6A8885A308D3ull;
    int lo = n / 2 - n / 8, hi = n / 2 + n / 8;
    for (int z = 0; z < n; z++)
        for (int y = 0; y < n; y++)
            for (int x = 0; x < n; x++) {
                size_t i = ((size_t)z * n + y) * n + x;
                r ^= r << 13, r ^= r >> 7, r ^= r << 17;
                double noise = (double)(r >> 11) / 9007199254740992.0 * 0.02;
                int in = z >= lo && z < hi && y >= lo && y < hi && x >= lo && x < hi;
                s->u[i] = in ? 0.25 + noise : 1.0;
                s->v[i] = in ? 0.33 + noise : 0.0;
            }
}

static void sim_free(sim_t *s)
{
    free(s->u), free(s->v), free(s->u2), free(s->v2);
}

/* One row z,y: the 7-point Laplacian with periodic edges. */
static void sim_row(sim_t *s, int z, int y)
{
    int n = s->n;
    size_t zm = (size_t)((z + n - 1) % n), zp = (size_t)((z + 1) % n);
    size_t ym = (size_t)((y + n - 1) % n), yp = (size_t)((y + 1) % n);
    const double *u = s->u, *v = s->v;
    size_t c = ((size_t)z * n + y) * n, a = ((size_t)zm * n + y) * n, b = ((size_t)zp * n + y) * n;
    size_t d = ((size_t)z * n + ym) * n, e = ((size_t)z * n + yp) * n;
    for (int x = 0; x < n; x++) {
        int xm = x ? x - 1 : n - 1, xp = x + 1 < n ? x + 1 : 0;
        double uc = u[c + x], vc = v[c + x];
        double lu = u[a + x] + u[b + x] + u[d + x] + u[e + x] + u[c + xm] + u[c + xp] - 6 * uc;
        double lv = v[a + x] + v[b + x] + v[d + x] + v[e + x] + v[c + xm] + v[c + xp] - 6 * vc;
        double uvv = uc * vc * vc;
        s->u2[c + x] = uc + DT * (DU * lu - uvv + FEED * (1 - uc));
        s->v2[c + x] = vc + DT * (DV * lv + uvv - (FEED + KILL) * vc);
    }
}

static void sim_step(sim_t *s)
{
    for (int z = 0; z < s->n; z++)
        for (int y = 0; y < s->n; y++) sim_row(s, z, y);
    double *t = s->u;
    s->u = s->u2, s->u2 = t;
    t = s->v, s->v = s->v2, s->v2 = t;
    s->step++;
}

/* ---- the arms: begin (once), checkpoint (every K steps), finish (drain), restart (read back
 * the last checkpoint into u, v) ---- */

typedef struct arm arm_t;
struct arm {
    const char *name;
    void (*begin)(arm_t *a, const sim_t *s);
    void (*checkpoint)(arm_t *a, const sim_t *s);
    void (*finish)(arm_t *a);
    /* reads checkpoint `last` */
    int (*restart)(arm_t *a, int last, double *u, double *v, int *step, char *why, size_t cap);
    /* --damage: changes one value of checkpoint `last` (u at element 1, to 12345.0) */
    void (*damage)(arm_t *a, int last);
    const opts_t *o;
    int n;
    size_t bytes; /* of one field */
    /* cte */
    cte_conn_t *c;
    cte_dataset_t *du, *dv;
    /* hdf5 */
    hid_t file, hu, hv;
    /* files */
    int fd;
    char path[4096];
    const char *prefix; /* raw files: DIR/<prefix>-<step>.raw */
    /* thread */
    pthread_t th;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    double *stage;
    int busy, quit, last_step, io_err;
    double waited; /* cte, thread: stalled waiting for an earlier checkpoint to be stored */
};

static uint64_t chunk_planes(const opts_t *o, int n)
{
    uint64_t plane = (uint64_t)n * n * sizeof(double);
    uint64_t p = ((uint64_t)o->chunk_mib << 20) / plane;
    return p < 1 ? 1 : p > (uint64_t)n ? (uint64_t)n : p;
}

/* -- cte -- */

/* Where step's checkpoint goes: its own (the step) or, with --slots N, slot (k - 1) mod N for
 * the k-th checkpoint. */
static int ckpt_id(const opts_t *o, int step)
{
    return o->slots ? (step / o->every - 1) % o->slots : step;
}

static void cte_check(arm_t *a, int rc, const char *what)
{
    if (rc) die("cte: %s: %s (%s)", what, cte_strerror(rc), cte_conn_errmsg(a->c));
}

/* Creates (or opens) step's datasets into a->du, a->dv. */
static int cte_open_sets(arm_t *a, int step, int create)
{
    uint64_t shape[3] = {a->n, a->n, a->n}, chunk[3] = {chunk_planes(a->o, a->n), a->n, a->n};
    char u[64], v[64];
    snprintf(u, sizeof u, "ckpt-%06d/u", ckpt_id(a->o, step));
    snprintf(v, sizeof v, "ckpt-%06d/v", ckpt_id(a->o, step));
    if (!create) {
        int rc = cte_dataset_open(a->c, TAG, u, &a->du);
        if (!rc && (rc = cte_dataset_open(a->c, TAG, v, &a->dv)) != 0) cte_dataset_close(a->du);
        return rc;
    }
    cte_check(a, cte_dataset_create(a->c, TAG, u, CTE_FLOAT64, 3, shape, chunk, &a->du), u);
    cte_check(a, cte_dataset_create(a->c, TAG, v, CTE_FLOAT64, 3, shape, chunk, &a->dv), v);
    uint64_t in = (uint64_t)a->o->inflight_mib << 20;
    cte_dataset_set_max_inflight(a->du, in);
    cte_dataset_set_max_inflight(a->dv, in);
    return 0;
}

/* Waits for the previous checkpoint's puts and drops its handles. */
static void cte_drop_sets(arm_t *a)
{
    if (!a->du) return;
    double t0 = now();
    cte_check(a, cte_dataset_close(a->du), "wait u");
    cte_check(a, cte_dataset_close(a->dv), "wait v");
    a->du = a->dv = NULL;
    a->waited += now() - t0;
}

/* Before the run (untimed, as the thread arm's staging buffer is touched before the run):
 * a dataset of --warm-mib MiB written through the connection and deleted, so the pages of
 * its shm request area exist. The tier memory it took is freed again. */
static void cte_warm(arm_t *a)
{
    uint64_t chunk = chunk_planes(a->o, a->n) * a->n * a->n * sizeof(double);
    uint64_t n = ((uint64_t)a->o->warm_mib << 20) / chunk, shape[1] = {n * chunk}, start[1] = {0};
    uint64_t count[1] = {chunk};
    cte_dataset_t *w;
    if (!n) n = 1, shape[0] = chunk;
    char *zero = calloc(1, chunk);
    cte_check(a, cte_dataset_create(a->c, TAG, "warm-up", CTE_UINT8, 1, shape, count, &w),
              "warm-up");
    for (uint64_t i = 0; i < n; i++, start[0] += chunk)
        cte_check(a, cte_dataset_write(w, start, count, zero, 1.0), "warm-up write");
    cte_check(a, cte_dataset_close(w), "warm-up wait");
    cte_check(a, cte_dataset_delete(a->c, TAG, "warm-up"), "warm-up delete");
    free(zero);
}

static void cte_begin(arm_t *a, const sim_t *s)
{
    cte_reply_t *r = NULL;
    cte_check(a, cte_connect(a->o->uri, 0, &a->c), a->o->uri);
    cte_check(a, cte_call(a->c, &r, "DEL", TAG, NULL), "DEL"); /* an earlier run's */
    cte_reply_free(r);
    if (a->o->warm_mib) cte_warm(a);
}

static void cte_ckpt(arm_t *a, const sim_t *s)
{
    char step[16];
    uint64_t start[3] = {0}, count[3] = {a->n, a->n, a->n};
    snprintf(step, sizeof step, "%d", s->step);
    cte_drop_sets(a);
    cte_open_sets(a, s->step, 1); /* synchronous calls: they wait for earlier puts anyway */
    cte_check(a, cte_dataset_set_attr(a->du, "step", step), "set step");
    cte_check(a, cte_dataset_write(a->du, start, count, s->u, 1.0), "write u");
    cte_check(a, cte_dataset_write(a->dv, start, count, s->v, 1.0), "write v");
}

static void cte_finish(arm_t *a)
{
    cte_drop_sets(a);
    cte_conn_free(a->c);
    a->c = NULL;
}

static int cte_restart(arm_t *a, int last, double *u, double *v, int *step, char *why, size_t cap)
{
    uint64_t start[3] = {0}, count[3] = {a->n, a->n, a->n};
    int rc = cte_connect(a->o->uri, 0, &a->c);
    if (rc) return snprintf(why, cap, "connect: %s", cte_strerror(rc)), -1;
    if ((rc = cte_open_sets(a, last, 0)) == 0) {
        const char *st = cte_dataset_attr(a->du, "step");
        *step = st ? atoi(st) : -1;
        rc = cte_dataset_read(a->du, start, count, u);
        if (!rc) rc = cte_dataset_read(a->dv, start, count, v);
        cte_dataset_close(a->du), cte_dataset_close(a->dv);
    }
    if (rc) snprintf(why, cap, "%s (%s)", cte_strerror(rc), cte_conn_errmsg(a->c));
    cte_conn_free(a->c);
    a->c = NULL;
    return rc ? -1 : 0;
}

/* -- hdf5 -- */

static void h5_check(herr_t rc, const char *what)
{
    if (rc < 0) die("hdf5: %s failed", what);
}

static hid_t h5_dataset(hid_t file, const char *name, int n, const opts_t *o)
{
    hsize_t dims[3] = {n, n, n}, chunk[3] = {chunk_planes(o, n), n, n};
    hid_t space = H5Screate_simple(3, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE);
    h5_check(H5Pset_chunk(dcpl, 3, chunk), "H5Pset_chunk");
    h5_check(H5Pset_fill_time(dcpl, H5D_FILL_TIME_NEVER), "H5Pset_fill_time");
    hid_t d = H5Dcreate2(file, name, H5T_NATIVE_DOUBLE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
    h5_check(d, "H5Dcreate2");
    H5Pclose(dcpl), H5Sclose(space);
    return d;
}

static void h5_path(arm_t *a, int step)
{
    snprintf(a->path, sizeof a->path, "%s/ckpt-%06d.h5", a->o->dir, ckpt_id(a->o, step));
}

static void h5_begin(arm_t *a, const sim_t *s) {}

static void h5_ckpt(arm_t *a, const sim_t *s)
{
    hid_t at;
    h5_path(a, s->step);
    if (a->o->slots && access(a->path, F_OK) == 0) { /* a slot written before: in place */
        a->file = H5Fopen(a->path, H5F_ACC_RDWR, H5P_DEFAULT);
        h5_check(a->file, "H5Fopen");
        a->hu = H5Dopen2(a->file, "u", H5P_DEFAULT);
        a->hv = H5Dopen2(a->file, "v", H5P_DEFAULT);
        h5_check(a->hu < 0 || a->hv < 0 ? -1 : 0, "H5Dopen2");
        at = H5Aopen(a->hu, "step", H5P_DEFAULT);
    } else {
        a->file = H5Fcreate(a->path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        h5_check(a->file, "H5Fcreate");
        a->hu = h5_dataset(a->file, "u", a->n, a->o);
        a->hv = h5_dataset(a->file, "v", a->n, a->o);
        hid_t as = H5Screate(H5S_SCALAR);
        at = H5Acreate2(a->hu, "step", H5T_NATIVE_INT, as, H5P_DEFAULT, H5P_DEFAULT);
        H5Sclose(as);
    }
    h5_check(at, "H5Acreate2/H5Aopen");
    h5_check(H5Awrite(at, H5T_NATIVE_INT, &s->step), "H5Awrite");
    H5Aclose(at);
    h5_check(H5Dwrite(a->hu, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, s->u), "H5Dwrite u");
    h5_check(H5Dwrite(a->hv, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, s->v), "H5Dwrite v");
    H5Dclose(a->hu), H5Dclose(a->hv);
    h5_check(H5Fclose(a->file), "H5Fclose");
}

static void h5_finish(arm_t *a) {}

static int h5_restart(arm_t *a, int last, double *u, double *v, int *step, char *why, size_t cap)
{
    h5_path(a, last);
    hid_t f = H5Fopen(a->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) return snprintf(why, cap, "H5Fopen %s", a->path), -1;
    hid_t du = H5Dopen2(f, "u", H5P_DEFAULT), dv = H5Dopen2(f, "v", H5P_DEFAULT);
    int rc = du < 0 || dv < 0 ? -1 : 0;
    hid_t at = rc ? -1 : H5Aopen(du, "step", H5P_DEFAULT);
    if (at < 0 || H5Aread(at, H5T_NATIVE_INT, step) < 0) rc = -1;
    if (!rc && H5Dread(du, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, u) < 0) rc = -1;
    if (!rc && H5Dread(dv, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0) rc = -1;
    if (at >= 0) H5Aclose(at);
    if (du >= 0) H5Dclose(du);
    if (dv >= 0) H5Dclose(dv);
    H5Fclose(f);
    if (rc) snprintf(why, cap, "reading %s failed", a->path);
    return rc;
}

/* -- raw files: u, v, then the step as an int32 (written last: a torn write shows) -- */

static int write_all(int fd, const void *buf, size_t len, off_t off)
{
    const char *p = buf;
    while (len) {
        ssize_t n = pwrite(fd, p, len < IO_PIECE ? len : IO_PIECE, off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n, len -= (size_t)n, off += n;
    }
    return 0;
}

static int read_all(int fd, void *buf, size_t len, off_t off)
{
    char *p = buf;
    while (len) {
        ssize_t n = pread(fd, p, len < IO_PIECE ? len : IO_PIECE, off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n, len -= (size_t)n, off += n;
    }
    return 0;
}

static int raw_write(int fd, const double *u, const double *v, int step, size_t bytes)
{
    int32_t st = step;
    if (write_all(fd, u, bytes, 0) || write_all(fd, v, bytes, (off_t)bytes)) return -1;
    return write_all(fd, &st, sizeof st, (off_t)(2 * bytes));
}

static void raw_path(arm_t *a, int step)
{
    snprintf(a->path, sizeof a->path, "%s/%s-%06d.raw", a->o->dir, a->prefix, ckpt_id(a->o, step));
}

/* DIR/<prefix>-<id>.raw, new (with --slots: written over in place); its descriptor. */
static int raw_create(arm_t *a, int step)
{
    raw_path(a, step);
    int fd = open(a->path, O_WRONLY | O_CREAT | (a->o->slots ? 0 : O_TRUNC), 0644);
    if (fd < 0) die("open %s: %s", a->path, strerror(errno));
    return fd;
}

static int raw_restart(arm_t *a, int last, double *u, double *v, int *step, char *why, size_t cap)
{
    int32_t st;
    raw_path(a, last);
    int fd = open(a->path, O_RDONLY);
    if (fd < 0) return snprintf(why, cap, "open %s: %s", a->path, strerror(errno)), -1;
    int rc = read_all(fd, u, a->bytes, 0) || read_all(fd, v, a->bytes, (off_t)a->bytes) ||
             read_all(fd, &st, sizeof st, (off_t)(2 * a->bytes));
    close(fd);
    if (rc) return snprintf(why, cap, "short read of %s", a->path), -1;
    *step = st;
    return 0;
}

static void inline_begin(arm_t *a, const sim_t *s)
{
    a->prefix = "inline";
}

static void inline_ckpt(arm_t *a, const sim_t *s)
{
    int fd = raw_create(a, s->step);
    if (raw_write(fd, s->u, s->v, s->step, a->bytes) || close(fd))
        die("write %s: %s", a->path, strerror(errno));
}

static void inline_finish(arm_t *a) {}

static void *writer_main(void *arg)
{
    arm_t *a = arg;
    pthread_mutex_lock(&a->mu);
    for (;;) {
        while (!a->busy && !a->quit) pthread_cond_wait(&a->cv, &a->mu);
        if (!a->busy) break;
        int step = a->last_step, fd = a->fd;
        pthread_mutex_unlock(&a->mu);
        int rc = raw_write(fd, a->stage, a->stage + a->bytes / sizeof(double), step, a->bytes);
        if (close(fd) && !rc) rc = -1;
        pthread_mutex_lock(&a->mu);
        if (rc) a->io_err = errno ? errno : EIO;
        a->busy = 0;
        pthread_cond_broadcast(&a->cv);
    }
    pthread_mutex_unlock(&a->mu);
    return NULL;
}

static void thread_begin(arm_t *a, const sim_t *s)
{
    a->prefix = "thread";
    a->stage = xmalloc(2 * a->bytes);
    memset(a->stage, 0, 2 * a->bytes); /* its pages exist before the first checkpoint */
    pthread_mutex_init(&a->mu, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (pthread_create(&a->th, NULL, writer_main, a)) die("pthread_create");
}

static void thread_wait_idle(arm_t *a)
{
    double t0 = now();
    pthread_mutex_lock(&a->mu);
    while (a->busy) pthread_cond_wait(&a->cv, &a->mu);
    pthread_mutex_unlock(&a->mu);
    a->waited += now() - t0;
    if (a->io_err) die("write %s: %s", a->path, strerror(a->io_err));
}

static void thread_ckpt(arm_t *a, const sim_t *s)
{
    thread_wait_idle(a);
    memcpy(a->stage, s->u, a->bytes);
    memcpy(a->stage + a->bytes / sizeof(double), s->v, a->bytes);
    int fd = raw_create(a, s->step);
    pthread_mutex_lock(&a->mu);
    a->fd = fd;
    a->last_step = s->step;
    a->busy = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
}

static void thread_finish(arm_t *a)
{
    thread_wait_idle(a);
    pthread_mutex_lock(&a->mu);
    a->quit = 1;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->mu);
    pthread_join(a->th, NULL);
    free(a->stage);
}

/* -- --damage (tests: a restart must notice a checkpoint that changed) -- */

static const double DAMAGE = 12345.0;

static void cte_damage(arm_t *a, int last)
{
    uint64_t start[3] = {0, 0, 1}, count[3] = {1, 1, 1};
    cte_check(a, cte_connect(a->o->uri, 0, &a->c), a->o->uri);
    cte_check(a, cte_open_sets(a, last, 0), "open");
    cte_check(a, cte_dataset_write(a->du, start, count, &DAMAGE, 1.0), "damage");
    cte_dataset_close(a->du), cte_dataset_close(a->dv);
    cte_conn_free(a->c);
    a->c = NULL;
}

static void h5_damage(arm_t *a, int last)
{
    hsize_t start[3] = {0, 0, 1}, count[3] = {1, 1, 1};
    h5_path(a, last);
    hid_t f = H5Fopen(a->path, H5F_ACC_RDWR, H5P_DEFAULT), d = H5Dopen2(f, "u", H5P_DEFAULT);
    hid_t fs = H5Dget_space(d), ms = H5Screate_simple(3, count, NULL);
    h5_check(H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL), "select");
    h5_check(H5Dwrite(d, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, &DAMAGE), "damage");
    H5Sclose(ms), H5Sclose(fs), H5Dclose(d), H5Fclose(f);
}

static void raw_damage(arm_t *a, int last)
{
    raw_path(a, last);
    int fd = open(a->path, O_WRONLY);
    if (fd < 0 || write_all(fd, &DAMAGE, sizeof DAMAGE, sizeof(double)) || close(fd))
        die("damage %s: %s", a->path, strerror(errno));
}

static const arm_t ARMS[] = {
    {"cte", cte_begin, cte_ckpt, cte_finish, cte_restart, cte_damage},
    {"hdf5", h5_begin, h5_ckpt, h5_finish, h5_restart, h5_damage},
    {"thread", thread_begin, thread_ckpt, thread_finish, raw_restart, raw_damage},
    {"inline", inline_begin, inline_ckpt, inline_finish, raw_restart, raw_damage},
};
#define NARMS (int)(sizeof ARMS / sizeof ARMS[0])

/* ---- runs ---- */

typedef struct result {
    double total, stall, waited;
    uint64_t bytes;
    int checkpoints;
} result_t;

/* The reference: the state at the last checkpoint and at the end (from the first arm run). */
typedef struct reference {
    double *u, *v, *uend, *vend;
    int step;
} reference_t;

static int last_checkpoint(const opts_t *o)
{
    return o->steps / o->every * o->every;
}

static void run_arm(arm_t *a, const opts_t *o, result_t *r, reference_t *ref)
{
    sim_t s;
    sim_init(&s, o->n);
    a->begin(a, &s); /* setup before the simulation starts: not timed */
    double t0 = now(), stall = 0;
    while (s.step < o->steps) {
        sim_step(&s);
        if (s.step % o->every) continue;
        double c0 = now();
        a->checkpoint(a, &s);
        double dt = now() - c0;
        stall += dt;
        r->checkpoints++;
        r->bytes += 2 * a->bytes;
        fprintf(stderr, "[%s] step %d/%d: checkpoint %d (%zu MiB) stalled %.3f s\n", a->name,
                s.step, o->steps, r->checkpoints, 2 * a->bytes >> 20, dt);
        if (s.step == ref->step && !ref->u) { /* untimed: the state to compare restarts with */
            double k0 = now();
            ref->u = xmalloc(a->bytes), ref->v = xmalloc(a->bytes);
            memcpy(ref->u, s.u, a->bytes), memcpy(ref->v, s.v, a->bytes);
            t0 += now() - k0;
        }
    }
    double f0 = now();
    a->finish(a);
    stall += now() - f0;
    r->total = now() - t0;
    r->stall = stall;
    r->waited = a->waited;
    if (!ref->uend) {
        ref->uend = xmalloc(a->bytes), ref->vend = xmalloc(a->bytes);
        memcpy(ref->uend, s.u, a->bytes), memcpy(ref->vend, s.v, a->bytes);
    } else if (memcmp(ref->uend, s.u, a->bytes) || memcmp(ref->vend, s.v, a->bytes)) {
        die("[%s] the simulation's end state differs from the first arm's", a->name);
    }
    sim_free(&s);
}

/* Reads the arm's last checkpoint, compares it, runs on to the end and compares again. */
static int restart_arm(arm_t *a, const opts_t *o, const reference_t *ref, char *why, size_t cap)
{
    sim_t s;
    int step = -1;
    sim_init(&s, o->n);
    int rc = a->restart(a, ref->step, s.u, s.v, &step, why, cap);
    if (!rc && step != ref->step)
        rc = -1, snprintf(why, cap, "checkpoint of step %d, not %d", step, ref->step);
    if (!rc && (memcmp(s.u, ref->u, a->bytes) || memcmp(s.v, ref->v, a->bytes)))
        rc = -1, snprintf(why, cap, "fields differ from step %d's", step);
    s.step = step;
    while (!rc && s.step < o->steps) sim_step(&s);
    if (!rc && (memcmp(s.u, ref->uend, a->bytes) || memcmp(s.v, ref->vend, a->bytes)))
        rc = -1, snprintf(why, cap, "step %d after the restart differs", o->steps);
    if (!rc)
        fprintf(stderr, "[%s] restart from step %d: bit-exact, and at step %d too\n", a->name, step,
                o->steps);
    sim_free(&s);
    return rc;
}

/* What memory costs here: MB/s of a memset of 64 MiB never touched before (page faults
 * included) and of the same memset again. Printed so that the arms' figures can be read. */
static void memory_probe(void)
{
    size_t n = 64u << 20;
    char *p = xmalloc(n);
    double t0 = now();
    memset(p, 1, n);
    __asm__ volatile("" : : "r"(p) : "memory"); /* the stores happen, though p is not read */
    double t1 = now();
    memset(p, 2, n);
    __asm__ volatile("" : : "r"(p) : "memory");
    double t2 = now();
    printf("memory fresh_mbs=%.0f touched_mbs=%.0f\n", n / (t1 - t0) / 1e6, n / (t2 - t1) / 1e6);
    fflush(stdout);
    free(p);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: cte-checkpoint --dir DIR [--uri shm:PATH] [--size N] [--steps S] "
               "[--every K]\n"
               "         [--arms cte,hdf5,thread,inline] [--chunk-mib M] [--inflight-mib I]\n"
               "         [--warm-mib W] [--slots N]\n");
}

static int parse_int(const char *s, int min, int max, int *out)
{
    char *e;
    long v = strtol(s, &e, 10);
    if (!*s || *e || v < min || v > max) return -1;
    *out = (int)v;
    return 0;
}

static int parse_args(int argc, char **argv, opts_t *o)
{
    static const struct option longs[] = {{"size", 1, 0, 'n'},
                                          {"steps", 1, 0, 's'},
                                          {"every", 1, 0, 'k'},
                                          {"dir", 1, 0, 'd'},
                                          {"uri", 1, 0, 'u'},
                                          {"arms", 1, 0, 'a'},
                                          {"chunk-mib", 1, 0, 'c'},
                                          {"inflight-mib", 1, 0, 'i'},
                                          {"warm-mib", 1, 0, 'w'},
                                          {"damage", 1, 0, 'D'},
                                          {"slots", 1, 0, 'S'},
                                          {"help", 0, 0, 'h'},
                                          {0, 0, 0, 0}};
    *o = (opts_t){.n = 256,
                  .steps = 65,
                  .every = 10,
                  .arms = "cte,hdf5,thread,inline",
                  .chunk_mib = 4,
                  .inflight_mib = 512};
    int ch, bad = 0;
    while ((ch = getopt_long(argc, argv, "", longs, NULL)) != -1) {
        switch (ch) {
        case 'n':
            bad |= parse_int(optarg, 4, 2048, &o->n);
            break;
        case 's':
            bad |= parse_int(optarg, 1, 1000000, &o->steps);
            break;
        case 'k':
            bad |= parse_int(optarg, 1, 1000000, &o->every);
            break;
        case 'c':
            bad |= parse_int(optarg, 1, 1024, &o->chunk_mib);
            break;
        case 'i':
            bad |= parse_int(optarg, 1, 1 << 20, &o->inflight_mib);
            break;
        case 'w':
            bad |= parse_int(optarg, 0, 1 << 20, &o->warm_mib);
            break;
        case 'S':
            bad |= parse_int(optarg, 0, 1000, &o->slots);
            break;
        case 'D':
            o->damage = optarg;
            break;
        case 'd':
            o->dir = optarg;
            break;
        case 'u':
            o->uri = optarg;
            break;
        case 'a':
            o->arms = optarg;
            break;
        case 'h':
            usage(stdout);
            exit(0);
        default:
            bad = 1;
        }
    }
    if (bad || optind != argc || !o->dir || o->every > o->steps) return -1;
    return 0;
}

int main(int argc, char **argv)
{
    opts_t o;
    arm_t arms[NARMS];
    result_t res[NARMS] = {0};
    int run[NARMS], nrun = 0, failed = 0;
    reference_t ref = {0};

    if (parse_args(argc, argv, &o)) {
        usage(stderr);
        return 2;
    }
    char *list = strdup(o.arms);
    const char *bad = NULL;
    for (char *save, *t = strtok_r(list, ",", &save); t && !bad; t = strtok_r(NULL, ",", &save)) {
        int i = 0;
        while (i < NARMS && strcmp(ARMS[i].name, t)) i++;
        if (i == NARMS || nrun == NARMS)
            fprintf(stderr, "cte-checkpoint: unknown arm '%s'\n", t), bad = t;
        else if (i == 0 && !o.uri)
            fprintf(stderr, "cte-checkpoint: the cte arm needs --uri\n"), bad = t;
        else
            run[nrun++] = i;
    }
    free(list);
    if (bad) return 2;
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* failures are reported by our checks */
    memory_probe();
    ref.step = last_checkpoint(&o);
    for (int k = 0; k < nrun; k++) {
        arm_t *a = &arms[k];
        *a = ARMS[run[k]];
        a->o = &o, a->n = o.n, a->bytes = (size_t)o.n * o.n * o.n * sizeof(double);
        run_arm(a, &o, &res[k], &ref);
        fprintf(stderr, "[%s] done: %.2f s in all, %.3f s stalled by checkpoints\n", a->name,
                res[k].total, res[k].stall);
    }
    for (int k = 0; k < nrun; k++) {
        char why[512] = "";
        if (o.damage && !strcmp(o.damage, arms[k].name)) arms[k].damage(&arms[k], ref.step);
        int rc = restart_arm(&arms[k], &o, &ref, why, sizeof why);
        failed |= rc != 0;
        printf("arm=%s total_s=%.4f stall_s=%.4f waited_s=%.4f bytes=%llu checkpoints=%d "
               "restart=%s%s%s\n",
               arms[k].name, res[k].total, res[k].stall, res[k].waited,
               (unsigned long long)res[k].bytes, res[k].checkpoints, rc ? "FAIL(" : "ok",
               rc ? why : "", rc ? ")" : "");
        fflush(stdout);
    }
    free(ref.u), free(ref.v), free(ref.uend), free(ref.vend);
    return failed;
}
