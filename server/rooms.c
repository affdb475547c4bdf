/* rooms.c - the composition root: hands every room of server/ to the core (server/hooks.h).
 *
 * With main.c, the only file that includes the command groups (cmd/), persistence (persist/)
 * and the core together: the core itself calls them only through what is registered here.
 * Call server_rooms_register() before server_init() (main and the unit-test harness do). */
#include "server/rooms.h"

#include "server/acl.h"
#include "server/cluster/cluster.h"
#include "server/cmd/cmd.h"
#include "server/cmd/search.h"
#include "server/cmd/tag.h"
#include "server/hooks.h"
#include "server/net/shm.h"
#include "server/persist/aof.h"
#include "server/tracking.h"
#include "server/persist/rewrite.h"
#include "server/server.h"
#include "server/script/script.h"

#include <string.h>

static int aof_setting_changed(const char *name, char *err, size_t errlen)
{
    return strcmp(name, "appendonly") ? 0 : aof_config_changed(err, errlen);
}

static const char *aof_write_error(void)
{
    return aof_write_failing() ? aof_write_error_msg() : NULL;
}

static const server_log_ops_t aof_log = {
    .propagate = aof_propagate,
    .propagate_del = aof_propagate_del,
    .replace_argv_drop = aof_replace_argv_drop,
    .exec_begin = aof_exec_begin,
    .exec_end = aof_exec_end,
    .exec_discard = aof_exec_discard,
    .flush = aof_flush,
    .write_error = aof_write_error,
    .config_changed = aof_setting_changed,
    .io_settled = aof_try_fork,
};

static int search_init(char *err, size_t errlen)
{
    searchcmd_init();
    return 0;
}

static void search_cron(long long now_ms)
{
    searchcmd_cron();
}

/* TSEARCH waits for file-tier writes and reads to settle (their blobs are indexed then) */
static void search_plan_done(void)
{
    searchcmd_on_writes_settled();
}

/* ACL users exist before any client runs a command (the AOF replays as a fake client) */
static const server_room_t acl_room = {
    .name = "acl",
    .commands = cmds_acl,
    .init = acl_init,
    .deinit = acl_deinit,
    .config_changed = acl_config_changed,
};

/* Cluster mode before the keyspace is loaded (the per-slot key index starts with it) */
static int cluster_room_init(char *err, size_t errlen)
{
    if (cluster_init(err, errlen) < 0) return -1;
    if (cluster) db_slot_index_enable(&srv.db[0]);
    return 0;
}

static void aof_cron_step(long long now_ms)
{
    aof_cron();
}

/* Order matters where it is observable: the cron runs search compaction, then the AOF's work
 * (the tier store's own work runs before every room's, server/store.h). */
static const server_room_t rooms[] = {
    {"connection", cmds_connection},
    {"server", cmds_server},
    {"keys", cmds_keys},
    {"strings", cmds_string},
    {"hashes", cmds_hash},
    {"sorted-sets", cmds_zset},
    {"geo", cmds_geo},
    {"lists", cmds_list},
    {"blocking-lists", cmds_blist},
    {"sets", cmds_set},
    {"streams", cmds_stream},
    {"bits", cmds_bits},
    {"hyperloglog", cmds_hll},
    {"sort", cmds_sort},
    {"admin", cmds_admin},
    {"cluster", cmds_cluster, cluster_room_init, cluster_deinit, cluster_cron},
    {"dump", cmds_dump},
    {"scripting", cmds_script, script_init, script_deinit},
    {"functions", function__cmds_function},
    {"tags", cmds_tag, NULL, NULL, tagcmd_cron},
    {"search", NULL, search_init, searchcmd_deinit, search_cron, searchcmd_on_key_event,
     search_plan_done},
    {"aof", cmds_aof, NULL, NULL, aof_cron_step},
    {"shm", cmds_shm},
    {"tracking", NULL, NULL, tracking_deinit, tracking_cron, tracking_key_event},
};

void server_rooms_register(void)
{
    server_add_room(&acl_room);
    for (size_t i = 0; i < sizeof(rooms) / sizeof(rooms[0]); i++) server_add_room(&rooms[i]);
    server_set_log(&aof_log);
    rewrite_set_prelude(script_rewrite); /* function libraries, before the keys */
}
