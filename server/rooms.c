/* rooms.c - the composition root: hands every room of server/ to the core (server/hooks.h).
 *
 * With main.c, the only file that includes the command groups (cmd/), persistence (persist/)
 * and the core together: the core itself calls them only through what is registered here.
 * Call server_rooms_register() before server_init() (main and the unit-test harness do). */
#include "server/rooms.h"

#include "server/cmd/cmd.h"
#include "server/cmd/search.h"
#include "server/cmd/tag.h"
#include "server/hooks.h"
#include "server/persist/aof.h"

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
    .flush = aof_flush,
    .write_error = aof_write_error,
    .config_changed = aof_setting_changed,
};

static int search_init(char *err, size_t errlen)
{
    search_commands_init();
    return 0;
}

static void search_cron(long long now_ms)
{
    search_commands_cron();
}

static void aof_cron_step(long long now_ms)
{
    aof_cron();
}

/* Order matters where it is observable: tiers open before search registers its observers,
 * and the cron runs the tag store's moves, then search compaction, then the AOF. */
static const server_room_t rooms[] = {
    {"connection", cmds_connection},
    {"server", cmds_server},
    {"keys", cmds_keys},
    {"strings", cmds_string},
    {"hashes", cmds_hash},
    {"sorted-sets", cmds_zset},
    {"lists", cmds_list},
    {"blocking-lists", cmds_blist},
    {"sets", cmds_set},
    {"bits", cmds_bits},
    {"sort", cmds_sort},
    {"tags", cmds_tag, tag_commands_init, tag_commands_deinit, tag_cron},
    {"search", NULL, search_init, search_commands_deinit, search_cron, search_on_key_event},
    {"aof", cmds_aof, NULL, NULL, aof_cron_step},
};

void server_rooms_register(void)
{
    for (size_t i = 0; i < sizeof(rooms) / sizeof(rooms[0]); i++) server_add_room(&rooms[i]);
    server_set_log(&aof_log);
}
