/* cmd_sort.c - SORT and SORT_RO (being written). */
#include "server/command.h"

command_t cmds_sort[] = {
    {NULL},
};
