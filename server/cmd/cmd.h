/* server/cmd/cmd.h - the command tables of the command groups, one per file of server/cmd/.
 * Each ends with a row whose name is NULL. server/rooms.c hands them to the core. */
#ifndef CTE_SERVER_CMD_CMD_H
#define CTE_SERVER_CMD_CMD_H

#include "server/command.h"

extern command_t cmds_connection[], cmds_server[], cmds_keys[], cmds_string[], cmds_hash[],
    cmds_zset[], cmds_list[], cmds_set[], cmds_bits[], cmds_tag[], cmds_blist[], cmds_sort[],
    cmds_acl[], cmds_admin[], cmds_geo[], cmds_stream[], cmds_hll[], cmds_dump[],
    cmds_cluster[];

#endif
