/* test_state.c - server/cluster/state.c and route.c through a socketless client: the rules the
 * cluster bus relies on (a higher config epoch takes a slot, a slot being imported stays, the
 * keys of a lost slot go; epoch collisions and bumps; failure reports and their expiry; a node
 * deleted with its slots and reports; the minority partition failing the state) and the
 * redirections, on a node started in a fresh directory with cluster-enabled yes. */
#include "common/keyslot.h"
#include "server/client.h"
#include "server/cluster/cluster.h"
#include "server/server.h"
#include "storage/db.h"
#include "storage/slot_index.h"

#include "tests/unit/server/harness.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static client_t *C;

static void setup(void)
{
    cr_assert_eq(chdir(harness_tmpdir_make("cte-cluster")), 0);
    char *argv[] = {"cte-server", "--cluster-enabled", "yes",   "--port",
                    "30480",      "--cluster-port",    "30481", "--cluster-node-timeout",
                    "5"};
    C = harness_server_start(9, argv);
    cr_assert_not_null(cluster);
}

static void teardown(void)
{
    client_free(C);
    harness_server_stop();
    cr_assert_null(cluster);
    harness_tmpdir_remove();
}

TestSuite(cluster_state, .init = setup, .fini = teardown);

static unsigned char *bitmap_of(int from, int to)
{
    static unsigned char bits[CLUSTER_SLOTS / 8];
    memset(bits, 0, sizeof(bits));
    for (int s = from; s <= to; s++) bits[s >> 3] |= (unsigned char)(1u << (s & 7));
    return bits;
}

static const char *key_of_slot(int slot)
{
    static char key[32];
    for (int i = 0;; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        if ((int)keyslot(key, strlen(key)) == slot) return key;
    }
}

Test(cluster_state, fresh_node_saves_its_id)
{
    cluster_node_t *me = cluster->myself;
    cr_assert_eq(cluster->num_nodes, 1);
    cr_assert(cluster_id_valid(me->id, strlen(me->id)));
    cr_assert_eq(me->flags, CLUSTER_NODE_MYSELF | CLUSTER_NODE_MASTER);
    cr_assert_eq(me->port, 30480);
    cr_assert_eq(me->bus_port, 30481);
    FILE *f = fopen("nodes.conf", "r");
    cr_assert_not_null(f);
    char line[256];
    cr_assert_not_null(fgets(line, sizeof(line), f));
    fclose(f);
    cr_assert_eq(strncmp(line, me->id, 40), 0, "%s", line);
    cr_assert_eq(cluster->state, CLUSTER_FAIL);
}

Test(cluster_state, higher_epoch_takes_slots_and_lost_keys_go)
{
    cluster_node_t *me = cluster->myself,
                   *b = cluster_node_add("b"
                                         "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb",
                                         CLUSTER_NODE_MASTER);
    for (int s = 0; s < 100; s++) cluster_slot_add(me, s);
    me->config_epoch = 3;
    srv.cfg.cluster_require_full_coverage = 0;
    cluster_update_state();
    const char *k10 = key_of_slot(10);
    char cmd[64];
    snprintf(cmd, sizeof(cmd), "SET %s v", k10);
    harness_expect(C, cmd, "+OK\r\n");
    cr_assert_eq(slot_index_count(srv.db[0].slots, 10), 1);
    /* a lower or equal epoch takes nothing */
    cluster_apply_slots(b, 3, bitmap_of(0, 49));
    cr_assert_eq(cluster->slots[10], me);
    /* a slot being imported stays */
    cluster->importing_from[20] = b;
    cluster_apply_slots(b, 4, bitmap_of(0, 49));
    cr_assert_eq(cluster->slots[10], b);
    cr_assert_eq(cluster->slots[49], b);
    cr_assert_eq(cluster->slots[20], me);
    cr_assert_eq(cluster->slots[50], me);
    cr_assert_eq(b->num_slots, 49);
    cr_assert_eq(slot_index_count(srv.db[0].slots, 10), 0, "the lost slot's key is deleted");
    cr_assert_null(db_find(&srv.db[0], k10, strlen(k10)));
    char moved[96]; /* b has no address yet */
    snprintf(moved, sizeof(moved), "-MOVED 10 :0\r\n");
    snprintf(cmd, sizeof(cmd), "GET %s", k10);
    harness_expect(C, cmd, moved);
}

Test(cluster_state, epoch_collision_and_bump)
{
    cluster_node_t *me = cluster->myself;
    char low[41], high[41];
    memset(low, '0', 40);
    memset(high, 'f', 40);
    low[40] = high[40] = '\0';
    cluster_node_t *lo = cluster_node_add(low, CLUSTER_NODE_MASTER);
    cluster_node_t *hi = cluster_node_add(high, CLUSTER_NODE_MASTER);
    me->config_epoch = lo->config_epoch = hi->config_epoch = 5;
    cluster->current_epoch = 5;
    cluster_handle_epoch_collision(lo); /* its id sorts before ours: it moves on, we keep 5 */
    cr_assert_eq(me->config_epoch, 5);
    cluster_handle_epoch_collision(hi); /* after ours: we (the smaller id) move on */
    cr_assert_eq(me->config_epoch, 6);
    cr_assert_eq(cluster->current_epoch, 6);
    cr_assert_eq(cluster_bump_epoch_without_consensus(), 0); /* already the greatest */
    hi->config_epoch = 9;
    cr_assert_eq(cluster_max_epoch(), 9);
    cr_assert_eq(cluster_bump_epoch_without_consensus(), 1);
    cr_assert_eq(me->config_epoch, 7); /* current_epoch + 1, as Redis */
}

Test(cluster_state, failure_reports_expire_and_go_with_their_node)
{
    cluster_node_t *b = cluster_node_add(NULL, CLUSTER_NODE_MASTER);
    cluster_node_t *r1 = cluster_node_add(NULL, CLUSTER_NODE_MASTER);
    cluster_node_t *r2 = cluster_node_add(NULL, CLUSTER_NODE_MASTER);
    cr_assert_eq(cluster_node_add_failure_report(b, r1), 1);
    cr_assert_eq(cluster_node_add_failure_report(b, r1), 0); /* refreshed */
    cr_assert_eq(cluster_node_add_failure_report(b, r2), 1);
    cr_assert_eq(cluster_node_failure_reports(b), 2);
    cluster_node_delete(r2);
    cr_assert_eq(cluster_node_failure_reports(b), 1);
    cr_assert_eq(cluster_node_del_failure_report(b, r1), 1);
    cr_assert_eq(cluster_node_failure_reports(b), 0);
    cluster_node_add_failure_report(b, r1);
    usleep(20 * 1000); /* node timeout 5 ms: reports last 10 ms */
    cr_assert_eq(cluster_node_failure_reports(b), 0);
    cr_assert_eq(cluster->num_nodes, 3);
}

Test(cluster_state, deleted_node_frees_its_slots_and_migrations)
{
    cluster_node_t *me = cluster->myself, *b = cluster_node_add(NULL, CLUSTER_NODE_MASTER);
    cluster_slot_add(b, 5);
    cluster_slot_add(me, 6);
    cluster->migrating_to[6] = b;
    cluster->importing_from[7] = b;
    cluster_node_delete(b);
    cr_assert_null(cluster->slots[5]);
    cr_assert_null(cluster->migrating_to[6]);
    cr_assert_null(cluster->importing_from[7]);
    cr_assert_eq(cluster->slots[6], me);
    cr_assert_eq(cluster->num_nodes, 1);
}

Test(cluster_state, state_ok_needs_coverage_and_a_majority)
{
    cluster_node_t *me = cluster->myself, *b = cluster_node_add(NULL, CLUSTER_NODE_MASTER);
    cluster_node_t *c2 = cluster_node_add(NULL, CLUSTER_NODE_MASTER);
    for (int s = 0; s < 6000; s++) cluster_slot_add(me, s);
    for (int s = 6000; s < 12000; s++) cluster_slot_add(b, s);
    cluster_update_state();
    cr_assert_eq(cluster->state, CLUSTER_FAIL); /* 12000..16383 unassigned */
    for (int s = 12000; s < CLUSTER_SLOTS; s++) cluster_slot_add(c2, s);
    cluster_update_state();
    cr_assert_eq(cluster->state, CLUSTER_OK);
    cr_assert_eq(cluster->size, 3);
    cluster_node_mark_pfail(b);
    cluster_update_state();
    cr_assert_eq(cluster->state, CLUSTER_OK); /* 2 of 3 reachable */
    cluster_node_mark_pfail(c2);
    cluster_update_state();
    cr_assert_eq(cluster->state, CLUSTER_FAIL); /* minority */
    cluster_node_clear_fail(c2);
    cluster_node_mark_fail(b, 1);
    cr_assert_eq(b->flags & (CLUSTER_NODE_FAIL | CLUSTER_NODE_PFAIL), CLUSTER_NODE_FAIL);
    cluster_update_state();
    cr_assert_eq(cluster->state, CLUSTER_FAIL); /* b's slots have a failed owner */
    srv.cfg.cluster_require_full_coverage = 0;
    cluster_update_state();
    cr_assert_eq(cluster->state, CLUSTER_OK);
}

Test(cluster_state, handshake_validates_the_address)
{
    cr_assert_eq(cluster_start_handshake("not-an-ip", 7000, 17000), -EINVAL);
    cr_assert_eq(cluster_start_handshake("127.0.0.1", 0, 17000), -EINVAL);
    cr_assert_eq(cluster_start_handshake("::1", 7000, 17000), 0);
    cr_assert_eq(cluster_start_handshake("0:0::1", 7000, 17000), -EALREADY); /* normalized */
    cr_assert_eq(cluster->num_nodes, 2);
    cluster_node_t *n = cluster->nodes[1];
    cr_assert_str_eq(n->ip, "::1");
    cr_assert_eq(n->flags, CLUSTER_NODE_HANDSHAKE | CLUSTER_NODE_MEET);
    char id[41];
    memset(id, 'c', 40);
    id[40] = '\0';
    cluster_node_rename(n, id);
    cr_assert_eq(n->flags, CLUSTER_NODE_MEET);
    cr_assert_eq(cluster_node_lookup(id, 40), n);
    cluster_ban_add(id);
    cr_assert(cluster_ban_contains(id));
}
