/* server/net/spin.c - the crowded-core rule of the loop's spins (see spin.h). */
#include "server/net/spin.h"

#include "server/server.h"

#include <sched.h>
#include <uv.h>

static uint64_t off_until; /* no spinning before this (uv_hrtime) */
static uint64_t last_long;  /* when the last long yield ended, 0 if none */

int spin_yield(void)
{
    uint64_t t0 = uv_hrtime();
    sched_yield();
    uint64_t t1 = uv_hrtime();
    if (t1 - t0 < SPIN_CROWDED_NS) return 0;
    int again = last_long && t1 - last_long < SPIN_AGAIN_NS;
    last_long = t1;
    if (!again) return 0; /* one long yield alone: the hypervisor took the core for a moment */
    off_until = t1 + SPIN_OFF_NS;
    srv.stat.spin_crowded++;
    return -1;
}

int spin_allowed(uint64_t now)
{
    return now >= off_until;
}
