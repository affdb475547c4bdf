/* server/cmd/tag.h - set-up of the tiered store behind the tag commands (server/cmd/tag.c). */
#ifndef CTE_SERVER_CMD_TAG_H
#define CTE_SERVER_CMD_TAG_H

#include "common/buf.h"

#include <stddef.h>
#include <stdint.h>

/* Opens the tiers of srv.cfg (file tiers create their data files under dir). Returns 0, or -1
 * with a message in err. */
int tag_commands_init(char *err, size_t errlen);
/* Closes the tiers (file tiers remove their data files). */
void tag_commands_deinit(void);
/* Periodic work (server cron): the organizer's step when enabled, and queued moves. */
void tag_cron(long long now_ms);
/* Runs a plan storage handed out (a read for the search index) off the loop thread like the
 * commands' own (inline without a loop); done(ud, status) is called on the loop thread after
 * tag_plan_finish, status 0 or -errno. */
struct tag_plan;
void tag_run_plan(struct tag_plan *plan, void (*done)(void *ud, int status), void *ud);
/* INFO's "# Tiers" section. */
void tag_info_tiers(buf_t *b);
/* DEBUG TIER-DELAY: every file-tier read and write of tier `name` sleeps us first. Returns -1
 * if there is no such tier. */
int tag_set_tier_delay(const char *name, size_t len, uint64_t us);

#endif
