/* hooks.c - the registered log of writes and rooms (see hooks.h). Loop thread only. */
#include "server/hooks.h"

#include "server/server.h"

#include <assert.h>

static const server_log_ops_t no_log;
static const server_log_ops_t *log_ops = &no_log;
static const server_room_t *rooms[SERVER_ROOMS_MAX];
static size_t nrooms;

static server_call_gate_t *call_gate;

void server_set_call_gate(server_call_gate_t *gate)
{
    call_gate = gate;
}

server_call_gate_t *server_call_gate(void)
{
    return call_gate;
}

void server_set_log(const server_log_ops_t *ops)
{
    log_ops = ops ? ops : &no_log;
}

void server_add_room(const server_room_t *room)
{
    for (size_t i = 0; i < nrooms; i++)
        if (rooms[i] == room) return; /* registering twice (unit tests) is harmless */
    assert(nrooms < SERVER_ROOMS_MAX);
    rooms[nrooms++] = room;
}

size_t server_rooms(const server_room_t *const **out)
{
    *out = rooms;
    return nrooms;
}

void server_log_propagate(client_t *c, int dbid, int argc, const resp_arg_t *argv)
{
    if (log_ops->propagate) log_ops->propagate(c, dbid, argc, argv);
}

void server_log_propagate_del(int dbid, const char *key, size_t len)
{
    if (log_ops->propagate_del) log_ops->propagate_del(dbid, key, len);
}

void server_log_replace_argv_drop(void)
{
    if (log_ops->replace_argv_drop) log_ops->replace_argv_drop();
}

void server_log_exec_begin(void)
{
    if (log_ops->exec_begin) log_ops->exec_begin();
}

void server_log_exec_discard(void)
{
    if (log_ops->exec_discard) log_ops->exec_discard();
}

void server_log_exec_end(void)
{
    if (log_ops->exec_end) log_ops->exec_end();
}

void server_log_flush(void)
{
    if (log_ops->flush) log_ops->flush();
}

const char *server_log_write_error(void)
{
    return log_ops->write_error ? log_ops->write_error() : NULL;
}

void server_log_io_settled(void)
{
    if (log_ops->io_settled) log_ops->io_settled();
}

int server_log_config_changed(const char *name, char *err, size_t errlen)
{
    return log_ops->config_changed ? log_ops->config_changed(name, err, errlen) : 0;
}

const char *server_write_refusal(void)
{
    const char *err = server_log_write_error();
    if (err) return err;
    if (srv.cfg.min_replicas_to_write > 0 && srv.cfg.min_replicas_max_lag > 0)
        return "NOREPLICAS Not enough good replicas to write.";
    return NULL;
}
