/* server/cmd/server.c - server commands: INFO DBSIZE FLUSHDB FLUSHALL CONFIG TIME COMMAND SHUTDOWN
 * MEMORY DEBUG.
 *
 * COMMAND INFO/DOCS are generated from the command table rows (flags, key positions, group),
 * so they cannot drift from what the dispatcher does. INFO reports Redis's field names, plus
 * our own (cte_version) where they are ours. */
#include "common/alloc.h"
#include "common/dict.h"
#include "common/glob.h"
#include "common/log.h"
#include "common/util.h"
#include "server/cluster/cluster.h"
#include "server/cmd_docs.h"
#include "server/command.h"
#include "server/persist/aof.h"
#include "server/acl.h"
#include "server/block.h"
#include "server/cmd/migrate.h"
#include "server/cmd/search.h"
#include "server/cmd/tag.h"
#include "server/evict.h"
#include "server/introspect.h"
#include "server/lazyfree.h"
#include "server/multi.h"
#include "server/net/net.h"
#include "server/pubsub.h"
#include "server/reply.h"
#include "server/persist/rewrite.h"
#include "server/script/script.h"
#include "server/server.h"
#include "server/store.h"
#include "server/tracking.h"

#include <assert.h>
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#define CTE_VERSION "0.1.0"

/* ---- DBSIZE FLUSHDB FLUSHALL TIME ---- */

static void dbsize_cmd(client_t *c)
{
    reply_int(c, (long long)db_size(c->db));
}

/* FLUSHDB/FLUSHALL take an optional ASYNC or SYNC; returns -1 after replying on bad input. */
/* FLUSHDB's and FLUSHALL's [ASYNC|SYNC]: 1 for ASYNC, 0 for SYNC or none, -1 after an error
 * reply. */
static int flush_mode_or_reply(client_t *c)
{
    if (c->argc == 1) return 0;
    if (c->argc == 2 && arg_is(&c->argv[1], "ASYNC")) return 1;
    if (c->argc == 2 && arg_is(&c->argv[1], "SYNC")) return 0;
    reply_syntax_error(c);
    return -1;
}

/* Empties db: ASYNC hands its keys to the lazyfree thread (at once when tags live). */
static uint64_t flush_one(db_t *db, int async)
{
    multi_touch_db(db, NULL);
    uint64_t n = async ? lazyfree_db(db) : db_flush(db);
    int i = (int)(db - srv.db);
    block_swap_db(i, i); /* waits on its keys run again (XREADGROUP then fails) */
    return n;
}

static void flushdb_cmd(client_t *c)
{
    int async = flush_mode_or_reply(c);
    if (async < 0) return;
    tracking_invalidate_all();
    srv.dirty += (long long)flush_one(c->db, async) + 1;
    if (!async) alloc_purge();
    reply_ok(c);
}

static void flushall_cmd(client_t *c)
{
    int async = flush_mode_or_reply(c);
    if (async < 0) return;
    long long n = 0;
    tracking_invalidate_all();
    for (int i = 0; i < srv.ndb; i++) n += (long long)flush_one(&srv.db[i], async);
    srv.dirty += n + 1;
    /* as Redis: the freed pages go back to the OS now, not after the decay (ASYNC: the
     * thread still frees them) */
    if (!async) alloc_purge();
    reply_ok(c);
}

static void time_cmd(client_t *c)
{
    long long us = time_us();
    reply_array(c, 2);
    reply_bulk_ll(c, us / 1000000);
    reply_bulk_ll(c, us % 1000000);
}

/* ---- SHUTDOWN ---- */

static void shutdown_cmd(client_t *c)
{
    for (int j = 1; j < c->argc; j++) {
        const resp_arg_t *a = &c->argv[j];
        if (!arg_is(a, "NOSAVE") && !arg_is(a, "SAVE") && !arg_is(a, "NOW") &&
            !arg_is(a, "FORCE") && !arg_is(a, "ABORT")) {
            reply_syntax_error(c);
            return;
        }
        if (arg_is(a, "ABORT")) {
            reply_error(c, "ERR No shutdown in progress.");
            return;
        }
    }
    int save = 0, nosave = 0;
    for (int j = 1; j < c->argc; j++) {
        save |= arg_is(&c->argv[j], "SAVE");
        nosave |= arg_is(&c->argv[j], "NOSAVE");
    }
    if (srv.busy_error && !nosave) { /* as Redis: only SHUTDOWN NOSAVE stops a busy script */
        reply_error(c, srv.busy_error);
        return;
    }
    if (srv.loading) save = 0; /* as Redis: a save now would keep only what loaded so far */
    char err[256];
    if (save && aof_rewrite_now(err, sizeof(err)) < 0) {
        log_warning("SHUTDOWN SAVE: %s", err);
        reply_error(c, "ERR Errors trying to SHUTDOWN. Check logs.");
        return;
    }
    /* Redis sends no reply on success: the connection just closes. */
    srv.shutdown_asap = 1;
    c->flags |= CLIENT_CLOSE_AFTER_REPLY;
}

/* ---- CONFIG ---- */

struct config_emit {
    client_t *c;
    buf_t names;   /* emitted names, NUL separated, to skip duplicates across patterns */
    long long n;
};

static void emit_pair(void *ud, const char *name, const char *value)
{
    struct config_emit *e = ud;
    for (size_t off = 0; off < e->names.len; off += strlen(e->names.data + off) + 1)
        if (strcmp(e->names.data + off, name) == 0) return;
    buf_append(&e->names, name, strlen(name) + 1);
    reply_bulk_cstr(e->c, name);
    reply_bulk_cstr(e->c, value);
    e->n++;
}

static void config_get_cmd(client_t *c)
{
    struct config_emit e = {c, {0}, 0};
    buf_init(&e.names);
    size_t h = reply_defer(c);
    for (int j = 2; j < c->argc; j++) {
        char *pat = xmemdup(c->argv[j].ptr, c->argv[j].len);
        config_get(&srv.cfg, pat, emit_pair, &e);
        xfree(pat);
    }
    reply_defer_finish(c, h, '%', e.n);
    buf_deinit(&e.names);
}

/* After CONFIG SET of names (whose values before were old[]): when port or bind changed,
 * listens on the new ones at once, as Redis. When that fails, puts every value of the request
 * back, listens on the old port and addresses again and replies Redis's error (-1). */
static int listen_again_or_reply(client_t *c, int n, char *const *names, char *const *old)
{
    int changed = -1; /* index of the first of port, bind whose value changed */
    buf_t now;
    buf_init(&now);
    for (int i = 0; i < n && changed < 0; i++) {
        if (strcasecmp(names[i], "port") && strcasecmp(names[i], "bind")) continue;
        buf_clear(&now);
        config_get_value(&srv.cfg, names[i], &now);
        if (strcmp(now.data, old[i]) != 0) changed = i;
    }
    buf_deinit(&now);
    if (changed < 0 || net_listen_again() == 0) return 0;
    char err[256];
    if (config_set_many(&srv.cfg, n, (const char *const *)names, (const char *const *)old, err,
                        sizeof(err)) < 0 ||
        net_listen_again() < 0)
        log_warning("Could not listen again on the previous port and addresses");
    int bind = strcasecmp(names[changed], "bind") == 0;
    reply_errorf(c, "ERR CONFIG SET failed (possibly related to argument '%s') - %s",
                 bind ? "bind" : "port",
                 bind ? "Failed to bind to specified addresses." : "Unable to listen on this port");
    return -1;
}

static void config_set_cmd(client_t *c)
{
    char err[512];
    int n = (c->argc - 2) / 2;
    if ((c->argc - 2) % 2 != 0) {
        reply_arity_error(c);
        return;
    }
    char **names = xmalloc(sizeof(char *) * (size_t)n * 3), **values = names + n, **old = values + n;
    for (int i = 0; i < n; i++) {
        names[i] = xmemdup(c->argv[2 + 2 * i].ptr, c->argv[2 + 2 * i].len);
        values[i] = xmemdup(c->argv[3 + 2 * i].ptr, c->argv[3 + 2 * i].len);
        buf_t v;
        buf_init(&v);
        config_get_value(&srv.cfg, names[i], &v); /* an unknown name: set fails below */
        buf_reserve(&v, 1);
        v.data[v.len] = '\0';
        old[i] = xstrdup(v.data);
        buf_deinit(&v);
    }
    int search_was = srv.cfg.search_enabled;
    if (config_set_many(&srv.cfg, n, (const char *const *)names, (const char *const *)values,
                        err, sizeof(err)) < 0)
        reply_error(c, err);
    else if (listen_again_or_reply(c, n, names, old) == 0)
        reply_ok(c);
    if (srv.cfg.search_enabled != search_was) searchcmd_reindex_all();
    for (int i = 0; i < 3 * n; i++) xfree(names[i]);
    xfree(names);
}

static void reset_command_stats(void *ud, const command_t *cmd)
{
    command_t *m = (command_t *)cmd;
    m->calls = m->usec = m->rejected_calls = m->failed_calls = 0;
    introspect_reset_latency(m);
    for (command_t *s = (command_t *)cmd->subcommands; s && s->name; s++) {
        s->calls = s->usec = s->rejected_calls = s->failed_calls = 0;
        introspect_reset_latency(s);
    }
}

static void config_resetstat_cmd(client_t *c)
{
    memset(&srv.stat, 0, sizeof(srv.stat));
    lazyfree_reset_stats();
    command_foreach(reset_command_stats, NULL);
    dict_clear((dict_t *)srv.errors, NULL);
    reply_ok(c);
}

static void config_rewrite_cmd(client_t *c)
{
    char err[512];
    if (!srv.cfg.config_file) {
        reply_error(c, "ERR The server is running without a config file");
        return;
    }
    acl_config_sync_users(); /* users: the live ACL users, as Redis rewrites its user lines */
    if (config_rewrite(&srv.cfg, srv.cfg.config_file, err, sizeof(err)) < 0) {
        reply_errorf(c, "ERR Rewriting config file: %s", err);
        return;
    }
    reply_ok(c);
}

static void help_reply(client_t *c, const char *const *lines, size_t n)
{
    reply_help(c, lines, n);
}

static void config_help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "GET <pattern>",
        "    Return parameters matching the glob-like <pattern> and their values.",
        "SET <directive> <value>",
        "    Set the configuration <directive> to <value>.",
        "RESETSTAT",
        "    Reset statistics reported by the INFO command.",
        "REWRITE",
        "    Rewrite the configuration file.",
        "HELP",
        "    Print this help.",
    };
    help_reply(c, lines, sizeof(lines) / sizeof(lines[0]));
}

/* ---- COMMAND ---- */

static const struct {
    uint32_t flag;
    const char *name;
} flag_names[] = {
    /* in Redis 7.0's order */
    {CMD_WRITE, "write"},
    {CMD_READONLY, "readonly"},
    {CMD_DENYOOM, "denyoom"},
    {CMD_ADMIN, "admin"},
    {CMD_PUBSUB, "pubsub"},
    {CMD_NOSCRIPT, "noscript"},
    {CMD_BLOCKING, "blocking"},
    {CMD_LOADING, "loading"},
    {CMD_STALE, "stale"},
    {CMD_SKIP_MONITOR, "skip_monitor"},
    {CMD_SKIP_SLOWLOG, "skip_slowlog"},
    {CMD_ASKING, "asking"},
    {CMD_FAST, "fast"},
    {CMD_NO_AUTH, "no_auth"},
    {CMD_NO_MANDATORY_KEYS, "no_mandatory_keys"}, /* may_replicate: hidden, as in Redis 7.0 */
    {CMD_NO_ASYNC_LOADING, "no_async_loading"},
    {CMD_NO_MULTI, "no_multi"},
    {CMD_MOVABLE_KEYS, "movablekeys"},
    {CMD_ALLOW_BUSY, "allow_busy"},
};

typedef struct cat_reply {
    client_t *c;
    int n;
} cat_reply_t;

static void count_category(void *ud, const char *cat)
{
    ((cat_reply_t *)ud)->n++;
}

static void reply_category(void *ud, const char *cat)
{
    char tmp[64];
    snprintf(tmp, sizeof(tmp), "@%s", cat);
    reply_simple(((cat_reply_t *)ud)->c, tmp);
}

/* ACL categories, as ACL CAT has them (server/acl.h). */
static void reply_categories(client_t *c, const command_t *cmd)
{
    cat_reply_t r = {c, 0};
    acl_command_categories(cmd, count_category, &r);
    reply_set(c, r.n);
    acl_command_categories(cmd, reply_category, &r);
}

/* words ("RW access delete") as a set of simple strings */
static void reply_flag_words(client_t *c, char *words)
{
    int n = 0;
    for (char *p = words; *p; n++) {
        p += strcspn(p, " ");
        p += strspn(p, " ");
    }
    reply_set(c, n);
    for (char *p = strtok(words, " "); p; p = strtok(NULL, " ")) reply_simple(c, p);
}

/* One key spec: notes (cmd_docs.c), flags (key_flags' part i), begin_search by index or
 * keyword, find_keys range or keynum; or both unknown. */
static void reply_key_spec(client_t *c, const command_t *cmd, int i, const cmd_key_spec_t *ks)
{
    size_t nlen = 0;
    const char *note = cmd_docs_key_note(cmd_docs_find(cmd->fullname), i, &nlen);
    reply_map(c, note ? 4 : 3);
    if (note) {
        reply_bulk_cstr(c, "notes");
        reply_bulk(c, note, nlen);
    }
    reply_bulk_cstr(c, "flags");
    char fl[64];
    reply_flag_words(c, command_key_flags(cmd, i, fl));
    if (ks->unknown) {
        for (int part = 0; part < 2; part++) {
            reply_bulk_cstr(c, part ? "find_keys" : "begin_search");
            reply_map(c, 2);
            reply_bulk_cstr(c, "type");
            reply_bulk_cstr(c, "unknown");
            reply_bulk_cstr(c, "spec");
            reply_map(c, 0);
        }
        return;
    }
    reply_bulk_cstr(c, "begin_search");
    reply_map(c, 2);
    reply_bulk_cstr(c, "type");
    reply_bulk_cstr(c, ks->keyword ? "keyword" : "index");
    reply_bulk_cstr(c, "spec");
    if (ks->keyword) {
        reply_map(c, 2);
        reply_bulk_cstr(c, "keyword");
        reply_bulk_cstr(c, ks->keyword);
        reply_bulk_cstr(c, "startfrom");
    } else {
        reply_map(c, 1);
        reply_bulk_cstr(c, "index");
    }
    reply_int(c, ks->index);
    reply_bulk_cstr(c, "find_keys");
    reply_map(c, 2);
    reply_bulk_cstr(c, "type");
    if (ks->keynum) {
        reply_bulk_cstr(c, "keynum");
        reply_bulk_cstr(c, "spec");
        reply_map(c, 3);
        reply_bulk_cstr(c, "keynumidx");
        reply_int(c, ks->keynumidx);
        reply_bulk_cstr(c, "firstkey");
        reply_int(c, ks->firstkey);
        reply_bulk_cstr(c, "keystep");
        reply_int(c, ks->keystep);
        return;
    }
    reply_bulk_cstr(c, "range");
    reply_bulk_cstr(c, "spec");
    reply_map(c, 3);
    reply_bulk_cstr(c, "lastkey");
    reply_int(c, ks->lastkey);
    reply_bulk_cstr(c, "keystep");
    reply_int(c, ks->keystep);
    reply_bulk_cstr(c, "limit");
    reply_int(c, ks->limit);
}

/* Explicit key specs when the row has them (keyword searches: GEORADIUS STORE); otherwise a
 * command whose key_flags has parts ("RW access delete|RW insert") and fixed key positions has
 * one spec per part, as Redis's: each of the first parts covers one key, the last one the rest
 * (LMOVE, COPY: two keys; PFMERGE: the destination, then every source). */
static void reply_key_specs(client_t *c, const command_t *cmd)
{
    if (cmd->key_specs) {
        int n = 0;
        while (cmd->key_specs[n].index || cmd->key_specs[n].unknown) n++;
        reply_set(c, n);
        for (int i = 0; i < n; i++) reply_key_spec(c, cmd, i, &cmd->key_specs[i]);
        return;
    }
    if (cmd->first_key <= 0) {
        reply_set(c, 0);
        return;
    }
    int parts = 1;
    if (cmd->key_flags && !cmd->getkeys && !(cmd->flags & CMD_MOVABLE_KEYS))
        for (const char *p = cmd->key_flags; *p; p++) parts += *p == '|';
    reply_set(c, parts);
    for (int i = 0; i < parts; i++) {
        int index = cmd->first_key + i * cmd->key_step;
        int lastkey = i < parts - 1 ? 0 : cmd->last_key < 0 ? cmd->last_key : cmd->last_key - index;
        cmd_key_spec_t ks = {index, NULL, lastkey, cmd->key_step};
        reply_key_spec(c, cmd, i, &ks);
    }
}

static void reply_tip(void *ud, const char *w, size_t len)
{
    reply_bulk(ud, w, len);
}

/* COMMAND INFO's tips (cmd_docs.c): a set of words such as "nondeterministic_output". */
static void reply_command_tips(client_t *c, const command_t *cmd)
{
    const cmd_doc_t *d = cmd_docs_find(cmd->fullname);
    const char *tips = d ? d->tips : NULL;
    reply_set(c, (long long)cmd_docs_words(tips, NULL, NULL));
    cmd_docs_words(tips, reply_tip, c);
}

static void reply_command_info(client_t *c, const command_t *cmd)
{
    if (!cmd) {
        reply_null(c); /* $-1 in RESP2, as Redis's addReplyNull */
        return;
    }
    reply_array(c, 10);
    reply_bulk_cstr(c, cmd->fullname[0] ? cmd->fullname : cmd->name);
    reply_int(c, cmd->arity);
    int nf = 0;
    for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
        nf += (cmd->flags & flag_names[i].flag) != 0;
    reply_set(c, nf);
    for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
        if (cmd->flags & flag_names[i].flag) reply_simple(c, flag_names[i].name);
    reply_int(c, cmd->first_key);
    reply_int(c, cmd->last_key);
    reply_int(c, cmd->key_step);
    reply_categories(c, cmd);
    reply_command_tips(c, cmd);
    reply_key_specs(c, cmd);
    int ns = 0;
    for (const command_t *s = cmd->subcommands; s && s->name; s++) ns++;
    if (ns) reply_array(c, ns);
    else reply_set(c, 0); /* RESP3: key specs and "no subcommands" are sets, as Redis's */
    for (const command_t *s = cmd->subcommands; s && s->name; s++) reply_command_info(c, s);
}

static void info_each(void *ud, const command_t *cmd)
{
    reply_command_info(ud, cmd);
}

static void command_cmd(client_t *c)
{
    reply_array(c, (long long)command_count());
    command_foreach(info_each, c);
}

static void command_count_cmd(client_t *c)
{
    reply_int(c, (long long)command_count());
}

static const command_t *lookup_full(const resp_arg_t *a)
{
    const char *bar = memchr(a->ptr, '|', a->len);
    if (!bar) return command_lookup(a);
    resp_arg_t parent = {a->ptr, (size_t)(bar - a->ptr)};
    resp_arg_t sub = {bar + 1, a->len - parent.len - 1};
    const command_t *p = command_lookup(&parent);
    return p ? command_lookup_sub(p, &sub) : NULL;
}

static void command_info_cmd(client_t *c)
{
    if (c->argc == 2) {
        command_cmd(c);
        return;
    }
    reply_array(c, c->argc - 2);
    for (int j = 2; j < c->argc; j++) reply_command_info(c, lookup_full(&c->argv[j]));
}

static void reply_doc_args(client_t *c, const cmd_doc_arg_t *args, size_t n)
{
    static const char *const flag_words[] = {"optional", "multiple", "multiple_token"};
    reply_array(c, (long long)n);
    for (const cmd_doc_arg_t *a = args; a < args + n; a++) {
        int nested = a->type == CMD_DOC_ARG_ONEOF || a->type == CMD_DOC_ARG_BLOCK;
        reply_map(c, 2 + (a->key_spec_index >= 0) + !!a->token + !!a->since +
                         !!a->deprecated_since + !!a->flags + nested);
        reply_bulk_cstr(c, "name");
        reply_bulk_cstr(c, a->name);
        reply_bulk_cstr(c, "type");
        reply_bulk_cstr(c, cmd_doc_arg_type_name(a->type));
        if (a->key_spec_index >= 0) {
            reply_bulk_cstr(c, "key_spec_index");
            reply_int(c, a->key_spec_index);
        }
        if (a->token) {
            reply_bulk_cstr(c, "token");
            reply_bulk_cstr(c, a->token);
        }
        if (a->since) {
            reply_bulk_cstr(c, "since");
            reply_bulk_cstr(c, a->since);
        }
        if (a->deprecated_since) {
            reply_bulk_cstr(c, "deprecated_since");
            reply_bulk_cstr(c, a->deprecated_since);
        }
        if (a->flags) {
            reply_bulk_cstr(c, "flags");
            reply_set(c, __builtin_popcount(a->flags));
            for (unsigned i = 0; i < 3; i++)
                if (a->flags & (1u << i)) reply_simple(c, flag_words[i]);
        }
        if (nested) {
            reply_bulk_cstr(c, "arguments");
            reply_doc_args(c, a->args, a->nargs);
        }
    }
}

/* History lines are "<version> <text>": a set of [version, text] pairs. */
static void reply_doc_history(client_t *c, const char *h)
{
    long long n = 1;
    for (const char *p = h; *p; p++) n += *p == '\n';
    reply_set(c, n);
    while (*h) {
        size_t line = strcspn(h, "\n"), vlen = strcspn(h, " ");
        assert(vlen < line);
        reply_array(c, 2);
        reply_bulk(c, h, vlen);
        reply_bulk(c, h + vlen + 1, line - vlen - 1);
        h += line + (h[line] == '\n');
    }
}

static void reply_doc_flags(client_t *c, unsigned flags)
{
    reply_set(c, __builtin_popcount(flags));
    if (flags & CMD_DOC_DEPRECATED) reply_simple(c, "deprecated");
    if (flags & CMD_DOC_SYSCMD) reply_simple(c, "syscmd");
}

/* As Redis 7.0's: summary, since, group, complexity (when the command has one), doc_flags,
 * deprecated_since, replaced_by, history, arguments (when there are any: cmd_docs.c), then the
 * subcommands' docs. */
static void reply_command_doc(client_t *c, const command_t *cmd)
{
    const cmd_doc_t *d = cmd_docs_find(cmd->fullname);
    int ns = 0;
    for (const command_t *s = cmd->subcommands; s && s->name; s++) ns++;
    int has_complexity = !cmd->complexity || cmd->complexity[0];
    reply_map(c, 3 + has_complexity + (ns > 0) +
                     (d ? !!d->doc_flags + !!d->deprecated_since + !!d->replaced_by + !!d->history +
                              (d->nargs > 0)
                        : 0));
    reply_bulk_cstr(c, "summary");
    reply_bulk_cstr(c, cmd->summary ? cmd->summary : "");
    reply_bulk_cstr(c, "since");
    reply_bulk_cstr(c, cmd->since ? cmd->since : "1.0.0");
    reply_bulk_cstr(c, "group");
    reply_bulk_cstr(c, cmd->group ? cmd->group : "server");
    if (has_complexity) {
        reply_bulk_cstr(c, "complexity");
        reply_bulk_cstr(c, cmd->complexity ? cmd->complexity : "O(1)");
    }
    if (d && d->doc_flags) {
        reply_bulk_cstr(c, "doc_flags");
        reply_doc_flags(c, d->doc_flags);
    }
    if (d && d->deprecated_since) {
        reply_bulk_cstr(c, "deprecated_since");
        reply_bulk_cstr(c, d->deprecated_since);
    }
    if (d && d->replaced_by) {
        reply_bulk_cstr(c, "replaced_by");
        reply_bulk_cstr(c, d->replaced_by);
    }
    if (d && d->history) {
        reply_bulk_cstr(c, "history");
        reply_doc_history(c, d->history);
    }
    if (d && d->nargs) {
        reply_bulk_cstr(c, "arguments");
        reply_doc_args(c, d->args, d->nargs);
    }
    if (ns) {
        reply_bulk_cstr(c, "subcommands");
        reply_map(c, ns);
        for (const command_t *s = cmd->subcommands; s && s->name; s++) {
            reply_bulk_cstr(c, s->fullname);
            reply_command_doc(c, s);
        }
    }
}

static void doc_each(void *ud, const command_t *cmd)
{
    reply_bulk_cstr(ud, cmd->name);
    reply_command_doc(ud, cmd);
}

static void command_docs_cmd(client_t *c)
{
    if (c->argc == 2) {
        reply_map(c, (long long)command_count());
        command_foreach(doc_each, c);
        return;
    }
    size_t h = reply_defer(c);
    long long n = 0;
    for (int j = 2; j < c->argc; j++) {
        const command_t *cmd = lookup_full(&c->argv[j]);
        if (!cmd) continue;
        reply_bulk_cstr(c, cmd->fullname[0] ? cmd->fullname : cmd->name);
        reply_command_doc(c, cmd);
        n++;
    }
    reply_defer_finish(c, h, '%', n);
}

struct list_ctx {
    client_t *c;
    const resp_arg_t *pattern, *category;
    long long n;
};

struct cat_match {
    const resp_arg_t *want;
    int hit;
};

static void match_category(void *ud, const char *cat)
{
    struct cat_match *m = ud;
    m->hit |= arg_is(m->want, cat);
}

/* Whether cmd passes COMMAND LIST's filter: its full name ("config|get") matches the pattern
 * (glob, any case), or the category (without '@') is one of its ACL categories. */
static int list_match(const struct list_ctx *x, const command_t *cmd)
{
    if (x->pattern)
        return strglob_match(x->pattern->ptr, x->pattern->len, cmd->fullname,
                             strlen(cmd->fullname), 1);
    if (x->category) {
        struct cat_match m = {x->category, 0};
        acl_command_categories(cmd, match_category, &m);
        return m.hit;
    }
    return 1;
}

/* Every command and subcommand, as Redis 7.0 lists them: the parent, then its "parent|sub"s. */
static void list_each(void *ud, const command_t *cmd)
{
    struct list_ctx *x = ud;
    if (list_match(x, cmd)) {
        reply_bulk_cstr(x->c, cmd->fullname);
        x->n++;
    }
    for (const command_t *s = cmd->subcommands; s && s->name; s++) {
        if (!list_match(x, s)) continue;
        reply_bulk_cstr(x->c, s->fullname);
        x->n++;
    }
}

static void command_list_cmd(client_t *c)
{
    struct list_ctx x = {c, NULL, NULL, 0};
    if (c->argc == 5 && arg_is(&c->argv[2], "FILTERBY")) {
        if (arg_is(&c->argv[3], "PATTERN")) x.pattern = &c->argv[4];
        else if (arg_is(&c->argv[3], "ACLCAT")) x.category = &c->argv[4];
        else if (arg_is(&c->argv[3], "MODULE")) {
            reply_array(c, 0); /* no modules: no module's commands */
            return;
        } else {
            reply_syntax_error(c);
            return;
        }
    } else if (c->argc != 2) {
        reply_syntax_error(c);
        return;
    }
    size_t h = reply_defer(c);
    command_foreach(list_each, &x);
    reply_defer_finish(c, h, '*', x.n);
}

/* COMMAND GETKEYS, and GETKEYSANDFLAGS (with_flags): each key with its key spec's flags. */
static void getkeys_generic(client_t *c, int with_flags)
{
    resp_arg_t *argv = c->argv + 2;
    int argc = c->argc - 2;
    const command_t *cmd = command_lookup(&argv[0]);
    if (cmd && cmd->subcommands && argc >= 2) cmd = command_lookup_sub(cmd, &argv[1]);
    if (!cmd) {
        reply_error(c, "ERR Invalid command specified");
        return;
    }
    if ((cmd->arity > 0 && argc != cmd->arity) || argc < -cmd->arity) {
        reply_error(c, "ERR Invalid number of arguments specified for command");
        return;
    }
    /* at most one key per argument: sized by the request, which is already in memory */
    int *pos = xmalloc(sizeof(int) * (size_t)argc);
    int n = command_get_keys(cmd, argc, argv, pos, argc);
    if (n == 0 && (cmd->flags & CMD_NO_MANDATORY_KEYS)) {
        reply_array(c, 0);
    } else if (n == 0 && (cmd->first_key || cmd->getkeys)) {
        reply_error(c, "ERR Invalid arguments specified for command"); /* as Redis 7.0 */
    } else if (n == 0) {
        reply_error(c, "ERR The command has no key arguments");
    } else {
        reply_array(c, n);
        for (int i = 0; i < n; i++) {
            char fl[64];
            if (with_flags) reply_array(c, 2);
            reply_bulk(c, argv[pos[i]].ptr, argv[pos[i]].len);
            if (with_flags) reply_flag_words(c, command_call_key_flags(cmd, argc, argv, i, fl));
        }
    }
    xfree(pos);
}

static void command_getkeys_cmd(client_t *c)
{
    getkeys_generic(c, 0);
}

static void command_getkeysandflags_cmd(client_t *c)
{
    getkeys_generic(c, 1);
}

static void command_help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "(no subcommand)",
        "    Return details about all Redis commands.",
        "COUNT",
        "    Return the total number of commands in this Redis server.",
        "LIST",
        "    Return a list of all commands in this Redis server.",
        "INFO [<command-name> ...]",
        "    Return details about multiple Redis commands.",
        "DOCS [<command-name> ...]",
        "    Return documentation details about multiple Redis commands.",
        "GETKEYS <full-command>",
        "    Return the keys from a full Redis command.",
        "GETKEYSANDFLAGS <full-command>",
        "    Return the keys and the access flags from a full Redis command.",
        "HELP",
        "    Print this help.",
    };
    help_reply(c, lines, sizeof(lines) / sizeof(lines[0]));
}

/* COMMAND alone lists everything; with a subcommand the dispatcher runs the row below. */
static command_t command_subcommands[] = {
    {"count", command_count_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.8.13",
     "Returns a count of commands.", "O(1)"},
    {"info", command_info_cmd, -2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.8.13",
     "Returns information about one, multiple or all commands.",
     "O(N) where N is the number of commands to look up"},
    {"docs", command_docs_cmd, -2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "7.0.0",
     "Returns documentary information about one, multiple or all commands.",
     "O(N) where N is the number of commands to look up"},
    {"list", command_list_cmd, -2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "7.0.0",
     "Returns a list of command names.", "O(N) where N is the total number of Redis commands"},
    {"getkeys", command_getkeys_cmd, -4, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.8.13",
     "Extracts the key names from an arbitrary command.",
     "O(N) where N is the number of arguments to the command"},
    {"getkeysandflags", command_getkeysandflags_cmd, -4, CMD_LOADING | CMD_STALE, 0, 0, 0,
     "server", "7.0.0", "Extracts the key names and access flags for an arbitrary command.",
     "O(N) where N is the number of arguments to the command"},
    {"help", command_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "5.0.0",
     "Returns helpful text about the different subcommands.", "O(1)"},
    {NULL},
};

static command_t config_subcommands[] = {
    {"get", config_get_cmd, -3, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "server", "2.0.0", "Returns the effective values of configuration parameters.",
     "O(N) when N is the number of configuration parameters provided"},
    {"set", config_set_cmd, -4, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "server", "2.0.0", "Sets configuration parameters in-flight.",
     "O(N) when N is the number of configuration parameters provided"},
    {"resetstat", config_resetstat_cmd, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0,
     0, 0, "server", "2.0.0", "Resets the server's statistics.", "O(1)"},
    {"rewrite", config_rewrite_cmd, 2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0,
     0, "server", "2.8.0", "Persists the effective configuration to file.", "O(1)"},
    {"help", config_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "5.0.0",
     "Returns helpful text about the different subcommands.", "O(1)"},
    {NULL},
};

/* ---- MEMORY ---- */

static void memory_usage_cmd(client_t *c)
{
    if (c->argc != 3 && !(c->argc == 5 && arg_is(&c->argv[3], "SAMPLES"))) {
        reply_syntax_error(c);
        return;
    }
    if (c->argc == 5) {
        long long samples;
        if (arg_ll_or_reply(c, &c->argv[4], &samples, NULL) < 0) return;
    }
    kv_t *kv = db_lookup(c->db, c->argv[2].ptr, c->argv[2].len);
    if (!kv) {
        reply_null(c);
        return;
    }
    reply_int(c, (long long)(alloc_size(kv) + obj_memory(kv->val)));
}

static void memory_purge_cmd(client_t *c)
{
    if (alloc_purge() < 0) reply_error(c, "ERR Error purging dirty pages");
    else reply_ok(c);
}

static double ratio(size_t a, size_t b)
{
    return b ? (double)a / (double)b : 0.0;
}

/* What MEMORY STATS and MEMORY DOCTOR look at, as Redis's getMemoryOverheadData: overhead is
 * what the server holds besides the data (its start-up memory, the clients' buffers, the
 * keyspace's bucket arrays); the dataset is the rest. */
typedef struct mem_overview {
    size_t peak, total, startup, clients, overhead, dataset, keys;
    size_t clients_n, biggest_client;
    double dataset_perc, peak_perc;
    alloc_stats_t st;
    size_t rss;
} mem_overview_t;

static size_t client_memory(const client_t *x)
{
    return sizeof(*x) + x->qbuf.cap + x->out.cap + x->seg_bytes;
}

static void mem_overview(mem_overview_t *m)
{
    memset(m, 0, sizeof(*m));
    m->peak = server_memory_peak();
    m->total = alloc_used_memory();
    m->startup = srv.startup_memory;
    for (client_t *x = srv.clients; x; x = x->next) {
        size_t n = client_memory(x);
        m->clients += n;
        m->clients_n++;
        if (n > m->biggest_client) m->biggest_client = n;
    }
    m->overhead = m->startup + m->clients;
    for (int i = 0; i < srv.ndb; i++) {
        m->overhead += dict_buckets_bytes(&srv.db[i].keys) + dict_buckets_bytes(&srv.db[i].expires);
        m->keys += db_size(&srv.db[i]);
    }
    m->dataset = m->total > m->overhead ? m->total - m->overhead : 0;
    size_t net = m->total > m->startup ? m->total - m->startup : 0;
    m->dataset_perc = net ? (double)m->dataset * 100 / (double)net : 0;
    m->peak_perc = m->peak ? (double)m->total * 100 / (double)m->peak : 0;
    alloc_stats(&m->st);
    m->rss = alloc_rss();
}

static void stat_int(client_t *c, const char *name, long long v)
{
    reply_bulk_cstr(c, name);
    reply_int(c, v);
}

static void stat_double(client_t *c, const char *name, double v)
{
    reply_bulk_cstr(c, name);
    reply_double(c, v);
}

/* MEMORY STATS: Redis 7.0's map, field for field (replication, cluster, AOF-buffer, Lua and
 * function caches are 0 here: there are none of them), then db.<n> for each non-empty
 * database with the bytes of its two hash tables' bucket arrays. */
static void memory_stats_cmd(client_t *c)
{
    mem_overview_t m;
    mem_overview(&m);
    int ndb = 0;
    for (int i = 0; i < srv.ndb; i++) ndb += db_size(&srv.db[i]) > 0;
    reply_map(c, 27 + ndb);
    stat_int(c, "peak.allocated", (long long)m.peak);
    stat_int(c, "total.allocated", (long long)m.total);
    stat_int(c, "startup.allocated", (long long)m.startup);
    stat_int(c, "replication.backlog", 0);
    stat_int(c, "clients.slaves", 0);
    stat_int(c, "clients.normal", (long long)m.clients);
    stat_int(c, "cluster.links", 0);
    stat_int(c, "aof.buffer", 0);
    stat_int(c, "lua.caches", 0);
    stat_int(c, "functions.caches", 0);
    stat_int(c, "overhead.total", (long long)m.overhead);
    stat_int(c, "keys.count", (long long)m.keys);
    stat_int(c, "keys.bytes-per-key",
             m.keys ? (long long)((m.total > m.startup ? m.total - m.startup : 0) / m.keys) : 0);
    stat_int(c, "dataset.bytes", (long long)m.dataset);
    stat_double(c, "dataset.percentage", m.dataset_perc);
    stat_double(c, "peak.percentage", m.peak_perc);
    stat_int(c, "allocator.allocated", (long long)m.st.allocated);
    stat_int(c, "allocator.active", (long long)m.st.active);
    stat_int(c, "allocator.resident", (long long)m.st.resident);
    stat_double(c, "allocator-fragmentation.ratio", ratio(m.st.active, m.st.allocated));
    stat_int(c, "allocator-fragmentation.bytes", (long long)m.st.active - (long long)m.st.allocated);
    stat_double(c, "allocator-rss.ratio", ratio(m.st.resident, m.st.active));
    stat_int(c, "allocator-rss.bytes", (long long)m.st.resident - (long long)m.st.active);
    stat_double(c, "rss-overhead.ratio", ratio(m.rss, m.st.resident));
    stat_int(c, "rss-overhead.bytes", (long long)m.rss - (long long)m.st.resident);
    stat_double(c, "fragmentation", ratio(m.rss, m.total));
    stat_int(c, "fragmentation.bytes", (long long)m.rss - (long long)m.total);
    for (int i = 0; i < srv.ndb; i++) {
        if (!db_size(&srv.db[i])) continue;
        char name[32];
        snprintf(name, sizeof(name), "db.%d", i);
        reply_bulk_cstr(c, name);
        reply_map(c, 2);
        stat_int(c, "overhead.hashtable.main", (long long)dict_buckets_bytes(&srv.db[i].keys));
        stat_int(c, "overhead.hashtable.expires",
                 (long long)dict_buckets_bytes(&srv.db[i].expires));
    }
}

/* MEMORY DOCTOR: a report in words of what mem_overview shows, checking what Redis's doctor
 * checks that applies here: an almost empty server, a peak far above the memory in use, RSS
 * far above it (fragmentation), and clients whose buffers hold much memory. */
static void memory_doctor_cmd(client_t *c)
{
    mem_overview_t m;
    mem_overview(&m);
    buf_t b;
    buf_init(&b);
    if (m.total < 5 * 1024 * 1024) {
        buf_append_str(&b, "Hi Sam, this instance is empty or is using very little memory, my "
                           "issues detector can't be used in these conditions. Please, leave "
                           "for your mission on Earth and fill it with some data. The new Sam "
                           "and I will be back to our programming as soon as I finished "
                           "rebooting.\n");
    } else {
        buf_t issues;
        buf_init(&issues);
        if (m.peak > m.total + m.total / 2)
            buf_printf(&issues, " * Peak memory: at some point the server used %zu bytes, more "
                                "than 150%% of the %zu bytes it uses now. RSS may stay near the "
                                "peak; MEMORY PURGE gives freed pages back.\n\n",
                       m.peak, m.total);
        if (m.rss > m.total + m.total * 2 / 5 && m.rss - m.total > 10 * 1024 * 1024)
            buf_printf(&issues, " * High fragmentation: RSS is %.2f times the memory in use "
                                "(INFO memory's fragmentation fields say where).\n\n",
                       ratio(m.rss, m.total));
        if (m.clients_n && m.clients / m.clients_n > 200 * 1024)
            buf_printf(&issues, " * Big client buffers: the %zu clients hold %zu bytes, %zu on "
                                "average (CLIENT LIST's qbuf and omem fields say which).\n\n",
                       (size_t)m.clients_n, m.clients, m.clients / m.clients_n);
        if (issues.len)
            buf_printf(&b, "Sam, I detected a few issues in this Redis instance memory "
                           "implants:\n\n%s"
                           "I'm here to keep you safe, Sam. I want to help you.\n",
                       issues.data);
        else
            buf_append_str(&b, "Hi Sam, I can't find any memory issue in your instance. I can "
                               "only account for what occurs on this base.\n");
        buf_deinit(&issues);
    }
    reply_verbatim(c, b.data, b.len, "txt");
    buf_deinit(&b);
}

static void malloc_stats_piece(void *ud, const char *text)
{
    buf_append_str(ud, text);
}

/* MEMORY MALLOC-STATS: jemalloc's own report, as Redis gives it. */
static void memory_malloc_stats_cmd(client_t *c)
{
    buf_t b;
    buf_init(&b);
    if (alloc_stats_report(malloc_stats_piece, &b) < 0)
        buf_append_str(&b, "Stats not supported for the current allocator");
    reply_verbatim(c, b.data ? b.data : "", b.len, "txt");
    buf_deinit(&b);
}

static void memory_help_cmd(client_t *c)
{
    static const char *const lines[] = {
        "MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
        "USAGE <key> [SAMPLES <count>]",
        "    Return memory in bytes used by <key> and its value.",
        "PURGE",
        "    Attempt to purge dirty pages for reclamation by the allocator.",
        "STATS",
        "    Return information about the memory usage of the server.",
        "MALLOC-STATS",
        "    Return internal statistics report from the memory allocator.",
        "DOCTOR",
        "    Return memory problems reports.",
        "HELP",
        "    Print this help.",
    };
    help_reply(c, lines, sizeof(lines) / sizeof(lines[0]));
}

static command_t memory_subcommands[] = {
    {"usage", memory_usage_cmd, -3, CMD_READONLY, 2, 2, 1, "server", "4.0.0",
     "Estimates the memory usage of a key.", "O(N) where N is the number of samples.",
     .key_flags = "RO"},
    {"purge", memory_purge_cmd, 2, 0, 0, 0, 0, "server", "4.0.0",
     "Asks the allocator to release memory.", "Depends on how much memory is allocated, could be slow"},
    {"stats", memory_stats_cmd, 2, 0, 0, 0, 0, "server", "4.0.0",
     "Returns details about memory usage.", "O(1)"},
    {"malloc-stats", memory_malloc_stats_cmd, 2, 0, 0, 0, 0, "server", "4.0.0",
     "Returns the allocator statistics.", "Depends on how much memory is allocated, could be slow"},
    {"doctor", memory_doctor_cmd, 2, 0, 0, 0, 0, "server", "4.0.0",
     "Outputs a memory problems report.", "O(1)"},
    {"help", memory_help_cmd, 2, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "4.0.0",
     "Returns helpful text about the different subcommands.", "O(1)"},
    {NULL},
};

static void container_cmd(client_t *c)
{
    reply_arity_error(c);
}

/* ---- INFO ---- */

static void bytes_human(char *out, size_t len, double n)
{
    static const char *units = "BKMGTP";
    int u = 0;
    while (n >= 1024 && u < 5) {
        n /= 1024;
        u++;
    }
    if (u == 0) snprintf(out, len, "%.0fB", n);
    else snprintf(out, len, "%.2f%c", n, units[u]);
}

static void info_server(buf_t *b)
{
    struct utsname un;
    uname(&un);
    long long up = (time_ms() - srv.start_ms) / 1000;
    /* Redis's fields in Redis's order (clients and Redis's own tests read redis_git_sha1 and
     * friends): not built from Redis's git, so the sha is zeros as in a Redis release tarball;
     * the build id hashes our version and the compiler's. */
    const char *build = CTE_VERSION " " __VERSION__;
    uint64_t id = 1469598103934665603ull;
    for (const char *p = build; *p; p++)
        id = (id ^ (unsigned char)*p) * 1099511628211ull;
    const char *notify = getenv("NOTIFY_SOCKET");
    int systemd = srv.cfg.supervised != CONFIG_SUPERVISED_NO && notify && *notify;
    buf_printf(b,
               "# Server\r\nredis_version:%s\r\nredis_git_sha1:00000000\r\nredis_git_dirty:0\r\n"
               "redis_build_id:%016llx\r\ncte_version:%s\r\nredis_mode:%s\r\n"
               "os:%s %s %s\r\narch_bits:64\r\nmonotonic_clock:POSIX clock_gettime\r\n"
               "multiplexing_api:epoll\r\natomicvar_api:c11-builtin\r\ngcc_version:%d.%d.%d\r\n"
               "process_id:%d\r\nprocess_supervised:%s\r\nrun_id:%s\r\ntcp_port:%d\r\n"
               "server_time_usec:%lld\r\nuptime_in_seconds:%lld\r\nuptime_in_days:%lld\r\nhz:%d\r\n"
               "configured_hz:%d\r\nlru_clock:%u\r\nexecutable:%s\r\nconfig_file:%s\r\n"
               "io_threads_active:0\r\n\r\n",
               COMPAT_REDIS_VERSION, (unsigned long long)id, CTE_VERSION,
               cluster ? "cluster" : "standalone", un.sysname, un.release,
               un.machine, __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__, (int)getpid(),
               systemd ? "systemd" : "no", srv.run_id, srv.tcp_port, time_us(), up, up / 86400,
               srv.cfg.hz, srv.cfg.hz, storage_lru_clock, srv.executable ? srv.executable : "",
               srv.cfg.config_file ? srv.cfg.config_file : "");
}

static void info_clients(buf_t *b)
{
    uint64_t blocked = block_count();
    tracking_stats_t tr;
    tracking_stats(&tr);
    buf_printf(b,
               "# Clients\r\nconnected_clients:%llu\r\ncluster_connections:0\r\n"
               "maxclients:%d\r\nblocked_clients:%llu\r\ntracking_clients:%llu\r\n"
               "clients_in_timeout_table:0\r\nshm_clients:%llu\r\nshm_data_in_bytes:%llu\r\n"
               "shm_data_out_bytes:%llu\r\n\r\n",
               (unsigned long long)srv.nclients, srv.cfg.maxclients, (unsigned long long)blocked,
               (unsigned long long)tr.clients, (unsigned long long)srv.nshm_clients,
               (unsigned long long)srv.stat.shm_data_in_bytes,
               (unsigned long long)srv.stat.shm_data_out_bytes);
}

static void get_one(void *ud, const char *name, const char *value)
{
    snprintf(ud, 64, "%s", value);
}

/* Redis 7.0's fragmentation fields, from jemalloc's stats and the process's RSS. */
static void info_memory_fragmentation(buf_t *b, size_t used, size_t rss,
                                      const alloc_stats_t *st)
{
    buf_printf(b,
               "allocator_frag_ratio:%.2f\r\nallocator_frag_bytes:%lld\r\n"
               "allocator_rss_ratio:%.2f\r\nallocator_rss_bytes:%lld\r\n"
               "rss_overhead_ratio:%.2f\r\nrss_overhead_bytes:%lld\r\n"
               "mem_fragmentation_ratio:%.2f\r\nmem_fragmentation_bytes:%lld\r\n",
               ratio(st->active, st->allocated),
               (long long)st->active - (long long)st->allocated, ratio(st->resident, st->active),
               (long long)st->resident - (long long)st->active, ratio(rss, st->resident),
               (long long)rss - (long long)st->resident, ratio(rss, used),
               (long long)rss - (long long)used);
}

static void info_memory(buf_t *b)
{
    char h1[32], h2[32], h3[32], policy[64] = "";
    alloc_stats_t st;
    config_get(&srv.cfg, "maxmemory-policy", get_one, policy);
    size_t used = alloc_used_memory(), rss = alloc_rss();
    alloc_stats(&st);
    bytes_human(h1, sizeof(h1), (double)used);
    bytes_human(h2, sizeof(h2), (double)rss);
    bytes_human(h3, sizeof(h3), (double)srv.cfg.maxmemory);
    size_t peak = server_memory_peak();
    char h4[32];
    bytes_human(h4, sizeof(h4), (double)peak);
    buf_printf(b,
               "# Memory\r\nused_memory:%zu\r\nused_memory_human:%s\r\nused_memory_rss:%zu\r\n"
               "used_memory_rss_human:%s\r\nused_memory_peak:%zu\r\nused_memory_peak_human:%s\r\n"
               "used_memory_startup:%zu\r\nallocator_allocated:%zu\r\n"
               "allocator_active:%zu\r\nallocator_resident:%zu\r\nmaxmemory:%lld\r\n"
               "maxmemory_human:%s\r\nmaxmemory_policy:%s\r\n",
               used, h1, rss, h2, peak, h4, srv.startup_memory, st.allocated, st.active, st.resident,
               (long long)srv.cfg.maxmemory, h3, policy);
    info_memory_fragmentation(b, used, rss, &st);
    script_info_memory(b);
    /* RAM tiers' blob bytes are not counted for maxmemory */
    size_t counted = evict_counted_memory();
    buf_printf(b,
               "mem_not_counted_for_evict:%zu\r\nmem_allocator:%s\r\n"
               "lazyfree_pending_objects:%llu\r\n\r\n",
               used > counted ? used - counted : 0, alloc_name(),
               (unsigned long long)lazyfree_pending());
}

static void info_persistence(buf_t *b)
{
    aof_info(b);
}

static void info_stats(buf_t *b)
{
    const server_stats_t *s = &srv.stat;
    uint64_t nch, npat;
    pubsub_counts(&nch, &npat);
    tracking_stats_t tr;
    tracking_stats(&tr);
    buf_printf(b,
               "# Stats\r\ntotal_connections_received:%llu\r\ntotal_commands_processed:%llu\r\n"
               "instantaneous_ops_per_sec:%llu\r\ntotal_net_input_bytes:%llu\r\n"
               "total_net_output_bytes:%llu\r\nrejected_connections:%llu\r\n"
               "expired_keys:%llu\r\nevicted_keys:%llu\r\nkeyspace_hits:%llu\r\n"
               "keyspace_misses:%llu\r\npubsub_channels:%llu\r\npubsub_patterns:%llu\r\n"
               "migrate_cached_sockets:%d\r\n"
               "tracking_total_keys:%llu\r\ntracking_total_items:%llu\r\n"
               "tracking_total_prefixes:%llu\r\n"
               "client_query_buffer_limit_disconnections:%llu\r\n"
               "client_output_buffer_limit_disconnections:%llu\r\n"
               "total_error_replies:%llu\r\nunexpected_error_replies:%llu\r\nlazyfreed_objects:%llu\r\n"
               "socket_spins:%llu\r\nsocket_spin_hits:%llu\r\nspin_crowded:%llu\r\n\r\n",
               (unsigned long long)s->numconnections, (unsigned long long)s->numcommands,
               (unsigned long long)server_ops_per_sec(), (unsigned long long)s->net_input_bytes,
               (unsigned long long)s->net_output_bytes, (unsigned long long)s->rejected_conn,
               (unsigned long long)s->expired_keys, (unsigned long long)s->evicted_keys,
               (unsigned long long)s->keyspace_hits, (unsigned long long)s->keyspace_misses,
               (unsigned long long)nch, (unsigned long long)npat, migrate_cached_sockets(),
               (unsigned long long)tr.keys,
               (unsigned long long)tr.items, (unsigned long long)tr.prefixes,
               (unsigned long long)s->client_qbuf_limit_disconnections,
               (unsigned long long)s->client_outbuf_limit_disconnections,
               (unsigned long long)s->total_error_replies,
               (unsigned long long)s->unexpected_error_replies,
               (unsigned long long)lazyfree_freed(), (unsigned long long)s->socket_spins,
               (unsigned long long)s->socket_spin_hits,
               (unsigned long long)s->spin_crowded);
}

static void info_replication(buf_t *b)
{
    buf_printf(b, "# Replication\r\nrole:master\r\nconnected_slaves:0\r\nmaster_replid:%s\r\n"
                  "master_repl_offset:0\r\n\r\n",
               srv.run_id);
}

static void info_cpu(buf_t *b)
{
    struct rusage self, children;
    getrusage(RUSAGE_SELF, &self);
    getrusage(RUSAGE_CHILDREN, &children);
    buf_printf(b,
               "# CPU\r\nused_cpu_sys:%ld.%06ld\r\nused_cpu_user:%ld.%06ld\r\n"
               "used_cpu_sys_children:%ld.%06ld\r\nused_cpu_user_children:%ld.%06ld\r\n\r\n",
               (long)self.ru_stime.tv_sec, (long)self.ru_stime.tv_usec,
               (long)self.ru_utime.tv_sec, (long)self.ru_utime.tv_usec,
               (long)children.ru_stime.tv_sec, (long)children.ru_stime.tv_usec,
               (long)children.ru_utime.tv_sec, (long)children.ru_utime.tv_usec);
}

static void cmdstat_line(buf_t *b, const command_t *cmd)
{
    if (cmd->calls == 0 && cmd->rejected_calls == 0 && cmd->failed_calls == 0) return;
    char name[64];
    snprintf(name, sizeof(name), "%s", cmd->fullname);
    buf_printf(b,
               "cmdstat_%s:calls=%llu,usec=%llu,usec_per_call=%.2f,rejected_calls=%llu,"
               "failed_calls=%llu\r\n",
               name, (unsigned long long)cmd->calls, (unsigned long long)cmd->usec,
               cmd->calls ? (double)cmd->usec / (double)cmd->calls : 0.0,
               (unsigned long long)cmd->rejected_calls, (unsigned long long)cmd->failed_calls);
}

static void cmdstat_each(void *ud, const command_t *cmd)
{
    cmdstat_line(ud, cmd);
    for (const command_t *s = cmd->subcommands; s && s->name; s++) cmdstat_line(ud, s);
}

static void info_commandstats(buf_t *b)
{
    buf_append_str(b, "# Commandstats\r\n");
    command_foreach(cmdstat_each, b);
    buf_append_str(b, "\r\n");
}

static void info_errorstats(buf_t *b)
{
    buf_append_str(b, "# Errorstats\r\n");
    server_info_errorstats(b);
    buf_append_str(b, "\r\n");
}

static void info_latencystats(buf_t *b)
{
    buf_append_str(b, "# Latencystats\r\n");
    introspect_info_latencystats(b);
    buf_append_str(b, "\r\n");
}

/* No modules: the section is there, empty, as in a Redis without modules. */
static void info_modules(buf_t *b)
{
    buf_append_str(b, "# Modules\r\n\r\n");
}

static void info_keyspace(buf_t *b)
{
    buf_append_str(b, "# Keyspace\r\n");
    for (int i = 0; i < srv.ndb; i++) {
        db_t *db = &srv.db[i];
        if (db_size(db) == 0) continue;
        buf_printf(b, "db%d:keys=%llu,expires=%llu,avg_ttl=%lld\r\n", i,
                   (unsigned long long)db_size(db), (unsigned long long)db_expires_size(db),
                   db->avg_ttl);
    }
    buf_append_str(b, "\r\n");
}

/* redis-py's suite and cluster-aware clients read cluster_enabled (cluster-enabled). */
static void info_cluster(buf_t *b)
{
    buf_printf(b, "# Cluster\r\ncluster_enabled:%d\r\n\r\n", cluster ? 1 : 0);
}

typedef struct info_section {
    const char *name;
    void (*fn)(buf_t *b);
    int in_default;
} info_section_t;

static const info_section_t sections[] = {
    {"server", info_server, 1},         {"clients", info_clients, 1},
    {"memory", info_memory, 1},         {"persistence", info_persistence, 1},
    {"stats", info_stats, 1},           {"replication", info_replication, 1},
    {"cpu", info_cpu, 1},               {"modules", info_modules, 1},
    {"commandstats", info_commandstats, 0},
    {"errorstats", info_errorstats, 1}, {"latencystats", info_latencystats, 0},
    {"cluster", info_cluster, 1},
    {"keyspace", info_keyspace, 1},
    {"tiers", tagcmd_info_tiers, 1},       {"search", searchcmd_info, 1},
};

static void info_cmd(client_t *c)
{
    int want[sizeof(sections) / sizeof(sections[0])] = {0};
    size_t ns = sizeof(sections) / sizeof(sections[0]);
    if (c->argc == 1) {
        for (size_t i = 0; i < ns; i++) want[i] = sections[i].in_default;
    }
    for (int j = 1; j < c->argc; j++) {
        const resp_arg_t *a = &c->argv[j];
        for (size_t i = 0; i < ns; i++) {
            if (arg_is(a, "all") || arg_is(a, "everything")) want[i] = 1;
            else if (arg_is(a, "default")) want[i] |= sections[i].in_default;
            else if (arg_is(a, sections[i].name)) want[i] = 1;
        }
    }
    buf_t b;
    buf_init(&b);
    for (size_t i = 0; i < ns; i++)
        if (want[i]) sections[i].fn(&b);
    if (b.len >= 2) b.len -= 2; /* no blank line after the last section */
    reply_verbatim(c, b.data ? b.data : "", b.len, "txt");
    buf_deinit(&b);
}

/* ---- DEBUG (only with enable-debug-command) ---- */

/* DEBUG RELOAD: saves the dataset to the append-only file (SAVE), empties every database and
 * loads the file again, as Redis saves and loads its RDB file. */
static void debug_reload(client_t *c)
{
    char err[256];
    int rc = aof_reload(err, sizeof(err));
    tracking_invalidate_all(); /* emptied and loaded again (or maybe, on failure) */
    if (rc < 0) reply_error(c, err);
    else reply_ok(c);
}

/* DEBUG PROTOCOL: one reply of each RESP type, as Redis's redis-cli tests expect. */
static void debug_protocol(client_t *c, const resp_arg_t *t)
{
    if (arg_is(t, "string")) reply_bulk_cstr(c, "Hello World");
    else if (arg_is(t, "integer")) reply_int(c, 12345);
    else if (arg_is(t, "double")) reply_double(c, 3.141);
    else if (arg_is(t, "bignum")) {
        static const char big[] = "1234567999999999999999999999999999999";
        if (c->resp == 2) reply_bulk_cstr(c, big);
        else reply_proto(c, "(" "1234567999999999999999999999999999999\r\n", sizeof(big) + 2);
    } else if (arg_is(t, "null")) reply_null(c);
    else if (arg_is(t, "array")) {
        reply_array(c, 3);
        for (int j = 0; j < 3; j++) reply_int(c, j);
    } else if (arg_is(t, "set")) {
        reply_set(c, 3);
        for (int j = 0; j < 3; j++) reply_int(c, j);
    } else if (arg_is(t, "map")) {
        reply_map(c, 3);
        for (int j = 0; j < 3; j++) {
            reply_int(c, j);
            reply_bool(c, j == 1);
        }
    } else if (arg_is(t, "attrib")) {
        if (c->resp >= 3) {
            reply_proto(c, "|1\r\n", 4);
            reply_bulk_cstr(c, "key-popularity");
            reply_array(c, 2);
            reply_bulk_cstr(c, "key:123");
            reply_int(c, 90);
        }
        reply_bulk_cstr(c, "Some real reply following the attribute");
    } else if (arg_is(t, "push")) {
        if (c->resp < 3) {
            reply_error(c, "ERR RESP2 is not supported by this command");
            return;
        }
        reply_proto(c, ">2\r\n", 4);
        reply_bulk_cstr(c, "server-cpu-usage");
        reply_int(c, 42);
        reply_bulk_cstr(c, "Some real reply following the push reply");
    } else if (arg_is(t, "true")) reply_bool(c, 1);
    else if (arg_is(t, "false")) reply_bool(c, 0);
    else if (arg_is(t, "verbatim")) {
        static const char txt[] = "This is a verbatim\nstring";
        reply_verbatim(c, txt, sizeof(txt) - 1, "txt");
    } else {
        reply_error(c, "ERR Wrong protocol type name. Please use one of the following: "
                       "string|integer|double|bignum|null|array|set|map|attrib|push|verbatim|"
                       "true|false");
    }
}

/* Bytes a key of DEBUG POPULATE costs at least besides its value (entry, object, name). */
#define POPULATE_KEY_BYTES 48

/* DEBUG POPULATE n keys of size bytes: 0 when they can fit in maxmemory (when set) or else in
 * the machine's RAM, otherwise -1 after an error reply (Redis builds them until it is killed). */
static int populate_fits_or_reply(client_t *c, long long n, long long size)
{
    unsigned __int128 need =
        (unsigned __int128)(unsigned long long)n * ((unsigned long long)size + POPULATE_KEY_BYTES);
    unsigned long long limit = (unsigned long long)srv.cfg.maxmemory;
    if (!limit) {
        limit =
            (unsigned long long)sysconf(_SC_PHYS_PAGES) * (unsigned long long)sysconf(_SC_PAGESIZE);
        if (need <= limit) return 0;
        reply_error(c, "ERR DEBUG POPULATE needs more than the machine's memory");
        return -1;
    }
    if (need <= limit) return 0;
    reply_errorf(c, "ERR DEBUG POPULATE needs more than maxmemory (%llu bytes)", limit);
    return -1;
}

static int debug_allowed(client_t *c)
{
    int mode = srv.cfg.enable_debug_command;
    if (mode == 1 || (mode == 2 && (c->flags & CLIENT_UNIX_SOCKET))) return 1;
    if (mode == 2 && c->ops && c->ops->addr) {
        char peer[128] = "", local[128];
        c->ops->addr(c, peer, sizeof(peer), local, sizeof(local));
        if (strncmp(peer, "127.", 4) == 0 || strncmp(peer, "::1", 3) == 0) return 1;
    }
    return 0;
}

static void debug_cmd(client_t *c)
{
    if (!debug_allowed(c)) {
        reply_error(c, "ERR DEBUG command not allowed. If the enable-debug-command option is "
                       "set to \"local\", you can run it from a local connection, otherwise you "
                       "need to set this option in the configuration file, and then restart the "
                       "server.");
        return;
    }
    const resp_arg_t *sub = &c->argv[1];
    if (arg_is(sub, "SLEEP") && c->argc == 3) {
        double secs;
        if (arg_double_or_reply(c, &c->argv[2], &secs, NULL) < 0) return;
        if (secs > 0) usleep((useconds_t)(secs * 1e6));
        reply_ok(c);
    } else if (arg_is(sub, "ERROR") && c->argc == 3) {
        /* the argument as an error reply, newlines as spaces (clients' tests fake LOADING,
         * READONLY or auth errors with it) */
        char *msg = xmalloc(c->argv[2].len + 1);
        for (size_t i = 0; i < c->argv[2].len; i++) {
            char ch = c->argv[2].ptr[i];
            msg[i] = (ch == '\r' || ch == '\n' || ch == '\0') ? ' ' : ch;
        }
        msg[c->argv[2].len] = '\0';
        reply_error(c, msg);
        xfree(msg);
    } else if (arg_is(sub, "PAUSE-CRON") && c->argc == 3) {
        char num[32]; /* read as Redis's atoi: a leading integer, anything else 0 */
        snprintf(num, sizeof(num), "%.*s", (int)(c->argv[2].len < 31 ? c->argv[2].len : 31),
                 c->argv[2].ptr);
        srv.pause_cron = atoi(num) != 0;
        reply_ok(c);
    } else if (arg_is(sub, "SET-ACTIVE-EXPIRE") && c->argc == 3) {
        srv.cfg.active_expire_enabled = arg_is(&c->argv[2], "1") || arg_is(&c->argv[2], "yes");
        reply_ok(c);
    } else if (arg_is(sub, "POPULATE") && c->argc >= 3 && c->argc <= 5) {
        long long n, size = -1;
        if (arg_range_or_reply(c, &c->argv[2], 0, LLONG_MAX, &n, ERR_NOT_POSITIVE) < 0) return;
        if (c->argc == 5 &&
            (arg_range_or_reply(c, &c->argv[4], 0, LLONG_MAX, &size, ERR_NOT_POSITIVE) < 0 ||
             populate_fits_or_reply(c, n, size) < 0))
            return;
        if (c->argc < 5 && populate_fits_or_reply(c, n, 0) < 0) return;
        const char *prefix = c->argc >= 4 ? c->argv[3].ptr : "key";
        int plen = c->argc >= 4 ? (int)c->argv[3].len : 3;
        char key[512], val[64];
        for (long long i = 0; i < n; i++) {
            int kl = snprintf(key, sizeof(key), "%.*s:%lld", plen > 400 ? 400 : plen, prefix, i);
            if (db_lookup(c->db, key, (size_t)kl)) continue;
            int vl = snprintf(val, sizeof(val), "value:%lld", i);
            str_obj_t *s = str_new(NULL, size >= 0 ? (size_t)size : (size_t)vl);
            memcpy(s->data, val, size >= 0 && size < vl ? (size_t)size : (size_t)vl);
            db_add(c->db, key, (size_t)kl, &s->h);
            srv.dirty++;
        }
        reply_ok(c);
    } else if (arg_is(sub, "OBJECT") && c->argc == 3) {
        kv_t *kv = db_lookup(c->db, c->argv[2].ptr, c->argv[2].len);
        if (!kv) {
            reply_error(c, ERR_NO_KEY);
            return;
        }
        char line[256];
        snprintf(line, sizeof(line),
                 "Value at:%p refcount:1 encoding:%s serializedlength:%zu lru:%u "
                 "lru_seconds_idle:%u",
                 (void *)kv->val, obj_encoding_name(kv->val), obj_memory(kv->val),
                 kv->val->lru, (storage_lru_clock - kv->val->lru) & 0xffffff);
        reply_simple(c, line);
    } else if (arg_is(sub, "RELOAD") && c->argc == 2) {
        debug_reload(c);
    } else if (arg_is(sub, "TIER-DELAY") && c->argc == 4) {
        long long us;
        if (arg_range_or_reply(c, &c->argv[3], 0, 60000000, &us, NULL) < 0) return;
        if (store_set_tier_delay(c->argv[2].ptr, c->argv[2].len, (uint64_t)us) < 0) {
            reply_error(c, "ERR no such tier");
            return;
        }
        reply_ok(c);
    } else if (arg_is(sub, "PROTOCOL") && c->argc == 3) {
        debug_protocol(c, &c->argv[2]);
    } else if (arg_is(sub, "HELP")) {
        static const char *const lines[] = {
            "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "OBJECT <key>",
            "    Show low level info about the key and associated value.",
            "RELOAD",
            "    Write the dataset as commands, empty the databases and replay them.",
            "POPULATE <count> [<prefix>] [<size>]",
            "    Create <count> string keys named key:<num>.",
            "ERROR <string>",
            "    Return a Redis protocol error with <string> as message.",
            "PROTOCOL <type>",
            "    Reply with a test value of the specified type.",
            "PAUSE-CRON <0|1>",
            "    Stop periodic cron job processing.",
            "SET-ACTIVE-EXPIRE <0|1>",
            "    Setting it to 0 disables expiring keys in background.",
            "TIER-DELAY <tier> <microseconds>",
            "    Make every file-tier read and write of <tier> sleep first (tests of slow tiers).",
            "SLEEP <seconds>",
            "    Stop the server for <seconds>. Decimals allowed.",
        };
        help_reply(c, lines, sizeof(lines) / sizeof(lines[0]));
    } else {
        reply_errorf(c, "ERR unknown subcommand '%.*s'. Try DEBUG HELP.", (int)sub->len,
                     sub->ptr);
    }
}

command_t cmds_server[] = {
    {"info", info_cmd, -1, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "1.0.0",
     "Returns information and statistics about the server.",
     "O(1)"},
    {"dbsize", dbsize_cmd, 1, CMD_READONLY | CMD_FAST, 0, 0, 0, "server", "1.0.0",
     "Returns the number of keys in the database.", "O(1)"},
    {"flushdb", flushdb_cmd, -1, CMD_WRITE, 0, 0, 0, "server", "1.0.0",
     "Removes all keys from the current database.",
     "O(N) where N is the number of keys in the selected database"},
    {"flushall", flushall_cmd, -1, CMD_WRITE, 0, 0, 0, "server", "1.0.0",
     "Removes all keys from all databases.", "O(N) where N is the total number of keys in all databases"},
    {"time", time_cmd, 1, CMD_LOADING | CMD_STALE | CMD_FAST, 0, 0, 0, "server", "2.6.0",
     "Returns the server time.", "O(1)"},
    {"shutdown", shutdown_cmd, -1,
     CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE | CMD_NO_MULTI | CMD_ALLOW_BUSY, 0, 0, 0,
     "server", "1.0.0", "Synchronously saves the database(s) to disk and shuts down the Redis server.",
     "O(N) when saving, where N is the total number of keys in all databases when saving data, otherwise O(1)"},
    {"config", container_cmd, -2, 0, 0, 0, 0, "server", "2.0.0",
     "A container for server configuration commands.", "Depends on subcommand.", NULL,
     config_subcommands},
    {"command", command_cmd, -1, CMD_LOADING | CMD_STALE, 0, 0, 0, "server", "2.8.13",
     "Returns detailed information about all commands.",
     "O(N) where N is the total number of Redis commands", NULL, command_subcommands},
    {"memory", container_cmd, -2, 0, 0, 0, 0, "server", "4.0.0",
     "A container for memory diagnostics commands.", "Depends on subcommand.", NULL,
     memory_subcommands},
    {"debug", debug_cmd, -2, CMD_ADMIN | CMD_NOSCRIPT | CMD_LOADING | CMD_STALE, 0, 0, 0,
     "server", "1.0.0", "A container for debugging commands.", "Depends on subcommand."},
    {NULL},
};
