/* executor.c - storage's I/O plans on libuv's thread pool (see executor.h). Loop thread,
 * except work_cb, which runs on a worker thread and touches only the plan. */
#include "server/executor.h"

#include "common/alloc.h"
#include "server/block.h"
#include "server/hooks.h"
#include "server/server.h"

#include <assert.h>
#include <uv.h>

typedef struct exec_job {
    uv_work_t req;
    tag_plan_t *plan;
    int status;
    executor_done_t *done;
    void *ud;
} exec_job_t;

static int inflight;
static executor_step_t *steps[EXECUTOR_STEPS_MAX];
static uv_idle_t idle;

static void wake(void *ud, const char *name, size_t len)
{
    block_signal_name(name, len);
}

static void finish(exec_job_t *j)
{
    tag_plan_finish(j->plan, j->status, wake, NULL);
    inflight--;
    if (j->done) j->done(j->ud, j->status);
    xfree(j);
    const server_room_t *const *rooms;
    size_t n = server_rooms(&rooms);
    for (size_t i = 0; i < n; i++)
        if (rooms[i]->plan_done) rooms[i]->plan_done();
}

static void work_cb(uv_work_t *req)
{
    exec_job_t *j = req->data;
    j->status = tag_plan_run(j->plan);
}

static void after_cb(uv_work_t *req, int status)
{
    exec_job_t *j = req->data;
    if (status < 0 && j->status == 0) j->status = status;
    finish(j);
    executor_start_pending();
    server_log_io_settled(); /* a rewrite that waited for writes in flight */
    block_handle_ready();
}

int executor_inline(void)
{
    return !srv.loop || srv.loading;
}

int executor_run(tag_plan_t *plan, int run_inline, executor_done_t *done, void *ud)
{
    exec_job_t *j = xcalloc(1, sizeof(*j));
    j->plan = plan;
    j->done = done;
    j->ud = ud;
    inflight++;
    if (run_inline || executor_inline()) {
        j->status = tag_plan_run(plan);
        finish(j);
        executor_start_pending();
        return 1;
    }
    j->req.data = j;
    int rc = uv_queue_work(srv.loop, &j->req, work_cb, after_cb);
    if (rc < 0) { /* cannot happen with a live loop; finish as failed */
        j->status = rc;
        finish(j);
    }
    return 0;
}

void executor_start_pending(void)
{
    for (tag_plan_t *p; (p = tag_pending_pop());) executor_run(p, 0, NULL, NULL);
}

int executor_inflight(void)
{
    return inflight;
}

static void on_idle(uv_idle_t *h)
{
    int left = 0;
    for (int i = 0; i < EXECUTOR_STEPS_MAX; i++) {
        if (!steps[i]) continue;
        if (steps[i]())
            left++;
        else
            steps[i] = NULL;
    }
    if (!left) uv_idle_stop(h);
    block_handle_ready();
}

void executor_steps_start(executor_step_t *step)
{
    int free_at = -1;
    for (int i = 0; i < EXECUTOR_STEPS_MAX; i++) {
        if (steps[i] == step) return;
        if (!steps[i] && free_at < 0) free_at = i;
    }
    assert(free_at >= 0);
    steps[free_at] = step;
    if (!idle.loop) uv_idle_init(srv.loop, &idle);
    uv_idle_start(&idle, on_idle); /* starting a started handle does nothing */
}

static uv_timer_t ready_timer;
static int ready_timer_on;

static void ready_cb(uv_timer_t *t)
{
    (void)t;
    block_handle_ready();
}

void executor_serve_ready_soon(void)
{
    if (!srv.loop) {
        block_handle_ready();
        return;
    }
    if (!ready_timer_on) {
        uv_timer_init(srv.loop, &ready_timer);
        uv_unref((uv_handle_t *)&ready_timer);
        ready_timer_on = 1;
    }
    uv_timer_start(&ready_timer, ready_cb, 0, 0);
}
