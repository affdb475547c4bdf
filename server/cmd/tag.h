/* server/cmd/tag.h - what the tag commands (server/cmd/tag.c) export besides their table. */
#ifndef CTE_SERVER_CMD_TAG_H
#define CTE_SERVER_CMD_TAG_H

#include "common/buf.h"

/* INFO's "# Tiers" section. */
void tagcmd_info_tiers(buf_t *b);
/* Periodic work (server cron): closes clients that read nothing of a streamed TGET for
 * tget-stall-timeout seconds. */
void tagcmd_cron(long long now_ms);

#endif
