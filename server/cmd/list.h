/* server/cmd/list.h - the list commands' building blocks that the blocking list commands reuse.
 *
 * BLPOP, BRPOP, BLMOVE, BRPOPLPUSH and BLMPOP do what LPOP, LMOVE and LMPOP do once a key has
 * elements; these functions are that part, with the replies, keyspace events and key deletion
 * of Redis 7.0. They run on the loop thread, inside a command (c->db is the database, key
 * views must stay valid during the call; they may point into the keyspace entry). */
#ifndef CTE_SERVER_CMD_LIST_H
#define CTE_SERVER_CMD_LIST_H

#include "server/client.h"
#include "storage/t_list.h"

/* Parses LEFT / RIGHT (any case) into LIST_HEAD / LIST_TAIL. 0, or -1 with "ERR syntax error"
 * replied. */
int list_where_or_reply(client_t *c, const resp_arg_t *a, int *where);

/* Pops from kv, which must hold a non-empty list, at where, and replies:
 *   count < 0   one element as a bulk string (LPOP key; BLPOP with with_key)
 *   count >= 1  an array of up to count elements, in pop order (LPOP key count, LMPOP)
 * with_key wraps the reply as [key, reply] (BLPOP: [key, element]; LMPOP: [key, [elements]]).
 * Sends "lpop"/"rpop" for key, and deletes the key ("del") when the list became empty.
 * Returns 1 if the key was deleted, else 0. */
int list_pop_and_reply(client_t *c, kv_t *kv, const resp_arg_t *key, int where, long long count,
                       int with_key);

/* LMOVE once the source kv holds a non-empty list: checks the destination (WRONGTYPE replied
 * and -1 returned, nothing changed), moves one element from src's wherefrom end to dst's
 * whereto end (creating dst), replies it as a bulk string and sends "lpush"/"rpush" for dst,
 * "lpop"/"rpop" (and "del" when it became empty) for src. 0 on success; -1 also when memory
 * for a huge element is short (OOM replied, nothing changed). */
int list_move_and_reply(client_t *c, kv_t *src, const resp_arg_t *srckey, const resp_arg_t *dstkey,
                        int wherefrom, int whereto);

/* Parses "numkeys key... LEFT|RIGHT [COUNT count]" starting at argv[numkeys_idx] (LMPOP: 1,
 * BLMPOP: 2), with Redis's errors. 0 with the keys at c->argv + numkeys_idx + 1, or -1
 * replied. count is 1 when not given. */
int list_mpop_parse_or_reply(client_t *c, int numkeys_idx, long long *numkeys, int *where,
                             long long *count);

/* Pops up to count elements from the first of keys that exists, replying [key, [elements]].
 * 1 if served, 0 if no key exists (nothing replied: LMPOP replies a null array, BLMPOP
 * blocks), -1 if a key met first holds another type (WRONGTYPE replied). */
int list_mpop_serve(client_t *c, const resp_arg_t *keys, long long numkeys, int where,
                    long long count);

/* Key positions for the numkeys form (COMMAND GETKEYS, cluster checks): the keys counted by
 * argv[numkeys_idx]. Returns how many were written to pos (at most max). */
int list_mpop_getkeys(int argc, const resp_arg_t *argv, int *pos, int max, int numkeys_idx);

#endif
