/* server/cmd/list.c - the non-blocking list commands: LPUSH RPUSH LPUSHX RPUSHX LPOP RPOP LLEN
 * LRANGE LINDEX LSET LREM LTRIM LINSERT LPOS LMOVE RPOPLPUSH LMPOP.
 *
 * Replies, errors, argument order of checks and keyspace events as Redis 7.0 (t_list.c):
 * arguments that Redis parses before the lookup are parsed first here too, so a bad argument
 * wins over a missing key or WRONGTYPE exactly when it does in Redis. A list never lives empty
 * in the keyspace: the command that removes its last element deletes the key and sends "del".
 * The parts that the blocking commands reuse (popping with a reply, LMOVE's move, LMPOP's
 * parsing and serving) are exported through server/cmd/list.h.
 *
 * Read commands (LLEN LRANGE LINDEX LPOS) count keyspace hits and misses as Redis's
 * lookupKeyRead; write commands look up without counting, as lookupKeyWrite. Loop thread. */
#include "server/cmd/list.h"

#include "common/alloc.h"
#include "common/util.h"
#include "server/block.h"
#include "server/command.h"
#include "server/reply.h"
#include "server/server.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ERR_OOM "OOM command not allowed when used memory > 'maxmemory'."
#define ERR_TOO_LARGE "ERR Element too large"
#define ERR_INDEX_RANGE "ERR index out of range"
#define ERR_RANK_ZERO                                                                              \
    "ERR RANK can't be zero: use 1 to start from the first match, 2 from the second ... or use "   \
    "negative to start from the end of the list"

/* ---- lookups and events ---- */

/* 1 (WRONGTYPE replied) if kv exists with another type. */
static inline int wrongtype(client_t *c, const kv_t *kv)
{
    if (kv && kv->val->type != OBJ_LIST) {
        reply_wrongtype(c);
        return 1;
    }
    return 0;
}

static inline list_t *as_list(kv_t *kv)
{
    return list_of(kv->val);
}

static inline void changed(client_t *c, const resp_arg_t *key, int klass, const char *event)
{
    server_key_changed(c, c->db, key->ptr, key->len, klass, event);
}

/* Deletes key (whose list is empty) with its "del" event; the event goes first because key may
 * point into the entry. */
static void delete_empty(client_t *c, kv_t *kv, const resp_arg_t *key)
{
    changed(c, key, NOTIFY_GENERIC, "del");
    db_delete_kv(c->db, kv);
}

/* Redis's listElementsRemoved: the pop event, then the key deleted if empty. 1 if deleted. */
static int elements_removed(client_t *c, kv_t *kv, const resp_arg_t *key, int where)
{
    changed(c, key, NOTIFY_LIST, where == LIST_HEAD ? "lpop" : "rpop");
    if (list_len(as_list(kv)) > 0) return 0;
    delete_empty(c, kv, key);
    return 1;
}

/* n elements from index start towards dir, as an array. */
static void reply_range(client_t *c, const list_t *l, long long start, long long n, int dir)
{
    list_iter_t it;
    list_entry_t e;
    reply_array(c, n);
    list_iter_init(&it, l, start, dir);
    while (n-- > 0 && !reply_stopped(c) && list_iter_next(&it, &e)) reply_bulk(c, e.p, e.len);
}

static int too_large_or_reply(client_t *c, const resp_arg_t *a)
{
    if (a->len <= LIST_MAX_ELEMENT) return 0;
    reply_error(c, ERR_TOO_LARGE);
    return -1;
}

int list_where_or_reply(client_t *c, const resp_arg_t *a, int *where)
{
    if (arg_is(a, "right")) {
        *where = LIST_TAIL;
    } else if (arg_is(a, "left")) {
        *where = LIST_HEAD;
    } else {
        reply_syntax_error(c);
        return -1;
    }
    return 0;
}

/* ---- push ---- */

static void push_generic(client_t *c, int where, int xx)
{
    const resp_arg_t *key = &c->argv[1];
    for (int j = 2; j < c->argc; j++)
        if (too_large_or_reply(c, &c->argv[j])) return;
    kv_t *kv = lookup_write(c, key);
    if (wrongtype(c, kv)) return;
    if (!kv && xx) {
        reply_int(c, 0);
        return;
    }
    list_t *l = kv ? as_list(kv) : list_new();
    int oom = 0;
    for (int j = 2; j < c->argc && !oom; j++)
        oom = list_push(l, where, c->argv[j].ptr, c->argv[j].len) != 0;
    if (list_len(l) == 0) { /* a new list whose first push failed */
        list_free(l);
        reply_error(c, ERR_OOM);
        return;
    }
    if (!kv) db_add(c->db, key->ptr, key->len, list_obj(l));
    if (oom)
        reply_error(c, ERR_OOM);
    else
        reply_int(c, (long long)list_len(l));
    changed(c, key, NOTIFY_LIST, where == LIST_HEAD ? "lpush" : "rpush");
}

static void lpush_cmd(client_t *c)
{
    push_generic(c, LIST_HEAD, 0);
}

static void rpush_cmd(client_t *c)
{
    push_generic(c, LIST_TAIL, 0);
}

static void lpushx_cmd(client_t *c)
{
    push_generic(c, LIST_HEAD, 1);
}

static void rpushx_cmd(client_t *c)
{
    push_generic(c, LIST_TAIL, 1);
}

/* ---- pop ---- */

int list_pop_and_reply(client_t *c, kv_t *kv, const resp_arg_t *key, int where, long long count,
                       int with_key)
{
    list_t *l = as_list(kv);
    size_t n = 1;
    if (with_key) {
        reply_array(c, 2);
        reply_bulk(c, key->ptr, key->len);
    }
    if (count < 0) {
        list_entry_t e;
        list_peek(l, where, &e);
        reply_bulk(c, e.p, e.len);
    } else {
        n = (unsigned long long)count < list_len(l) ? (size_t)count : list_len(l);
        reply_range(c, l, where == LIST_HEAD ? 0 : -1, (long long)n,
                    where == LIST_HEAD ? LIST_TAIL : LIST_HEAD);
    }
    list_drop(l, where, n);
    return elements_removed(c, kv, key, where);
}

static void pop_generic(client_t *c, int where)
{
    long long count = 0;
    int hascount = c->argc == 3;
    if (c->argc > 3) {
        reply_arity_error(c);
        return;
    }
    if (hascount && arg_range_or_reply(c, &c->argv[2], 0, LLONG_MAX, &count, ERR_NOT_POSITIVE))
        return;
    kv_t *kv = lookup_write(c, &c->argv[1]);
    if (!kv) {
        if (hascount)
            reply_null_array(c);
        else
            reply_null(c);
        return;
    }
    if (wrongtype(c, kv)) return;
    if (hascount && count == 0) {
        reply_array(c, 0);
        return;
    }
    list_pop_and_reply(c, kv, &c->argv[1], where, hascount ? count : -1, 0);
}

static void lpop_cmd(client_t *c)
{
    pop_generic(c, LIST_HEAD);
}

static void rpop_cmd(client_t *c)
{
    pop_generic(c, LIST_TAIL);
}

/* ---- reads ---- */

static void llen_cmd(client_t *c)
{
    kv_t *kv = lookup_read(c, &c->argv[1]);
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    if (wrongtype(c, kv)) return;
    reply_int(c, (long long)list_len(as_list(kv)));
}

static void lrange_cmd(client_t *c)
{
    long long start, end;
    if (arg_ll_or_reply(c, &c->argv[2], &start, NULL) ||
        arg_ll_or_reply(c, &c->argv[3], &end, NULL))
        return;
    kv_t *kv = lookup_read(c, &c->argv[1]);
    if (!kv) {
        reply_array(c, 0);
        return;
    }
    if (wrongtype(c, kv)) return;
    list_t *l = as_list(kv);
    long long llen = (long long)list_len(l);
    if (start < 0) start += llen;
    if (end < 0) end += llen;
    if (start < 0) start = 0;
    if (start > end || start >= llen) {
        reply_array(c, 0);
        return;
    }
    if (end >= llen) end = llen - 1;
    if (reply_fits_or_reply(c, (unsigned long long)(end - start + 1), REPLY_MIN_BULK) < 0) return;
    reply_range(c, l, start, end - start + 1, LIST_TAIL);
}

static void lindex_cmd(client_t *c)
{
    kv_t *kv = lookup_read(c, &c->argv[1]);
    if (!kv) {
        reply_null(c);
        return;
    }
    if (wrongtype(c, kv)) return;
    long long index;
    if (arg_ll_or_reply(c, &c->argv[2], &index, NULL)) return;
    list_entry_t e;
    if (list_index(as_list(kv), index, &e))
        reply_bulk(c, e.p, e.len);
    else
        reply_null(c);
}

/* LPOS key element [RANK rank] [COUNT num-matches] [MAXLEN len]. The arithmetic on rank wraps
 * as Redis 7.0's does, so RANK -9223372036854775808 behaves as it does there (every match,
 * from the tail). */
static void lpos_cmd(client_t *c)
{
    long long rank = 1, count = -1, maxlen = 0;
    for (int j = 3; j < c->argc; j++) {
        const resp_arg_t *opt = &c->argv[j];
        int more = j + 1 < c->argc;
        if (arg_is(opt, "RANK") && more) {
            if (arg_ll_or_reply(c, &c->argv[++j], &rank, NULL)) return;
            if (rank == 0) {
                reply_error(c, ERR_RANK_ZERO);
                return;
            }
        } else if (arg_is(opt, "COUNT") && more) {
            if (arg_range_or_reply(c, &c->argv[++j], 0, LLONG_MAX, &count,
                                   "ERR COUNT can't be negative"))
                return;
        } else if (arg_is(opt, "MAXLEN") && more) {
            if (arg_range_or_reply(c, &c->argv[++j], 0, LLONG_MAX, &maxlen,
                                   "ERR MAXLEN can't be negative"))
                return;
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    int dir = LIST_TAIL;
    if (rank < 0) {
        rank = (long long)(0ULL - (unsigned long long)rank);
        dir = LIST_HEAD;
    }
    kv_t *kv = lookup_read(c, &c->argv[1]);
    if (!kv) {
        if (count != -1)
            reply_array(c, 0);
        else
            reply_null(c);
        return;
    }
    if (wrongtype(c, kv)) return;

    const list_t *l = as_list(kv);
    list_needle_t nd;
    list_needle_init(&nd, c->argv[2].ptr, c->argv[2].len);
    size_t handle = count != -1 ? reply_defer(c) : 0;
    list_iter_t it;
    list_iter_init(&it, l, dir == LIST_TAIL ? 0 : -1, dir);
    long long scanned = 0, matches = 0, matchindex = -1, arraylen = 0;
    int r;
    while ((maxlen == 0 || scanned < maxlen) && (r = list_iter_match(&it, &nd)) >= 0) {
        if (r) {
            matches++;
            matchindex = it.index;
            if (matches >= rank) {
                if (count == -1) break;
                arraylen++;
                reply_int(c, matchindex);
                unsigned long long got = (unsigned long long)matches - (unsigned long long)rank + 1;
                if (count && (long long)got >= count) break;
            }
        }
        scanned++;
        matchindex = -1;
    }
    if (count != -1)
        reply_defer_finish(c, handle, '*', arraylen);
    else if (matchindex != -1)
        reply_int(c, matchindex);
    else
        reply_null(c);
}

/* ---- writes by index and value ---- */

static void lset_cmd(client_t *c)
{
    kv_t *kv = lookup_write(c, &c->argv[1]);
    if (!kv) {
        reply_error(c, ERR_NO_KEY);
        return;
    }
    if (wrongtype(c, kv)) return;
    long long index;
    if (arg_ll_or_reply(c, &c->argv[2], &index, NULL)) return;
    if (too_large_or_reply(c, &c->argv[3])) return;
    int r = list_set(as_list(kv), index, c->argv[3].ptr, c->argv[3].len);
    if (r == 0) {
        reply_error(c, ERR_INDEX_RANGE);
    } else if (r < 0) {
        reply_error(c, ERR_OOM);
    } else {
        reply_ok(c);
        changed(c, &c->argv[1], NOTIFY_LIST, "lset");
    }
}

static void lrem_cmd(client_t *c)
{
    long long count;
    if (arg_ll_or_reply(c, &c->argv[2], &count, NULL)) return;
    kv_t *kv = lookup_write(c, &c->argv[1]);
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    if (wrongtype(c, kv)) return;
    list_needle_t nd;
    list_needle_init(&nd, c->argv[3].ptr, c->argv[3].len);
    long long removed = list_remove(as_list(kv), &nd, count);
    if (removed) changed(c, &c->argv[1], NOTIFY_LIST, "lrem");
    if (list_len(as_list(kv)) == 0) delete_empty(c, kv, &c->argv[1]);
    reply_int(c, removed);
}

static void ltrim_cmd(client_t *c)
{
    long long start, end;
    if (arg_ll_or_reply(c, &c->argv[2], &start, NULL) ||
        arg_ll_or_reply(c, &c->argv[3], &end, NULL))
        return;
    kv_t *kv = lookup_write(c, &c->argv[1]);
    if (!kv) {
        reply_ok(c);
        return;
    }
    if (wrongtype(c, kv)) return;
    list_t *l = as_list(kv);
    long long llen = (long long)list_len(l), ltrim, rtrim;
    if (start < 0) start += llen;
    if (end < 0) end += llen;
    if (start < 0) start = 0;
    if (start > end || start >= llen) {
        ltrim = llen;
        rtrim = 0;
    } else {
        if (end >= llen) end = llen - 1;
        ltrim = start;
        rtrim = llen - end - 1;
    }
    list_drop(l, LIST_HEAD, (size_t)ltrim);
    list_drop(l, LIST_TAIL, (size_t)rtrim);
    changed(c, &c->argv[1], NOTIFY_LIST, "ltrim");
    if (list_len(l) == 0) delete_empty(c, kv, &c->argv[1]);
    reply_ok(c);
}

static void linsert_cmd(client_t *c)
{
    int after;
    if (arg_is(&c->argv[2], "after")) {
        after = 1;
    } else if (arg_is(&c->argv[2], "before")) {
        after = 0;
    } else {
        reply_syntax_error(c);
        return;
    }
    if (too_large_or_reply(c, &c->argv[4])) return;
    kv_t *kv = lookup_write(c, &c->argv[1]);
    if (!kv) {
        reply_int(c, 0);
        return;
    }
    if (wrongtype(c, kv)) return;
    list_t *l = as_list(kv);
    list_needle_t pivot;
    list_needle_init(&pivot, c->argv[3].ptr, c->argv[3].len);
    int r = list_insert(l, &pivot, after, c->argv[4].ptr, c->argv[4].len);
    if (r == 0) {
        reply_int(c, -1);
    } else if (r < 0) {
        reply_error(c, ERR_OOM);
    } else {
        changed(c, &c->argv[1], NOTIFY_LIST, "linsert");
        reply_int(c, (long long)list_len(l));
    }
}

/* ---- moving between lists ---- */

/* Pushes p[0..len) at dstkey's whereto end, creating the list. dst is its entry or NULL.
 * 0, or -1 on out-of-memory (nothing changed). */
static int move_push(client_t *c, kv_t *dst, const resp_arg_t *dstkey, int whereto, const char *p,
                     size_t len)
{
    list_t *l = dst ? as_list(dst) : list_new();
    if (list_push(l, whereto, p, len) != 0) {
        if (!dst) list_free(l);
        return -1;
    }
    if (!dst) db_add(c->db, dstkey->ptr, dstkey->len, list_obj(l));
    return 0;
}

int list_move_and_reply(client_t *c, kv_t *src, const resp_arg_t *srckey, const resp_arg_t *dstkey,
                        int wherefrom, int whereto)
{
    kv_t *dst = lookup_write(c, dstkey);
    if (wrongtype(c, dst)) return -1;
    list_t *sl = as_list(src);
    list_entry_t e;
    list_peek(sl, wherefrom, &e);
    if (dst != src) {
        /* the view into src stays valid while dst changes */
        if (move_push(c, dst, dstkey, whereto, e.p, e.len) != 0) {
            reply_error(c, ERR_OOM);
            return -1;
        }
        reply_bulk(c, e.p, e.len);
        list_drop(sl, wherefrom, 1);
    } else {
        /* rotating one list: the push may move the node the view points into */
        char small[128];
        char *copy = e.len <= sizeof(small) ? small : try_malloc(e.len);
        if (!copy || list_push(sl, whereto, memcpy(copy, e.p, e.len), e.len) != 0) {
            if (copy && copy != small) xfree(copy);
            reply_error(c, ERR_OOM);
            return -1;
        }
        list_drop(sl, wherefrom, 1);
        reply_bulk(c, copy, e.len);
        if (copy != small) xfree(copy);
    }
    changed(c, dstkey, NOTIFY_LIST, whereto == LIST_HEAD ? "lpush" : "rpush");
    elements_removed(c, src, srckey, wherefrom);
    return 0;
}

static void lmove_generic(client_t *c, int wherefrom, int whereto)
{
    kv_t *src = lookup_write(c, &c->argv[1]);
    if (!src) {
        reply_null(c);
        return;
    }
    if (wrongtype(c, src)) return;
    list_move_and_reply(c, src, &c->argv[1], &c->argv[2], wherefrom, whereto);
}

static void lmove_cmd(client_t *c)
{
    int wherefrom, whereto;
    if (list_where_or_reply(c, &c->argv[3], &wherefrom) ||
        list_where_or_reply(c, &c->argv[4], &whereto))
        return;
    lmove_generic(c, wherefrom, whereto);
}

static void rpoplpush_cmd(client_t *c)
{
    lmove_generic(c, LIST_TAIL, LIST_HEAD);
}

/* ---- LMPOP ---- */

int list_mpop_parse_or_reply(client_t *c, int numkeys_idx, long long *numkeys, int *where,
                             long long *count)
{
    if (arg_range_or_reply(c, &c->argv[numkeys_idx], 1, LLONG_MAX, numkeys,
                           "ERR numkeys should be greater than 0"))
        return -1;
    if (*numkeys > (long long)c->argc - numkeys_idx - 2) {
        reply_syntax_error(c);
        return -1;
    }
    int where_idx = numkeys_idx + (int)*numkeys + 1;
    if (list_where_or_reply(c, &c->argv[where_idx], where)) return -1;
    *count = -1;
    for (int j = where_idx + 1; j < c->argc; j++) {
        if (*count == -1 && arg_is(&c->argv[j], "COUNT") && j + 1 < c->argc) {
            if (arg_range_or_reply(c, &c->argv[++j], 1, LLONG_MAX, count,
                                   "ERR count should be greater than 0"))
                return -1;
        } else {
            reply_syntax_error(c);
            return -1;
        }
    }
    if (*count == -1) *count = 1;
    return 0;
}

int list_mpop_serve(client_t *c, const resp_arg_t *keys, long long numkeys, int where,
                    long long count)
{
    for (long long j = 0; j < numkeys; j++) {
        kv_t *kv = lookup_write(c, &keys[j]);
        if (!kv) continue;
        /* a BLMPOP woken for a key that holds another type by now stays blocked, as in Redis */
        if (kv->val->type != OBJ_LIST && block_is_retry(c)) continue;
        if (wrongtype(c, kv)) return -1;
        list_pop_and_reply(c, kv, &keys[j], where, count, 1);
        return 1;
    }
    return 0;
}

static void lmpop_cmd(client_t *c)
{
    long long numkeys, count;
    int where;
    if (list_mpop_parse_or_reply(c, 1, &numkeys, &where, &count)) return;
    if (list_mpop_serve(c, &c->argv[2], numkeys, where, count) == 0) reply_null_array(c);
}

int list_mpop_getkeys(int argc, const resp_arg_t *argv, int *pos, int max, int numkeys_idx)
{
    if (numkeys_idx >= argc) return 0;
    char buf[32];
    const resp_arg_t *a = &argv[numkeys_idx];
    size_t n = a->len < sizeof(buf) - 1 ? a->len : sizeof(buf) - 1;
    memcpy(buf, a->ptr, n);
    buf[n] = '\0';
    long long num = atoll(buf); /* Redis's getkeys procs read numkeys with atoi */
    if (num < 1 || num > argc - numkeys_idx - 1) return 0;
    int k = 0;
    for (long long i = 0; i < num && k < max; i++) pos[k++] = numkeys_idx + 1 + (int)i;
    return k;
}

static int lmpop_getkeys(int argc, const resp_arg_t *argv, int *pos, int max)
{
    return list_mpop_getkeys(argc, argv, pos, max, 1);
}

/* ---- the table ---- */

#define RO CMD_READONLY
#define RW CMD_WRITE
#define PUSH_CPLX                                                                                  \
    "O(1) for each element added, so O(N) to add N elements when the command is called with "      \
    "multiple arguments."

static const cmd_key_spec_t keynum_at_1[] = {CMD_KEYNUM_SPEC(1), {0}};

command_t cmds_list[] = {
    CMD_ROW("lpush", lpush_cmd, -3, RW | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "list", "1.0.0",
            "Prepend one or multiple elements to a list", PUSH_CPLX, .key_flags = "RW insert"),
    CMD_ROW("rpush", rpush_cmd, -3, RW | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "list", "1.0.0",
            "Append one or multiple elements to a list", PUSH_CPLX, .key_flags = "RW insert"),
    CMD_ROW("lpushx", lpushx_cmd, -3, RW | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "list", "2.2.0",
            "Prepend an element to a list, only if the list exists", PUSH_CPLX,
            .key_flags = "RW insert"),
    CMD_ROW("rpushx", rpushx_cmd, -3, RW | CMD_DENYOOM | CMD_FAST, 1, 1, 1, "list", "2.2.0",
            "Append an element to a list, only if the list exists", PUSH_CPLX,
            .key_flags = "RW insert"),
    CMD_ROW("lpop", lpop_cmd, -2, RW | CMD_FAST, 1, 1, 1, "list", "1.0.0",
            "Remove and get the first elements in a list",
            "O(N) where N is the number of elements returned", .key_flags = "RW access delete"),
    CMD_ROW("rpop", rpop_cmd, -2, RW | CMD_FAST, 1, 1, 1, "list", "1.0.0",
            "Remove and get the last elements in a list",
            "O(N) where N is the number of elements returned", .key_flags = "RW access delete"),
    CMD_ROW("llen", llen_cmd, 2, RO | CMD_FAST, 1, 1, 1, "list", "1.0.0",
            "Get the length of a list", "O(1)", .key_flags = "RO"),
    CMD_ROW(
        "lrange", lrange_cmd, 4, RO, 1, 1, 1, "list", "1.0.0",
        "Get a range of elements from a list",
        "O(S+N) where S is the distance of start offset from HEAD for small lists, from nearest "
        "end (HEAD or TAIL) for large lists; and N is the number of elements in the specified "
        "range."),
    CMD_ROW(
        "lindex", lindex_cmd, 3, RO, 1, 1, 1, "list", "1.0.0",
        "Get an element from a list by its index",
        "O(N) where N is the number of elements to traverse to get to the element at index. This "
        "makes asking for the first or the last element of the list O(1)."),
    CMD_ROW(
        "lset", lset_cmd, 4, RW | CMD_DENYOOM, 1, 1, 1, "list", "1.0.0",
        "Set the value of an element in a list by its index",
        "O(N) where N is the length of the list. Setting either the first or the last element of "
        "the list is O(1)."),
    CMD_ROW("lrem", lrem_cmd, 4, RW, 1, 1, 1, "list", "1.0.0", "Remove elements from a list",
            "O(N+M) where N is the length of the list and M is the number of elements removed.",
            .key_flags = "RW delete"),
    CMD_ROW("ltrim", ltrim_cmd, 4, RW, 1, 1, 1, "list", "1.0.0",
            "Trim a list to the specified range",
            "O(N) where N is the number of elements to be removed by the operation.",
            .key_flags = "RW delete"),
    CMD_ROW(
        "linsert", linsert_cmd, 5, RW | CMD_DENYOOM, 1, 1, 1, "list", "2.2.0",
        "Insert an element before or after another element in a list",
        "O(N) where N is the number of elements to traverse before seeing the value pivot. This "
        "means that inserting somewhere on the left end on the list (head) can be considered "
        "O(1) and inserting somewhere on the right end (tail) is O(N).", .key_flags = "RW insert"),
    CMD_ROW(
        "lpos", lpos_cmd, -3, RO, 1, 1, 1, "list", "6.0.6",
        "Return the index of matching elements on a list",
        "O(N) where N is the number of elements in the list, for the average case. When "
        "searching for elements near the head or the tail of the list, or when the MAXLEN option "
        "is provided, the command may run in constant time."),
    CMD_ROW("lmove", lmove_cmd, 5, RW | CMD_DENYOOM, 1, 2, 1, "list", "6.2.0",
            "Pop an element from a list, push it to another list and return it", "O(1)",
            .key_flags = "RW access delete|RW insert"),
    CMD_ROW("rpoplpush", rpoplpush_cmd, 3, RW | CMD_DENYOOM, 1, 2, 1, "list", "1.2.0",
            "Remove the last element in a list, prepend it to another list and return it", "O(1)",
            .key_flags = "RW access delete|RW insert"),
    CMD_ROW(
        "lmpop", lmpop_cmd, -4, RW | CMD_MOVABLE_KEYS, 0, 0, 0, "list", "7.0.0",
        "Pop elements from a list",
        "O(N+M) where N is the number of provided keys and M is the number of elements returned.",
        .getkeys = lmpop_getkeys, .key_flags = "RW access delete", .key_specs = keynum_at_1),
    {NULL},
};
