/* store.h - the tiered store the server runs: its tier set, opened from the configuration,
 * and its periodic work (the organizer, queued moves). Storage reaches the tiers through
 * tag_store (storage/t_tag.h), which store_open sets. Loop thread only. */
#ifndef CTE_SERVER_STORE_H
#define CTE_SERVER_STORE_H

#include <stddef.h>
#include <stdint.h>

/* Opens the tiers of srv.cfg (file tiers create and lock their data files). Returns 0, or -1
 * with a message in err. */
int store_open(char *err, size_t errlen);
/* Closes the tiers (file tiers remove their data files). Does nothing when none is open. */
void store_close(void);
/* Periodic work (server cron): the organizer's step when enabled, then queued moves. */
void store_cron(long long now_ms);
/* DEBUG TIER-DELAY: every file-tier read and write of tier `name` sleeps us first. Returns -1
 * if there is no such tier. */
int store_set_tier_delay(const char *name, size_t len, uint64_t us);

#endif
