/* server/cmd/search.c - TQUERY and TSEARCH, and the glue that feeds the search catalogue.
 *
 * Feeding: storage reports every blob written, deleted and every tag object freed through
 * the observers registered here (storage knows nothing of search). A written blob's name and
 * time are filed at once; its contents are indexed from its first search-max-bytes-per-blob
 * bytes:
 *  - bytes on RAM extents are copied at once (blob_peek), so the index is exact when the
 *    write's reply leaves;
 *  - bytes on file tiers are read by a read plan on the thread pool, like a TGET, and indexed
 *    when it comes back (a newer write in between makes that result stale: it is dropped and
 *    the newer write's read wins). While such reads, or file-tier write plans, are in flight,
 *    TSEARCH waits for them (outside MULTI), so a client that wrote a blob and then searches,
 *    pipelined or not, finds it. (Under a steady stream of file-tier writes TSEARCH waits until
 *    a pause: the price of exact answers.)
 * A tag object is bound to its key name by the key events of writes, RENAME and MOVE
 * (searchcmd_on_key_event); SWAPDB swaps two databases of the catalogue. The append-only file
 * replays writes through the commands, so the index comes back by itself after a restart.
 *
 * Bounded queries: TQUERY visits at most STEP_NAMES names per step. A query that needs more
 * keeps its client waiting (block_for_io: it reads no further commands, so replies stay in
 * order) and goes on from an idle handle on the next loop turns, so other clients are served
 * in between; inside MULTI and without a loop it runs to the end at once. TSEARCH is one
 * bounded pass over the query terms' posting lists. Loop thread only. */
#include "server/cmd/search.h"

#include "common/alloc.h"
#include "search/regex.h"
#include "search/search.h"
#include "search/token.h"
#include "server/acl.h"
#include "server/block.h"
#include "server/cmd/tag.h"
#include "server/executor.h"
#include "server/reply.h"
#include "server/server.h"
#include "storage/t_tag.h"

#include <limits.h>
#include <string.h>
#include <time.h>

#define STEP_NAMES 100000
#define COMPACT_BUDGET (4u << 20)
#define READS_WAITNAME "\xffsearch-reads"

static search_t *cat;
static uint64_t reads_inflight;
/* totals since start, for INFO's indexing rate (wall-clock: the monotonic clock is read
 * without a system call, the thread CPU clock is not, and its cost showed in the rate) */
static uint64_t indexed_bytes, index_ns;

static uint64_t elapsed_ns(const struct timespec *a, const struct timespec *b)
{
    return (uint64_t)((b->tv_sec - a->tv_sec) * 1000000000LL + (b->tv_nsec - a->tv_nsec));
}

/* the RAM path's read buffer, reused (grown to the largest prefix indexed) */
static char *scratch;
static size_t scratch_cap;

/* ---- feeding the catalogue ---- */

typedef struct text_read {
    blob_t *blob; /* held (blob_hold) until the read is indexed: it may be deleted meanwhile */
    uint64_t gen, len;
    int truncated;
    char *buf;
} text_read_t;

/* Indexes text[0..len) as b's contents, or drops them when they are not text. */
static void index_text(const blob_t *b, uint64_t gen, const char *text, uint64_t len, int truncated)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (srv.cfg.search_skip_binary && !token_is_utf8(text, len, truncated)) text = NULL;
    search_blob_text(cat, b, gen, text, len);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    index_ns += elapsed_ns(&t0, &t1);
    if (text) indexed_bytes += len;
}

static void read_done(void *ud, int status)
{
    text_read_t *r = ud;
    if (cat) {
        if (status == 0)
            index_text(r->blob, r->gen, r->buf, r->len, r->truncated);
        else
            search_blob_text(cat, r->blob, r->gen, NULL, 0);
    }
    tag_blob_release(r->blob);
    xfree(r->buf);
    xfree(r);
    if (--reads_inflight == 0) searchcmd_on_writes_settled();
}

void searchcmd_on_writes_settled(void)
{
    if (!reads_inflight && !tag_writes_in_flight())
        block_signal_name(READS_WAITNAME, sizeof(READS_WAITNAME) - 1);
}

static char *scratch_for(uint64_t n)
{
    if (n + 1 > scratch_cap) {
        char *p = try_realloc(scratch, n + 1);
        if (!p) return NULL;
        scratch = p;
        scratch_cap = n + 1;
    }
    return scratch;
}

/* 1 if some of b's extents are on a file tier. */
static int on_files(const blob_info_t *in)
{
    for (int i = 0; i < in->ntiers; i++)
        if (tier_kind(tag_store.tiers->t[in->tiers[i]]) == TIER_FILE) return 1;
    return 0;
}

/* Reads b's first bytes and indexes them: now for RAM, after a read plan for file tiers. */
static void index_contents(blob_t *b, uint64_t gen)
{
    blob_info_t info;
    blob_get_info(b, &info);
    uint64_t max = (uint64_t)srv.cfg.search_max_bytes_per_blob;
    uint64_t n = info.size < max ? info.size : max;
    if (!srv.cfg.search_enabled || max == 0) {
        search_blob_text(cat, b, gen, NULL, 0);
        return;
    }
    /* one RAM extent: indexed in place, without a copy */
    const char *view = n ? blob_ram_view(b, 0, n) : NULL;
    if (view) {
        index_text(b, gen, view, n, info.size > n);
        return;
    }
    /* RAM only: the scratch buffer; file parts: a buffer the read plan fills off the loop */
    char *buf = on_files(&info) ? try_malloc(n ? n : 1) : scratch_for(n);
    tag_plan_t *plan = NULL;
    int rc = buf ? blob_peek(b, 0, n, buf, &plan) : ST_OOM;
    if (rc == ST_PENDING) {
        text_read_t *r = xmalloc(sizeof(*r));
        *r = (text_read_t){b, gen, n, info.size > n, buf};
        blob_hold(b);
        reads_inflight++;
        executor_run(plan, 0, read_done, r);
        return;
    }
    /* done now, or not indexed (no memory; busy cannot happen right after a write) */
    if (rc == ST_OK)
        index_text(b, gen, buf, n, info.size > n);
    else
        search_blob_text(cat, b, gen, NULL, 0);
    if (buf != scratch) xfree(buf);
}

static void on_blob_change(void *ud, const tag_obj_t *t, const blob_t *b, int deleted)
{
    if (!cat) return;
    if (deleted) {
        search_blob_deleted(cat, b);
        return;
    }
    uint64_t gen = search_blob_touch(cat, t, b);
    index_contents((blob_t *)b, gen);
}

static void reindex_blob(void *ud, blob_t *b)
{
    on_blob_change(NULL, ud, b, 0);
}

void searchcmd_reindex_all(void)
{
    if (!cat) return;
    for (int i = 0; i < srv.ndb; i++) {
        dict_iter_t it;
        dict_iter_init(&it, &srv.db[i].keys, 1);
        for (dict_node_t *n; (n = dict_iter_next(&it));) {
            kv_t *kv = (kv_t *)n;
            if (kv->val->type == OBJ_TAG) tag_foreach((tag_obj_t *)kv->val, reindex_blob, kv->val);
        }
        dict_iter_deinit(&it);
    }
}

static void on_tag_free(void *ud, const tag_obj_t *t)
{
    if (cat) search_tag_freed(cat, t);
}

void searchcmd_init(void)
{
    searchcmd_deinit();
    cat = search_new(srv.ndb);
    tag_store.on_blob_change = on_blob_change;
    tag_store.on_tag_free = on_tag_free;
    tag_store.ud = NULL;
}

void searchcmd_deinit(void)
{
    search_free(cat);
    cat = NULL;
    xfree(scratch);
    scratch = NULL;
    scratch_cap = 0;
}

void searchcmd_on_key_event(db_t *db, const char *key, size_t len, int klass, const char *event)
{
    if (!cat) return;
    if (klass != NOTIFY_TAG && strcmp(event, "rename_to") != 0 && strcmp(event, "move_to") != 0)
        return;
    kv_t *kv = db_find(db, key, len);
    if (kv && kv->val->type == OBJ_TAG)
        search_tag_bind(cat, (tag_obj_t *)kv->val, db->id, key, len);
}

void searchcmd_on_swapdb(int a, int b)
{
    if (cat) search_swapdb(cat, a, b);
}

void searchcmd_cron(void)
{
    if (cat) search_cron(cat, COMPACT_BUDGET);
}

uint64_t searchcmd_tag_range(const tag_obj_t *t, const char *from, size_t flen, uint64_t count,
                             void (*emit)(void *ud, const char *name, size_t len), void *ud)
{
    return cat ? search_tag_range(cat, t, from, flen, count, emit, ud) : 0;
}

void searchcmd_info(buf_t *b)
{
    search_stats_t st = {0};
    if (cat) search_get_stats(cat, &st);
    buf_printf(b,
               "# Search\r\n"
               "search_enabled:%d\r\n"
               "search_tags:%llu\r\n"
               "search_blobs:%llu\r\n"
               "search_documents:%llu\r\n"
               "search_terms:%llu\r\n"
               "search_tokens:%llu\r\n"
               "search_postings:%llu\r\n"
               "search_dead_postings:%llu\r\n"
               "search_bytes:%llu\r\n"
               "search_index_memory:%llu\r\n"
               "search_names_memory:%llu\r\n"
               "search_indexed_bytes_total:%llu\r\n"
               "search_index_usec_total:%llu\r\n"
               "search_reads_inflight:%llu\r\n\r\n",
               srv.cfg.search_enabled, (unsigned long long)st.tags, (unsigned long long)st.blobs,
               (unsigned long long)st.docs, (unsigned long long)st.terms,
               (unsigned long long)st.tokens, (unsigned long long)st.postings,
               (unsigned long long)st.dead_postings, (unsigned long long)st.bytes,
               (unsigned long long)st.index_memory, (unsigned long long)st.names_memory,
               (unsigned long long)indexed_bytes, (unsigned long long)(index_ns / 1000),
               (unsigned long long)reads_inflight);
}

/* 0 for a tag whose key expired but was not deleted yet: queries do not see it. */
static int visible(void *ud, const char *tag, size_t tlen)
{
    db_t *db = ud;
    kv_t *kv = db_find(db, tag, tlen);
    return kv && !(kv_has_expire(kv) && db_is_expired(db, kv));
}

/* ---- argument helpers ---- */

static rx_t *rx_or_reply(client_t *c, const char *pat, size_t len)
{
    char why[256];
    rx_t *rx = rx_get(pat, len, why, sizeof(why));
    if (!rx) reply_errorf(c, "ERR invalid regex: %s", why);
    return rx;
}

static int count_or_reply(client_t *c, const resp_arg_t *a, long long *out)
{
    if (arg_ll_or_reply(c, a, out, NULL) < 0) return -1;
    if (*out < 0) {
        reply_error(c, "ERR LIMIT is negative");
        return -1;
    }
    return 0;
}

/* TQUERY BLOBS and TSEARCH reach the blobs of every tag: like SORT's BY and GET patterns they
 * need a user that may read every key (allkeys or %R~*). TQUERY TAGS lists names only, as
 * KEYS does. 0, or -1 after replying. */
static int all_keys_or_reply(client_t *c, const char *what)
{
    if (acl_check_all_keys(c, ACL_KEYS_READ)) return 0;
    reply_errorf(c,
                 "NOPERM this user has no permissions to read every key, which %s needs (it "
                 "reaches the blobs of every tag)",
                 what);
    return -1;
}

/* ---- TQUERY ---- */

enum { TQ_TAGS, TQ_BLOBS, TQ_WINDOW };

typedef struct tq_job {
    struct tq_job *next;
    client_t *c; /* NULL once the client went away */
    int kind, db;
    char *tpat, *bpat;
    size_t tlen, blen;
    long long since, until, limit; /* limit -1: none */
    search_cursor_t cur;
    buf_t names; /* records: u32 tag length, tag, u32 blob length (UINT32_MAX: none), blob */
    uint64_t total, kept;
    const char *seen; /* within one step: the last tag name checked, and whether it is live */
    int seen_ok;
} tq_job_t;

static tq_job_t *jobs;

static void put_name(buf_t *b, const char *p, size_t n)
{
    uint32_t l = (uint32_t)n;
    buf_append(b, &l, 4);
    if (p) buf_append(b, p, n);
}

static void collect(void *ud, const char *tag, size_t tlen, const char *blob, size_t blen)
{
    tq_job_t *j = ud;
    if (tag != j->seen) { /* pairs of one tag come together: one key lookup for them all */
        j->seen = tag;
        j->seen_ok = visible(&srv.db[j->db], tag, tlen);
    }
    if (!j->seen_ok) return;
    j->total++;
    if (j->limit >= 0 && j->kept >= (uint64_t)j->limit) return;
    j->kept++;
    put_name(&j->names, tag, tlen);
    if (blob)
        put_name(&j->names, blob, blen);
    else
        put_name(&j->names, NULL, UINT32_MAX);
}

static void reply_names(client_t *c, tq_job_t *j)
{
    reply_array(c, 1 + (long long)j->kept);
    reply_int(c, (long long)j->total);
    for (size_t off = 0; off < j->names.len;) {
        uint32_t tl, bl;
        memcpy(&tl, j->names.data + off, 4);
        const char *tag = j->names.data + off + 4;
        off += 4 + tl;
        memcpy(&bl, j->names.data + off, 4);
        off += 4;
        if (bl == UINT32_MAX) {
            reply_bulk(c, tag, tl);
            continue;
        }
        reply_array(c, 2);
        reply_bulk(c, tag, tl);
        reply_bulk(c, j->names.data + off, bl);
        off += bl;
    }
}

/* One step of the job; returns 1 when done. The patterns compiled fine when the command ran,
 * so they compile again (the cache may have dropped them meanwhile). */
static int tq_step(tq_job_t *j, uint64_t budget)
{
    char why[256];
    rx_t *trx = rx_get(j->tpat, j->tlen, why, sizeof(why));
    j->seen = NULL; /* names may have moved since the last step */
    if (j->kind == TQ_TAGS) return search_tags_step(cat, j->db, trx, &j->cur, budget, collect, j);
    rx_t *brx = rx_get(j->bpat, j->blen, why, sizeof(why));
    trx = rx_get(j->tpat, j->tlen, why, sizeof(why)); /* both live: the last two used */
    if (j->kind == TQ_BLOBS)
        return search_blobs_step(cat, j->db, trx, brx, &j->cur, budget, collect, j);
    return search_window_step(cat, j->db, trx, brx, j->since, j->until, &j->cur, budget, collect,
                              j);
}

static void tq_free(tq_job_t *j)
{
    search_cursor_deinit(&j->cur);
    buf_deinit(&j->names);
    xfree(j->tpat);
    xfree(j->bpat);
    xfree(j);
}

static void tq_detach(void *job)
{
    ((tq_job_t *)job)->c = NULL;
}

/* One step of every waiting query, each loop turn (executor_steps_start); 0 when none is
 * left. */
static int step_queries(void)
{
    for (tq_job_t **pp = &jobs; *pp;) {
        tq_job_t *j = *pp;
        if (j->c && !tq_step(j, STEP_NAMES)) {
            pp = &j->next;
            continue;
        }
        *pp = j->next;
        if (j->c) {
            reply_names(j->c, j);
            block_io_done(j->c);
        }
        tq_free(j);
    }
    return jobs != NULL;
}

static void tq_continue_later(client_t *c, tq_job_t *j)
{
    j->c = c;
    j->next = jobs;
    jobs = j;
    block_for_io(c, tq_detach, j);
    executor_steps_start(step_queries);
}

/* Parses SINCE, UNTIL and LIMIT from argv[from]; 0, or -1 after replying. */
static int tq_options(client_t *c, int from, tq_job_t *j)
{
    for (int i = from; i < c->argc; i += 2) {
        const resp_arg_t *a = &c->argv[i];
        int window = j->kind != TQ_TAGS && (arg_is(a, "SINCE") || arg_is(a, "UNTIL"));
        if (i + 1 >= c->argc || (!window && !arg_is(a, "LIMIT"))) {
            reply_syntax_error(c);
            return -1;
        }
        if (arg_is(a, "LIMIT")) {
            if (count_or_reply(c, &c->argv[i + 1], &j->limit) < 0) return -1;
            continue;
        }
        long long *v = arg_is(a, "SINCE") ? &j->since : &j->until;
        if (arg_ll_or_reply(c, &c->argv[i + 1], v, NULL) < 0) return -1;
        j->kind = TQ_WINDOW;
    }
    return 0;
}

void tquery_cmd(client_t *c)
{
    tq_job_t *j = xcalloc(1, sizeof(*j));
    j->limit = -1;
    j->since = LLONG_MIN;
    j->until = LLONG_MAX;
    j->db = c->db->id;
    search_cursor_init(&j->cur);
    buf_init(&j->names);
    const resp_arg_t *sub = &c->argv[1];
    int ok = 0;
    if (arg_is(sub, "TAGS")) {
        j->kind = TQ_TAGS;
        ok = rx_or_reply(c, c->argv[2].ptr, c->argv[2].len) && tq_options(c, 3, j) == 0;
    } else if (arg_is(sub, "BLOBS") && c->argc >= 4) {
        j->kind = TQ_BLOBS;
        ok = all_keys_or_reply(c, "TQUERY BLOBS") == 0 &&
             rx_or_reply(c, c->argv[2].ptr, c->argv[2].len) &&
             rx_or_reply(c, c->argv[3].ptr, c->argv[3].len) && tq_options(c, 4, j) == 0;
    } else {
        reply_syntax_error(c);
    }
    if (!ok) {
        tq_free(j);
        return;
    }
    j->tpat = xmemdup(c->argv[2].ptr, c->argv[2].len);
    j->tlen = c->argv[2].len;
    if (j->kind != TQ_TAGS) {
        j->bpat = xmemdup(c->argv[3].ptr, c->argv[3].len);
        j->blen = c->argv[3].len;
    }
    int stepped = srv.loop && !(c->flags & CLIENT_MULTI);
    if (!tq_step(j, stepped ? STEP_NAMES : UINT64_MAX)) {
        tq_continue_later(c, j);
        return;
    }
    reply_names(c, j);
    tq_free(j);
}

/* ---- TSEARCH ---- */

/* A cluster's search in two phases (the cluster client, docs/commands.md): STATS answers
 * [N, tokens, [term, df, ...]] for this node; GLOBALSTATS N tokens nterms term df ... makes
 * this node score with the sums of every node's, so that its scores are those one node
 * holding all the blobs would give. */
#define GLOBAL_TERMS_MAX 4096

typedef struct global_stats {
    bm25_global_t g;
    const resp_arg_t *terms; /* term, df, term, df ... */
    long long df[GLOBAL_TERMS_MAX];
    int n;
} global_stats_t;

static uint64_t global_df(void *ud, const char *term, size_t len)
{
    const global_stats_t *gs = ud;
    for (int i = 0; i < gs->n; i++)
        if (gs->terms[2 * i].len == len && !memcmp(gs->terms[2 * i].ptr, term, len))
            return (uint64_t)gs->df[i];
    return UINT64_MAX;
}

static int nonneg_or_reply(client_t *c, const resp_arg_t *a, long long *v)
{
    if (arg_ll_or_reply(c, a, v, NULL) < 0) return -1;
    if (*v >= 0) return 0;
    reply_error(c, "ERR GLOBALSTATS values must not be negative");
    return -1;
}

/* Parses GLOBALSTATS's arguments from argv[i] (after the word); returns the index of the
 * last one taken, or -1 after replying. */
static int global_stats_or_reply(client_t *c, int i, global_stats_t *gs)
{
    long long docs, tokens, n;
    if (i + 3 > c->argc) {
        reply_syntax_error(c);
        return -1;
    }
    if (nonneg_or_reply(c, &c->argv[i], &docs) || nonneg_or_reply(c, &c->argv[i + 1], &tokens) ||
        nonneg_or_reply(c, &c->argv[i + 2], &n))
        return -1;
    if (n > GLOBAL_TERMS_MAX || n > (c->argc - i - 3) / 2 || docs == 0) {
        reply_error(c, n > GLOBAL_TERMS_MAX || docs == 0 ? "ERR GLOBALSTATS out of range"
                                                         : "ERR syntax error");
        return -1;
    }
    gs->terms = &c->argv[i + 3];
    gs->n = (int)n;
    for (int k = 0; k < gs->n; k++)
        if (nonneg_or_reply(c, &gs->terms[2 * k + 1], &gs->df[k])) return -1;
    gs->g = (bm25_global_t){(uint64_t)docs, (uint64_t)tokens, global_df, gs};
    return i + 2 + 2 * gs->n;
}

static void stats_term(void *ud, const char *term, size_t len, uint64_t df)
{
    buf_t *b = ud;
    uint32_t l = (uint32_t)len;
    buf_append(b, &l, 4);
    buf_append(b, term, len);
    buf_append(b, &df, 8);
}

static void reply_stats(client_t *c)
{
    uint64_t docs, tokens, n = 0;
    buf_t terms;
    buf_init(&terms);
    search_term_stats(cat, c->argv[1].ptr, c->argv[1].len, stats_term, &terms, &docs, &tokens);
    for (size_t off = 0; off < terms.len; n++) {
        uint32_t l;
        memcpy(&l, terms.data + off, 4);
        off += 4 + l + 8;
    }
    reply_array(c, 3);
    reply_int(c, (long long)docs);
    reply_int(c, (long long)tokens);
    reply_array(c, (long long)(2 * n));
    for (size_t off = 0; off < terms.len;) {
        uint32_t l;
        uint64_t df;
        memcpy(&l, terms.data + off, 4);
        reply_bulk(c, terms.data + off + 4, l);
        memcpy(&df, terms.data + off + 4 + l, 8);
        reply_int(c, (long long)df);
        off += 4 + l + 8;
    }
    buf_deinit(&terms);
}

void tsearch_cmd(client_t *c)
{
    const resp_arg_t *tag = NULL, *blob = NULL;
    long long limit = 10;
    int withscores = 0, stats = 0;
    global_stats_t *gs = NULL;
    for (int i = 2; i < c->argc; i++) {
        const resp_arg_t *a = &c->argv[i];
        int more = i + 1 < c->argc;
        if (arg_is(a, "WITHSCORES")) {
            withscores = 1;
        } else if (arg_is(a, "STATS")) {
            stats = 1;
        } else if (more && arg_is(a, "GLOBALSTATS")) {
            if (!gs) gs = xmalloc(sizeof(*gs));
            if ((i = global_stats_or_reply(c, i + 1, gs)) < 0) goto done;
        } else if (more && arg_is(a, "TAG")) {
            tag = &c->argv[++i];
        } else if (more && arg_is(a, "BLOB")) {
            blob = &c->argv[++i];
        } else if (more && arg_is(a, "LIMIT")) {
            if (count_or_reply(c, &c->argv[++i], &limit) < 0) goto done;
        } else {
            reply_syntax_error(c);
            goto done;
        }
    }
    if (all_keys_or_reply(c, "TSEARCH") < 0) goto done;
    if (!srv.cfg.search_enabled) {
        reply_error(c, "ERR search is disabled (search-enabled no)");
        goto done;
    }
    if ((tag && !rx_or_reply(c, tag->ptr, tag->len)) ||
        (blob && !rx_or_reply(c, blob->ptr, blob->len)))
        goto done;
    if ((reads_inflight || tag_writes_in_flight()) && srv.loop && !(c->flags & CLIENT_MULTI)) {
        /* file-tier writes, or reads of their contents for the index, in flight: answer once
         * they are indexed, so a client finds what it wrote before */
        block_on_name(c, READS_WAITNAME, sizeof(READS_WAITNAME) - 1);
        goto done;
    }
    if (stats) {
        reply_stats(c);
        goto done;
    }
    char why[256];
    rx_t *brx = blob ? rx_get(blob->ptr, blob->len, why, sizeof(why)) : NULL;
    rx_t *trx = tag ? rx_get(tag->ptr, tag->len, why, sizeof(why)) : NULL;
    search_filter_t f = {trx, brx, visible, c->db, gs ? &gs->g : NULL};
    size_t n;
    search_hit_t *hits =
        search_query(cat, c->db->id, c->argv[1].ptr, c->argv[1].len, &f, (size_t)limit, &n);
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) {
        reply_array(c, withscores ? 3 : 2);
        reply_bulk(c, hits[i].tag, hits[i].tlen);
        reply_bulk(c, hits[i].blob, hits[i].blen);
        if (withscores) reply_double(c, hits[i].score);
    }
    xfree(hits);
done:
    xfree(gs);
}
