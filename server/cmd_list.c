/* cmd_list.c - list commands (being written). */
#include "server/command.h"

command_t cmds_list[] = {
    {NULL},
};
