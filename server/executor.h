/* executor.h - runs storage's I/O plans (storage/t_tag.h) off the loop thread.
 *
 * A plan's file-tier reads and writes run on libuv's thread pool (tag_plan_run). Back on the
 * loop thread the executor finishes the plan (tag_plan_finish, which wakes what waits on its
 * blob), calls the submitter's done callback, runs the plans storage queued by itself
 * meanwhile (demotions), tells the log of writes that I/O settled (a rewrite may be waiting
 * to fork) and serves the clients made ready. Without a loop (unit tests), while the
 * append-only file loads, and when the submitter asks (inside EXEC, where nothing may
 * interleave), the plan runs inline instead, before executor_run returns. The command files
 * hand their plans here, so they need not know the loop. Loop thread only. */
#ifndef CTE_SERVER_EXECUTOR_H
#define CTE_SERVER_EXECUTOR_H

#include "storage/t_tag.h"

/* Called on the loop thread after the plan finished; status 0 or -errno. */
typedef void executor_done_t(void *ud, int status);

/* 1 when plans run inline now whatever the submitter asks (no loop, or loading). */
int executor_inline(void);
/* Runs plan and then done(ud, status) (done may be NULL). With run_inline, or when
 * executor_inline(), both happen before it returns and it returns 1; otherwise it returns 0
 * and they happen later. The plan belongs to the executor until done is called. */
int executor_run(tag_plan_t *plan, int run_inline, executor_done_t *done, void *ud);
/* Runs the plans storage queued by itself (tag_pending_pop: demotions, moves), with nobody
 * waiting for them. */
void executor_start_pending(void);
/* Work done in steps, one per loop turn: step() runs once each turn (before the loop waits
 * for I/O, which it then does not) until it returns 0; clients made ready are served after
 * each step. Starting a step function that already runs does nothing. At most
 * EXECUTOR_STEPS_MAX different step functions run at once. */
#define EXECUTOR_STEPS_MAX 4
typedef int executor_step_t(void);
void executor_steps_start(executor_step_t *step);

/* Plans handed out and not yet finished (INFO tiers, TIERS). */
int executor_inflight(void);

/* Serves the clients made ready (block_handle_ready) from a callback of the loop of its own,
 * soon: for work that ends inside a transport's callback, where running a client's next
 * commands is not safe. */
void executor_serve_ready_soon(void);

#endif
