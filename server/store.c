/* store.c - the server's tier set and its periodic work (see store.h). Loop thread only. */
#include "server/store.h"

#include "common/log.h"
#include "server/executor.h"
#include "server/server.h"
#include "storage/t_tag.h"
#include "tiers/tier.h"

#include <string.h>

static tier_set_t tiers;
static int tiers_open;

int store_open(char *err, size_t errlen)
{
    tier_spec_t specs[TIER_MAX] = {0};
    int n = srv.cfg.ntiers < TIER_MAX ? srv.cfg.ntiers : TIER_MAX;
    for (int i = 0; i < n; i++) {
        const config_tier_t *t = &srv.cfg.tiers[i];
        specs[i] = (tier_spec_t){t->name, t->kind == CONFIG_TIER_FILE ? TIER_FILE : TIER_RAM,
                                 (uint64_t)t->capacity, t->path, t->score};
    }
    if (tier_set_open(&tiers, specs, n, err, errlen) < 0) return -1;
    tiers_open = 1;
    for (int i = 0; i < n; i++) /* a RAM tier larger than the address space was cut down */
        if (specs[i].kind == TIER_RAM &&
            tier_capacity(tiers.t[i]) < specs[i].capacity / TIER_RAM_BLOCK * TIER_RAM_BLOCK)
            log_warning("tier '%s': capacity %llu bytes is more than can be mapped; using %llu",
                        specs[i].name, (unsigned long long)specs[i].capacity,
                        (unsigned long long)tier_capacity(tiers.t[i]));
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
