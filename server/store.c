/* store.c - the server's tier set and its periodic work (see store.h). Loop thread only. */
#include "server/store.h"

#include "server/executor.h"
#include "server/server.h"
#include "storage/t_tag.h"
#include "tiers/tier.h"

#include <string.h>

static tier_set_t tiers;
static int tiers_open;

int store_open(char *err, size_t errlen)
{
    tier_spec_t specs[TIER_MAX];
    int n = srv.cfg.ntiers < TIER_MAX ? srv.cfg.ntiers : TIER_MAX;
    for (int i = 0; i < n; i++) {
        const config_tier_t *t = &srv.cfg.tiers[i];
        specs[i] = (tier_spec_t){t->name, t->kind == CONFIG_TIER_FILE ? TIER_FILE : TIER_RAM,
                                 (uint64_t)t->capacity, t->path, t->score};
    }
    if (tier_set_open(&tiers, specs, n, err, errlen) < 0) return -1;
    tiers_open = 1;
    tag_store.tiers = &tiers;
    tag_store.max_blob_size = (uint64_t)srv.cfg.max_blob_size;
    return 0;
}

void store_close(void)
{
    if (!tiers_open) return;
    tier_set_close(&tiers);
    tiers_open = 0;
}

void store_cron(long long now_ms)
{
    if (srv.cfg.organizer)
        tag_organize_step(now_ms, srv.cfg.organizer_batch, (double)srv.cfg.organizer_half_life);
    executor_start_pending();
}

int store_set_tier_delay(const char *name, size_t len, uint64_t us)
{
    for (int i = 0; i < tiers.n; i++) {
        const char *n = tier_name(tiers.t[i]);
        if (strlen(n) == len && memcmp(n, name, len) == 0) {
            tier_set_delay(&tiers, i, us);
            return 0;
        }
    }
    return -1;
}
