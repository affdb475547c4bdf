/* lazyfree.c - the background freeing of large values (see lazyfree.h).
 *
 * A FIFO of queued values under one mutex; the worker sleeps on a condition variable until
 * the queue has something or it is told to stop. The loop thread only appends and reads the
 * two counters (atomics), so it never waits for a value being freed. The queue's nodes are
 * allocated by the loop thread and freed by the worker. A flushed database (lazyfree_db) is one
 * node holding its two dicts, which the worker clears: only when no tag is alive, since tags
 * (tier space, search entries) must be freed on the loop thread. */
#include "server/lazyfree.h"

#include "common/alloc.h"
#include "common/log.h"
#include "storage/t_tag.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

typedef struct lf_node {
    struct lf_node *next;
    obj_t *o;        /* one value, or */
    dict_t *dicts;   /* a flushed database's keys and expires (two dicts, heap) */
    uint64_t weight; /* what it counts in pending: 1, or the database's keys */
} lf_node_t;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER, idle = PTHREAD_COND_INITIALIZER;
static lf_node_t *head, *tail;
static int running, stopping;
static pthread_t worker;
static _Atomic uint64_t pending, freed;

static void *work(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (!head && !stopping) pthread_cond_wait(&wake, &lock);
        if (!head) break; /* stopping and nothing left */
        lf_node_t *n = head;
        head = n->next;
        if (!head) tail = NULL;
        pthread_mutex_unlock(&lock);
        uint64_t w = n->weight;
        if (n->dicts) { /* no tag among them (lazyfree_db): values free as any other */
            dict_clear(&n->dicts[1], NULL);
            dict_clear(&n->dicts[0], NULL);
            xfree(n->dicts);
        } else {
            obj_free(n->o);
        }
        xfree(n);
        atomic_fetch_add(&freed, w);
        pthread_mutex_lock(&lock);
        if (atomic_fetch_sub(&pending, w) == w) pthread_cond_broadcast(&idle);
    }
    pthread_mutex_unlock(&lock);
    return NULL;
}

/* Whether freeing o is worth the thread: a collection of more than LAZYFREE_THRESHOLD
 * elements (Redis's lazyfreeGetFreeEffort, whose unit is about an allocation each). */
static int worth_it(const obj_t *o)
{
    switch (o->type) {
    case OBJ_LIST:
    case OBJ_SET:
    case OBJ_ZSET:
    case OBJ_HASH:
    case OBJ_STREAM: /* nodes plus groups and their PELs (storage/t_stream.c) */
        return obj_length(o) > LAZYFREE_THRESHOLD;
    default:
        return 0;
    }
}

/* Queues n for the worker (started on first use): 0, or -1 when it cannot start (n is not
 * queued then). */
static int enqueue(lf_node_t *n)
{
    n->next = NULL;
    pthread_mutex_lock(&lock);
    if (!running) {
        stopping = 0;
        int rc = pthread_create(&worker, NULL, work, NULL);
        if (rc != 0) {
            pthread_mutex_unlock(&lock);
            log_warning("lazyfree: cannot start its thread (%s): freeing at once", strerror(rc));
            return -1;
        }
        running = 1;
    }
    atomic_fetch_add(&pending, n->weight);
    if (tail)
        tail->next = n;
    else
        head = n;
    tail = n;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    return 0;
}

void lazyfree_value(obj_t *o)
{
    if (!o) return;
    if (!worth_it(o)) {
        obj_free(o);
        return;
    }
    lf_node_t *n = xcalloc(1, sizeof(*n));
    n->o = o;
    n->weight = 1;
    if (enqueue(n) < 0) {
        xfree(n);
        obj_free(o);
    }
}

uint64_t lazyfree_db(db_t *db)
{
    if (tag_live() > 0 || db_size(db) == 0) return db_flush(db);
    lf_node_t *n = xcalloc(1, sizeof(*n));
    n->dicts = xmalloc(2 * sizeof(dict_t));
    uint64_t keys = db_detach(db, &n->dicts[0], &n->dicts[1]);
    n->weight = keys;
    if (enqueue(n) < 0) {
        dict_clear(&n->dicts[1], NULL);
        dict_clear(&n->dicts[0], NULL);
        xfree(n->dicts);
        xfree(n);
    }
    return keys;
}

uint64_t lazyfree_pending(void)
{
    return atomic_load(&pending);
}

uint64_t lazyfree_freed(void)
{
    return atomic_load(&freed);
}

void lazyfree_reset_stats(void)
{
    atomic_store(&freed, 0);
}

void lazyfree_drain(void)
{
    pthread_mutex_lock(&lock);
    while (atomic_load(&pending) > 0) pthread_cond_wait(&idle, &lock);
    pthread_mutex_unlock(&lock);
}

void lazyfree_stop(void)
{
    pthread_mutex_lock(&lock);
    if (!running) {
        pthread_mutex_unlock(&lock);
        return;
    }
    stopping = 1;
    pthread_cond_signal(&wake);
    pthread_mutex_unlock(&lock);
    pthread_join(worker, NULL); /* it frees what is left first */
    running = 0;
}
