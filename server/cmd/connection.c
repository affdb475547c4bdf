/* server/cmd/connection.c - connection commands: PING ECHO QUIT RESET HELLO AUTH SELECT SWAPDB
 * CLIENT.
 *
 * Replies and errors as Redis 7.0. HELLO reports server "redis" and version 7.0.15 because
 * client libraries pick features by that version; INFO's cte_version tells the truth. */
#include "common/alloc.h"
#include "common/util.h"
#include "server/command.h"
#include "server/acl.h"
#include "server/block.h"
#include "server/cluster/cluster.h"
#include "server/cmd/search.h"
#include "server/introspect.h"
#include "server/multi.h"
#include "server/pubsub.h"
#include "server/reply.h"
#include "server/server.h"
#include "server/tracking.h"

#include <ctype.h>
#include <string.h>


static void ping_cmd(client_t *c)
{
    if (c->argc > 2) {
        reply_arity_error(c);
        return;
    }
    if ((c->flags & CLIENT_PUBSUB) && c->resp == 2) {
        reply_array(c, 2);
        reply_bulk_cstr(c, "pong");
        if (c->argc == 2) reply_bulk(c, c->argv[1].ptr, c->argv[1].len);
        else reply_bulk_cstr(c, "");
    } else if (c->argc == 2) {
        reply_bulk(c, c->argv[1].ptr, c->argv[1].len);
    } else {
        reply_proto(c, "+PONG\r\n", 7);
    }
}

static void echo_cmd(client_t *c)
{
    reply_bulk(c, c->argv[1].ptr, c->argv[1].len);
}

static void quit_cmd(client_t *c)
{
    reply_ok(c);
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

/* Authenticates c as user (the default user when NULL); replies with the error and returns
 * -1 if the pair is wrong or the user is off. */
static int authenticate_or_reply(client_t *c, const resp_arg_t *user, const resp_arg_t *pass)
{
    static const resp_arg_t default_name = {"default", 7};
    if (acl_authenticate(c, user ? user : &default_name, pass) == 0) return 0;
    reply_error(c, "WRONGPASS invalid username-password pair or user is disabled.");
    return -1;
}

static void auth_cmd(client_t *c)
{
    if (c->argc > 3) {
        reply_syntax_error(c);
        return;
    }
    if (c->argc == 2 && acl_user_nopass(acl_default_user())) {
        reply_error(c, "ERR AUTH <password> called without any password configured for the "
                       "default user. Are you sure your configuration is correct?");
        return;
    }
    const resp_arg_t *user = c->argc == 3 ? &c->argv[1] : NULL;
    if (authenticate_or_reply(c, user, &c->argv[c->argc - 1]) == 0) reply_ok(c);
}

static int valid_client_name(const resp_arg_t *a)
{
    for (size_t i = 0; i < a->len; i++)
        if (a->ptr[i] < '!' || a->ptr[i] > '~') return 0;
    return 1;
}

/* Sets c's name from a (empty clears it). Replies with the error and returns -1 if invalid. */
static int set_name_or_reply(client_t *c, const resp_arg_t *a)
{
    if (!valid_client_name(a)) {
        reply_error(c,
                    "ERR Client names cannot contain spaces, newlines or special characters.");
        return -1;
    }
    xfree(c->name);
    c->name = a->len ? xmemdup(a->ptr, a->len) : NULL;
    return 0;
}

static void hello_reply(client_t *c)
{
    reply_map(c, 7);
    reply_bulk_cstr(c, "server");
    reply_bulk_cstr(c, "redis");
    reply_bulk_cstr(c, "version");
    reply_bulk_cstr(c, COMPAT_REDIS_VERSION);
    reply_bulk_cstr(c, "proto");
    reply_int(c, c->resp);
    reply_bulk_cstr(c, "id");
    reply_int(c, (long long)c->id);
    reply_bulk_cstr(c, "mode");
    reply_bulk_cstr(c, "standalone");
    reply_bulk_cstr(c, "role");
    reply_bulk_cstr(c, "master");
    reply_bulk_cstr(c, "modules");
    reply_array(c, 0);
}

static void hello_cmd(client_t *c)
{
    long long ver = 0;
    int next = 1;
    if (c->argc >= 2) {
        if (!str_to_ll(c->argv[1].ptr, c->argv[1].len, &ver)) {
            reply_error(c, "ERR Protocol version is not an integer or out of range");
            return;
        }
        next = 2;
        if (ver < 2 || ver > 3) {
            reply_error(c, "NOPROTO unsupported protocol version");
            return;
        }
    }
    const resp_arg_t *user = NULL, *pass = NULL, *name = NULL;
    for (int j = next; j < c->argc; j++) {
        int more = c->argc - j - 1;
        if (arg_is(&c->argv[j], "AUTH") && more >= 2) {
            user = &c->argv[j + 1];
            pass = &c->argv[j + 2];
            j += 2;
        } else if (arg_is(&c->argv[j], "SETNAME") && more >= 1) {
            name = &c->argv[j + 1];
            j++;
        } else {
            reply_errorf(c, "ERR Syntax error in HELLO option '%.*s'", (int)c->argv[j].len,
                         c->argv[j].ptr);
            return;
        }
    }
    if (pass && authenticate_or_reply(c, user, pass) < 0) return;
    if (acl_auth_required(c)) {
        reply_error(c, "NOAUTH HELLO must be called with the client already authenticated, "
                       "otherwise the HELLO AUTH <user> <pass> option can be used to "
                       "authenticate the client and select the RESP protocol version at the "
                       "same time");
        return;
    }
    if (name && set_name_or_reply(c, name) < 0) return;
    if (ver) c->resp = (int)ver;
    hello_reply(c);
}

static void select_cmd(client_t *c)
{
    long long id;
    if (arg_ll_or_reply(c, &c->argv[1], &id, NULL) < 0) return;
    if (cluster && id != 0) {
        reply_error(c, "ERR SELECT is not allowed in cluster mode");
        return;
    }
    if (id < 0 || id >= srv.ndb || client_select(c, (int)id) < 0) {
        reply_error(c, ERR_DB_INDEX);
        return;
    }
    reply_ok(c);
}

static void swapdb_cmd(client_t *c)
{
    long long a, b;
    if (cluster) {
        reply_error(c, "ERR SWAPDB is not allowed in cluster mode");
        return;
    }
    if (arg_ll_or_reply(c, &c->argv[1], &a, "ERR invalid first DB index") < 0 ||
        arg_ll_or_reply(c, &c->argv[2], &b, "ERR invalid second DB index") < 0)
        return;
    if (a < 0 || a >= srv.ndb || b < 0 || b >= srv.ndb) {
        reply_error(c, ERR_DB_INDEX);
        return;
    }
    if (a != b) {
        multi_touch_db(&srv.db[a], &srv.db[b]);
        multi_touch_db(&srv.db[b], &srv.db[a]);
        db_swap(&srv.db[a], &srv.db[b]);
        block_swap_db((int)a, (int)b);
        searchcmd_on_swapdb((int)a, (int)b);
        srv.dirty++;
    }
    reply_ok(c);
}

static void reset_cmd(client_t *c)
{
    multi_reset(c);
    introspect_forget_monitor(c);
    pubsub_client_reset(c);
    tracking_client_reset(c);
    c->flags &= ~(uint32_t)(CLIENT_MULTI | CLIENT_DIRTY_CAS | CLIENT_DIRTY_EXEC | CLIENT_REPLY_OFF |
                            CLIENT_REPLY_SKIP | CLIENT_REPLY_SKIP_NEXT | CLIENT_NO_EVICT |
                            CLIENT_ASKING | CLIENT_READONLY);
    c->resp = 2;
    client_select(c, 0);
    xfree(c->name);
    c->name = NULL;
    acl_client_reset(c);
    reply_simple(c, "RESET");
}

/* ---- CLIENT ---- */

static void client_id_cmd(client_t *c)
{
    reply_int(c, (long long)c->id);
}

static void client_getname_cmd(client_t *c)
{
    reply_bulk_cstr(c, c->name);
}

static void client_setname_cmd(client_t *c)
{
    if (set_name_or_reply(c, &c->argv[2]) == 0) reply_ok(c);
}

static void client_setinfo_cmd(client_t *c)
{
    const resp_arg_t *attr = &c->argv[2], *val = &c->argv[3];
    char **slot;
    if (arg_is(attr, "lib-name")) slot = &c->lib_name;
    else if (arg_is(attr, "lib-ver")) slot = &c->lib_ver;
    else {
        reply_errorf(c, "ERR Unrecognized option '%.*s'", (int)attr->len, attr->ptr);
        return;
    }
    if (!valid_client_name(val)) {
        reply_errorf(c, "ERR %s cannot contain spaces, newlines or special characters.",
                     slot == &c->lib_name ? "lib-name" : "lib-ver");
        return;
    }
    xfree(*slot);
    *slot = val->len ? xmemdup(val->ptr, val->len) : NULL;
    reply_ok(c);
}

static int is_normal(const client_t *c)
{
    return !(c->flags & (CLIENT_PUBSUB | CLIENT_MONITOR));
}

static void client_list_cmd(client_t *c)
{
    int only_type = -1; /* -1 any, 0 normal, 1 pubsub */
    uint64_t *ids = NULL;
    int nids = 0;
    if (c->argc == 4 && arg_is(&c->argv[2], "TYPE")) {
        const resp_arg_t *t = &c->argv[3];
        if (arg_is(t, "normal")) only_type = 0;
        else if (arg_is(t, "pubsub")) only_type = 1;
        else if (arg_is(t, "master") || arg_is(t, "replica") || arg_is(t, "slave")) only_type = 2;
        else {
            reply_errorf(c, "ERR Unknown client type '%.*s'", (int)t->len, t->ptr);
            return;
        }
    } else if (c->argc >= 4 && arg_is(&c->argv[2], "ID")) {
        ids = xmalloc(sizeof(*ids) * (size_t)(c->argc - 3));
        for (int j = 3; j < c->argc; j++) {
            long long v;
            if (!str_to_ll(c->argv[j].ptr, c->argv[j].len, &v) || v <= 0) {
                xfree(ids);
                reply_error(c, "ERR Invalid client ID");
                return;
            }
            ids[nids++] = (uint64_t)v;
        }
    } else if (c->argc != 2) {
        reply_syntax_error(c);
        return;
    }
    buf_t out;
    buf_init(&out);
    for (client_t *x = srv.clients; x; x = x->next) {
        if (!x->ops) continue;
        if (only_type == 0 && !is_normal(x)) continue;
        if (only_type == 1 && !(x->flags & CLIENT_PUBSUB)) continue;
        if (only_type == 2) continue;
        if (ids) {
            int hit = 0;
            for (int k = 0; k < nids; k++) hit |= ids[k] == x->id;
            if (!hit) continue;
        }
        client_info_line(x, &out);
        buf_push(&out, '\n');
    }
    reply_verbatim(c, out.data ? out.data : "", out.len, "txt");
    buf_deinit(&out);
    xfree(ids);
}

static void client_info_cmd(client_t *c)
{
    buf_t out;
    buf_init(&out);
    client_info_line(c, &out);
    buf_push(&out, '\n');
    reply_verbatim(c, out.data, out.len, "txt");
    buf_deinit(&out);
}

static int addr_matches(client_t *x, const resp_arg_t *addr, int local)
{
    char peer[128] = "", loc[128] = "";
    if (!x->ops || !x->ops->addr) return 0;
    x->ops->addr(x, peer, sizeof(peer), loc, sizeof(loc));
    const char *s = local ? loc : peer;
    return strlen(s) == addr->len && memcmp(s, addr->ptr, addr->len) == 0;
}

static void client_kill_cmd(client_t *c)
{
    if (c->argc == 3) { /* old form: CLIENT KILL addr:port */
        for (client_t *x = srv.clients; x; x = x->next) {
            if (addr_matches(x, &c->argv[2], 0)) {
                reply_ok(c);
                if (x == c) c->flags |= CLIENT_CLOSE_AFTER_REPLY;
                else client_close(x);
                return;
            }
        }
        reply_error(c, "ERR No such client");
        return;
    }
    long long id = 0;
    int skipme = 1, type = -1;
    const resp_arg_t *addr = NULL, *laddr = NULL;
    const acl_user_t *user = NULL;
    for (int j = 2; j < c->argc; j += 2) {
        if (j + 1 >= c->argc) {
            reply_syntax_error(c);
            return;
        }
        const resp_arg_t *o = &c->argv[j], *v = &c->argv[j + 1];
        if (arg_is(o, "ID")) {
            if (!str_to_ll(v->ptr, v->len, &id) || id <= 0) {
                reply_error(c, "ERR client-id should be greater than 0");
                return;
            }
        } else if (arg_is(o, "ADDR")) addr = v;
        else if (arg_is(o, "LADDR")) laddr = v;
        else if (arg_is(o, "TYPE")) {
            if (arg_is(v, "normal")) type = 0;
            else if (arg_is(v, "pubsub")) type = 1;
            else if (arg_is(v, "master") || arg_is(v, "replica") || arg_is(v, "slave")) type = 2;
            else {
                reply_errorf(c, "ERR Unknown client type '%.*s'", (int)v->len, v->ptr);
                return;
            }
        } else if (arg_is(o, "USER")) {
            if (!(user = acl_user_find(v->ptr, v->len))) {
                reply_errorf(c, "ERR No such user '%.*s'", (int)v->len, v->ptr);
                return;
            }
        } else if (arg_is(o, "SKIPME")) {
            if (arg_is(v, "yes")) skipme = 1;
            else if (arg_is(v, "no")) skipme = 0;
            else {
                reply_syntax_error(c);
                return;
            }
        } else {
            reply_syntax_error(c);
            return;
        }
    }
    long long killed = 0;
    int self = 0;
    for (client_t *x = srv.clients; x; x = x->next) {
        if (!x->ops || (x->flags & CLIENT_CLOSE_ASAP)) continue;
        if (id && x->id != (uint64_t)id) continue;
        if (addr && !addr_matches(x, addr, 0)) continue;
        if (laddr && !addr_matches(x, laddr, 1)) continue;
        if (type == 0 && !is_normal(x)) continue;
        if (type == 1 && !(x->flags & CLIENT_PUBSUB)) continue;
        if (type == 2) continue;
        if (user && x->user != user) continue;
        if (x == c && skipme) continue;
        killed++;
        if (x == c) self = 1;
        else client_close(x);
    }
    reply_int(c, killed);
    if (self) c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

static void client_reply_cmd(client_t *c)
{
    const resp_arg_t *m = &c->argv[2];
    if (arg_is(m, "ON")) {
        c->flags &= ~(uint32_t)(CLIENT_REPLY_OFF | CLIENT_REPLY_SKIP | CLIENT_REPLY_SKIP_NEXT);
        reply_ok(c);
    } else if (arg_is(m, "OFF")) {
        c->flags |= CLIENT_REPLY_OFF;
    } else if (arg_is(m, "SKIP")) {
        if (!(c->flags & CLIENT_REPLY_OFF)) c->flags |= CLIENT_REPLY_SKIP_NEXT;
    } else {
        reply_syntax_error(c);
    }
}

static void client_no_evict_cmd(client_t *c)
{
    if (arg_is(&c->argv[2], "on")) c->flags |= CLIENT_NO_EVICT;
    else if (arg_is(&c->argv[2], "off")) c->flags &= ~(uint32_t)CLIENT_NO_EVICT;
    else {
        reply_syntax_error(c);
        return;
    }
    reply_ok(c);
}

static void client_unblock_cmd(client_t *c)
{
    long long id;
    int err = 0;
    if (arg_ll_or_reply(c, &c->argv[2], &id, NULL) < 0) return;
    if (c->argc == 4) {
        if (arg_is(&c->argv[3], "ERROR")) err = 1;
        else if (!arg_is(&c->argv[3], "TIMEOUT")) {
            reply_error(c, "ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR");
            return;
        }
    } else if (c->argc > 4) {
        reply_syntax_error(c);
        return;
    }
    for (client_t *x = srv.clients; x; x = x->next) {
        if (x->id == (uint64_t)id) {
            reply_int(c, block_unblock(x, err));
            return;
        }
    }
    reply_int(c, 0);
}

static void client_help_cmd(client_t *c)
{
    static const char *lines[] = {
        "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GETNAME",
        "    Return the name of the current connection.",
        "ID",
        "    Return the ID of the current connection.",
        "INFO",
        "    Return information about the current client connection.",
        "KILL <ip:port>",
        "    Kill connection made from <ip:port>.",
        "KILL <option> <value> [<option> <value> [...]]",
        "    Kill connections. Options are: ID, ADDR, LADDR, TYPE, USER, SKIPME.",
        "LIST [options ...]",
        "    Return information about client connections. Options: TYPE, ID.",
        "REPLY (ON|OFF|SKIP)",
        "    Control the replies sent to the current connection.",
        "SETNAME <name>",
        "    Assign the name <name> to the current connection.",
        "SETINFO <LIB-NAME|LIB-VER> <value>",
        "    Set client library name or version.",
        "NO-EVICT (ON|OFF)",
        "    Protect current client connection from eviction.",
        "PAUSE <timeout> [WRITE|ALL]",
        "    Suspend all, or just write, clients for <timeout> milliseconds.",
        "UNPAUSE",
        "    Stop the current client pause, resuming traffic.",
        "UNBLOCK <clientid> [TIMEOUT|ERROR]",
        "    Unblock the specified blocked client.",
        "TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]",
        "         [OPTIN] [OPTOUT] [NOLOOP]",
        "    Control server assisted client side caching.",
        "TRACKINGINFO",
        "    Report tracking status for the current connection.",
        "CACHING (YES|NO)",
        "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
        "GETREDIR",
        "    Return the client ID we are redirecting to when tracking is enabled.",
        "HELP",
        "    Print this help.",
    };
    size_t n = sizeof(lines) / sizeof(lines[0]);
    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) reply_simple(c, lines[i]);
}

static command_t client_subcommands[] = {
    {"id", client_id_cmd, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection",
     "5.0.0", "Returns the unique client ID of the connection.", "O(1)"},
    {"getname", client_getname_cmd, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "connection", "2.6.9", "Returns the name of the connection.", "O(1)"},
    {"setname", client_setname_cmd, 3, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "connection", "2.6.9", "Sets the connection name.", "O(1)"},
    {"setinfo", client_setinfo_cmd, 4, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "connection", "7.2.0", "Sets information specific to the client or connection.", "O(1)"},
    {"list", client_list_cmd, -2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "connection", "2.4.0", "Lists open connections.", "O(N) where N is the number of client connections"},
    {"info", client_info_cmd, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection",
     "6.2.0", "Returns information about the connection.", "O(1)"},
    {"kill", client_kill_cmd, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "connection", "2.4.0", "Terminates open connections.", "O(N) where N is the number of client connections"},
    {"reply", client_reply_cmd, 3, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0, "connection",
     "3.2.0", "Instructs the server whether to reply to commands.", "O(1)"},
    {"no-evict", client_no_evict_cmd, 3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0,
     0, "connection", "7.0.0", "Sets the client eviction mode of the connection.", "O(1)"},
    {"unblock", client_unblock_cmd, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0,
     0, "connection", "5.0.0", "Unblocks a client blocked by a blocking command from a different "
                               "connection.",
     "O(log N) where N is the number of client connections"},
    {"pause", client_pause_cmd, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "connection", "2.9.50", "Suspends commands processing.", "O(1)"},
    {"unpause", client_unpause_cmd, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0,
     0, "connection", "6.2.0", "Resumes processing commands from paused clients.",
     "O(N) Where N is the number of paused clients"},
    {"help", client_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "connection", "5.0.0",
     "Returns helpful text about the different subcommands.", "O(1)"},
    /* client-side caching: server/tracking.c */
    {"tracking", tracking_client_tracking_cmd, -3, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0,
     0, "connection", "6.0.0", "Controls server-assisted client-side caching for the connection.",
     "O(1). Some options may introduce additional complexity."},
    {"caching", tracking_client_caching_cmd, 3, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "connection", "6.0.0", "Instructs the server whether to track the keys in the next request.",
     "O(1)"},
    {"getredir", tracking_client_getredir_cmd, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0,
     0, "connection", "6.0.0",
     "Returns the client ID to which the connection's tracking notifications are redirected.",
     "O(1)"},
    {"trackinginfo", tracking_client_trackinginfo_cmd, 2, CMD_NOSCRIPT | CMD_LOADING | CMD_STALE,
     0, 0, 0, "connection", "6.2.0",
     "Returns information about server-assisted client-side caching for the connection.",
     "O(1)"},
    {NULL},
};

static void client_cmd(client_t *c)
{
    /* only reached with no subcommand: the dispatcher resolves subcommands */
    reply_arity_error(c);
}

command_t cmds_connection[] = {
    {"ping", ping_cmd, -1, CMD_FAST, 0, 0, 0, "connection", "1.0.0",
     "Returns the server's liveliness response.", "O(1)"},
    {"echo", echo_cmd, 2, CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "connection", "1.0.0",
     "Returns the given string.", "O(1)"},
    {"quit", quit_cmd, -1,
     CMD_ALLOW_BUSY | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NO_AUTH, 0, 0, 0,
     "connection", "1.0.0", "Closes the connection.", "O(1)"},
    {"reset", reset_cmd, 1,
     CMD_ALLOW_BUSY | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NO_AUTH, 0, 0, 0,
     "connection", "6.2.0", "Resets the connection.", "O(1)"},
    {"hello", hello_cmd, -1,
     CMD_ALLOW_BUSY | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NO_AUTH, 0, 0, 0,
     "connection", "6.0.0", "Handshakes with the Redis server.", "O(1)"},
    {"auth", auth_cmd, -2,
     CMD_ALLOW_BUSY | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_FAST | CMD_NO_AUTH, 0, 0, 0,
     "connection", "1.0.0", "Authenticates the connection.",
     "O(N) where N is the number of passwords defined for the user"},
    {"select", select_cmd, 2, CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "connection", "1.0.0",
     "Changes the selected database.", "O(1)"},
    {"swapdb", swapdb_cmd, 3, CMD_WRITE | CMD_FAST, 0, 0, 0, "server", "4.0.0",
     "Swaps two Redis databases.",
     "O(N) where N is the count of clients watching or blocking on keys from both databases."},
    {"client", client_cmd, -2, CMD_SENTINEL, 0, 0, 0, "connection", "2.4.0",
     "A container for client connection commands.", "Depends on subcommand.", NULL,
     client_subcommands},
    {NULL},
};
