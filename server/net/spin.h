/* server/net/spin.h - what the loop's polling spins share: the socket transport's spin after a
 * read (socket-spin-us, net.c) and the shm transport's spin over its hot segments (shm.c).
 *
 * A spin yields the core between its polls, so a client on the same core runs. A yield that
 * lasted SPIN_CROWDED_NS or more met work that does not wait for us (a build, a compute job,
 * another server): a spinning loop only slows that work and itself down, while a loop asleep
 * in epoll_wait is woken ahead of it. So a second such yield within SPIN_AGAIN_NS of the one
 * before switches every spin off for SPIN_OFF_NS (a busy loop on the core makes every yield last
 * a scheduler slice, about 4 ms; one long yield alone is as likely the hypervisor taking the
 * core from this virtual machine for a moment, and switching the spins off for it made whole
 * YCSB runs over shm take the slow path). Loop thread only. */
#ifndef CTE_SERVER_NET_SPIN_H
#define CTE_SERVER_NET_SPIN_H

#include <stdint.h>

#define SPIN_CROWDED_NS (1000 * 1000ull)
#define SPIN_AGAIN_NS (50 * 1000000ull)
#define SPIN_OFF_NS (200 * 1000000ull)

/* Yields the core (sched_yield). Returns 0, or -1 when the yield showed a crowded core, i.e. it
 * and the long yield before it were both SPIN_CROWDED_NS or longer and SPIN_AGAIN_NS apart at
 * most (the spins are then off: spin_allowed answers 0 for SPIN_OFF_NS, and INFO's spin_crowded
 * counts it). */
int spin_yield(void);
/* 0 while the spins are off after a crowded yield, else 1; now is uv_hrtime(). */
int spin_allowed(uint64_t now);

#endif
