/* cmd_set.c - set commands (being written). */
#include "server/command.h"

command_t cmds_set[] = {
    {NULL},
};
