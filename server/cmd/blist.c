/* server/cmd/blist.c - the blocking list commands: BLPOP BRPOP BLMOVE BRPOPLPUSH BLMPOP.
 *
 * Each serves at once when a key has elements (with the building blocks of server/cmd/list.h), and
 * otherwise blocks on its keys (server/block.c) until a change to one of them lets it run
 * again, its timeout passes (null reply) or CLIENT UNBLOCK ends the wait. Inside MULTI they
 * never block: they answer as if the timeout had passed. */
#include "server/block.h"
#include "server/cmd/list.h"
#include "server/command.h"
#include "server/reply.h"
#include "server/server.h"

/* 1 if the key holds a non-empty list, 0 if it does not exist, -1 after WRONGTYPE. A blocked
 * client that runs again finds a key of another type as if it did not exist and stays
 * blocked, as Redis leaves it (MULTI; LPUSH k; DEL k; SET k v; EXEC wakes nobody). */
static int list_at(client_t *c, const resp_arg_t *key, kv_t **kv)
{
    *kv = lookup_write(c, key);
    if (!*kv) return 0;
    if ((*kv)->val->type != OBJ_LIST) {
        if (block_is_retry(c)) return 0;
        reply_wrongtype(c);
        return -1;
    }
    return 1;
}

/* Blocks c on argv[first..first+n) or, inside MULTI, replies the timeout reply now. */
static void wait_on(client_t *c, int first, int n, long long deadline, int timeout_reply)
{
    if (c->flags & CLIENT_MULTI) {
        if (timeout_reply == BLOCK_REPLY_NULL) reply_null(c);
        else reply_null_array(c);
        return;
    }
    block_on_key_range(c, first, n, deadline, timeout_reply);
}

static void bpop_generic(client_t *c, int where)
{
    long long deadline;
    if (block_timeout_or_reply(c, &c->argv[c->argc - 1], &deadline) < 0) return;
    for (int j = 1; j < c->argc - 1; j++) {
        kv_t *kv;
        int rc = list_at(c, &c->argv[j], &kv);
        if (rc < 0) return;
        if (rc > 0) {
            list_pop_and_reply(c, kv, &c->argv[j], where, -1, 1);
            return;
        }
    }
    wait_on(c, 1, c->argc - 2, deadline, BLOCK_REPLY_NULL_ARRAY);
}

static void blpop_cmd(client_t *c)
{
    bpop_generic(c, LIST_HEAD);
}

static void brpop_cmd(client_t *c)
{
    bpop_generic(c, LIST_TAIL);
}

static void bmove_generic(client_t *c, int from, int to, const resp_arg_t *timeout)
{
    long long deadline;
    if (block_timeout_or_reply(c, timeout, &deadline) < 0) return;
    kv_t *kv;
    int rc = list_at(c, &c->argv[1], &kv);
    if (rc < 0) return;
    if (rc > 0) {
        list_move_and_reply(c, kv, &c->argv[1], &c->argv[2], from, to);
        return;
    }
    wait_on(c, 1, 1, deadline, BLOCK_REPLY_NULL);
}

static void blmove_cmd(client_t *c)
{
    int from, to;
    if (list_where_or_reply(c, &c->argv[3], &from) < 0 ||
        list_where_or_reply(c, &c->argv[4], &to) < 0)
        return;
    bmove_generic(c, from, to, &c->argv[5]);
}

static void brpoplpush_cmd(client_t *c)
{
    bmove_generic(c, LIST_TAIL, LIST_HEAD, &c->argv[3]);
}

static void blmpop_cmd(client_t *c)
{
    long long deadline, numkeys, count;
    int where;
    if (block_timeout_or_reply(c, &c->argv[1], &deadline) < 0) return;
    if (list_mpop_parse_or_reply(c, 2, &numkeys, &where, &count) < 0) return;
    int rc = list_mpop_serve(c, &c->argv[3], numkeys, where, count);
    if (rc != 0) return;
    wait_on(c, 3, (int)numkeys, deadline, BLOCK_REPLY_NULL_ARRAY);
}

static int blmpop_getkeys(int argc, const resp_arg_t *argv, int *pos, int max)
{
    return list_mpop_getkeys(argc, argv, pos, max, 2);
}

#define BL(n, p, a, f, fk, lk, since_, sum, cplx, kflags)                                          \
    {                                                                                              \
        .name = n, .proc = p, .arity = a, .flags = CMD_WRITE | CMD_BLOCKING | (f),                 \
        .first_key = fk, .last_key = lk, .key_step = fk ? 1 : 0, .group = "list",                  \
        .since = since_, .summary = sum, .complexity = cplx, .key_flags = kflags                   \
    }
#define BL_CPLX "O(N) where N is the number of provided keys."

static const cmd_key_spec_t keynum_at_2[] = {CMD_KEYNUM_SPEC(2), {0}};

command_t cmds_blist[] = {
    BL("blpop", blpop_cmd, -3, CMD_NOSCRIPT, 1, -2, "2.0.0",
       "Removes and returns the first element in a list. Blocks until an element is available "
       "otherwise. Deletes the list if the last element was popped.", BL_CPLX,
       "RW access delete"),
    BL("brpop", brpop_cmd, -3, CMD_NOSCRIPT, 1, -2, "2.0.0",
       "Removes and returns the last element in a list. Blocks until an element is available "
       "otherwise. Deletes the list if the last element was popped.", BL_CPLX,
       "RW access delete"),
    BL("blmove", blmove_cmd, 6, CMD_DENYOOM | CMD_NOSCRIPT, 1, 2, "6.2.0",
       "Pops an element from a list, pushes it to another list and returns it. Blocks until an "
       "element is available otherwise. Deletes the list if the last element was moved.", "O(1)",
       "RW access delete|RW insert"),
    BL("brpoplpush", brpoplpush_cmd, 4, CMD_DENYOOM | CMD_NOSCRIPT, 1, 2, "2.2.0",
       "Pops an element from a list, pushes it to another list and returns it. Block until an "
       "element is available otherwise. Deletes the list if the last element was popped.", "O(1)",
       "RW access delete|RW insert"),
    {.name = "blmpop", .proc = blmpop_cmd, .arity = -5,
     .flags = CMD_WRITE | CMD_BLOCKING | CMD_MOVABLE_KEYS, .group = "list", .since = "7.0.0",
     .summary = "Pops the first element from one of multiple lists. Blocks until an element is "
                "available otherwise. Deletes the list if the last element was popped.",
     .complexity = "O(N+M) where N is the number of provided keys and M is the number of elements "
                   "returned.",
     .getkeys = blmpop_getkeys, .key_flags = "RW access delete", .key_specs = keynum_at_2},
    {NULL},
};
