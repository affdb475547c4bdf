/* acl_users.c - the registry of ACL users, their clients, AUTH, the ACL LOG and the aclfile
 * (see acl.h; the rules themselves are acl.c's).
 *
 * Users are kept in an array sorted by name (bytewise), which is the order ACL USERS and
 * ACL LIST give. A user's struct never moves while it exists: clients point at it, and
 * SETUSER changes it in place (after staging the rules on a copy). The default user is never
 * deleted; ACL LOAD copies the file's default over it so its clients stay. The log is a list,
 * newest first, of at most acllog-max-len entries; an entry that repeats (same reason,
 * context, object and user within 60 s) counts up and moves to the front, as Redis's does.
 * Loop thread only. */
#include "server/acl_int.h"

#include "common/alloc.h"
#include "common/log.h"
#include "common/util.h"
#include "server/multi.h"
#include "server/pubsub.h"
#include "server/reply.h"
#include "server/server.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static acl_user_t **users;
static int nusers;
static acl_user_t *default_user;

/* ---- the registry ---------------------------------------------------------------------- */

static int name_cmp(const char *a, size_t alen, const char *b, size_t blen)
{
    int d = memcmp(a, b, alen < blen ? alen : blen);
    return d ? d : (alen < blen ? -1 : alen > blen);
}

/* Index of the user named name, or -(insertion point) - 1. */
static int find_index(acl_user_t **set, int n, const char *name, size_t len)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2, d = name_cmp(set[mid]->name, set[mid]->len, name, len);
        if (d == 0) return mid;
        if (d < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

static void insert_user(acl_user_t ***set, int *n, acl_user_t *u)
{
    int at = find_index(*set, *n, u->name, u->len);
    assert(at < 0);
    at = -at - 1;
    *set = xrealloc(*set, sizeof(**set) * (size_t)(*n + 1));
    memmove(*set + at + 1, *set + at, sizeof(**set) * (size_t)(*n - at));
    (*set)[at] = u;
    (*n)++;
}

acl_user_t *acl_user_find(const char *name, size_t len)
{
    int at = find_index(users, nusers, name, len);
    return at >= 0 ? users[at] : NULL;
}

acl_user_t *acl_default_user(void)
{
    return default_user;
}

void acl_foreach_user(void (*fn)(void *ud, acl_user_t *u), void *ud)
{
    for (int i = 0; i < nusers; i++) fn(ud, users[i]);
}

static int apply_words(acl_user_t *u, const char *const *words, size_t n)
{
    const char *why;
    for (size_t i = 0; i < n; i++)
        if (acl_user_apply(u, words[i], strlen(words[i]), &why) < 0) return -1;
    return 0;
}

static acl_user_t *new_default_user(void)
{
    static const char *const rules[] = {"+@all", "~*", "&*", "on", "nopass"};
    acl_user_t *u = acl_user_new("default", 7);
    int rc = apply_words(u, rules, sizeof(rules) / sizeof(rules[0]));
    assert(rc == 0);
    return u;
}

/* requirepass is the default user's password, as in Redis */
static void apply_requirepass(void)
{
    const char *pw = srv.cfg.requirepass ? srv.cfg.requirepass : "";
    const char *why;
    acl_user_apply(default_user, "resetpass", 9, &why);
    if (*pw) {
        size_t len = strlen(pw);
        char *op = xmalloc(len + 2);
        op[0] = '>';
        memcpy(op + 1, pw, len + 1);
        acl_user_apply(default_user, op, len + 1, &why);
        xfree(op);
    } else {
        acl_user_apply(default_user, "nopass", 6, &why);
    }
}

/* ---- clients --------------------------------------------------------------------------- */

static int user_is_open(const acl_user_t *u)
{
    return (u->flags & ACL__USER_NOPASS) && !(u->flags & ACL__USER_OFF);
}

void acl_client_reset(client_t *c)
{
    c->user = default_user;
    if (default_user && user_is_open(default_user))
        c->flags |= CLIENT_AUTHENTICATED;
    else if (default_user)
        c->flags &= ~(uint32_t)CLIENT_AUTHENTICATED;
    else
        c->flags |= CLIENT_AUTHENTICATED;
}

int acl_auth_required(const client_t *c)
{
    if (c->flags & CLIENT_AUTHENTICATED) return 0;
    return !default_user || !user_is_open(default_user);
}

const char *acl_client_user_name(const client_t *c)
{
    return c->user ? c->user->name : "default";
}

int acl_authenticate(client_t *c, const resp_arg_t *user, const resp_arg_t *pass)
{
    acl_user_t *u = acl_user_find(user->ptr, user->len);
    /* hash even for a missing user, so the time does not tell whether it exists */
    int ok = acl_user_password_ok(u ? u : default_user, pass->ptr, pass->len);
    if (u && ok && !(u->flags & ACL__USER_OFF)) {
        c->user = u;
        c->flags |= CLIENT_AUTHENTICATED;
        return 0;
    }
    acl_log_add(c, ACL_DENIED_AUTH, (c->flags & CLIENT_MULTI) ? ACL_CTX_MULTI : ACL_CTX_TOPLEVEL,
                c->argv[0].ptr, c->argv[0].len, user->ptr, user->len);
    return -1;
}

/* Closes c (after the current reply when it is the client running this command). */
static void kill_client(client_t *current, client_t *c)
{
    c->user = default_user;
    c->flags &= ~(uint32_t)CLIENT_AUTHENTICATED;
    if (c == current)
        c->flags |= CLIENT_CLOSE_AFTER_REPLY;
    else
        client_close(c);
}

static void kill_clients_of(client_t *current, const acl_user_t *u)
{
    for (client_t *c = srv.clients; c; c = c->next)
        if (c->user == u && !(c->flags & CLIENT_CLOSE_ASAP)) kill_client(current, c);
}

/* ---- SETUSER / DELUSER ----------------------------------------------------------------- */

typedef struct sub_check {
    const acl__pattern_t *pats;
    int n;
    int denied;
} sub_check_t;

static void check_sub(void *ud, const char *name, size_t len, int pattern)
{
    sub_check_t *sc = ud;
    if (!sc->denied && !acl__channel_ok(sc->pats, sc->n, name, len, pattern)) sc->denied = 1;
}

/* Redis's ACLKillPubsubClientsIfNeeded: after new replaces old, subscribers of old whose
 * channels the new rules no longer allow are closed. */
static void kill_pubsub_clients_if_needed(const acl_user_t *next, const acl_user_t *old)
{
    for (int i = 0; i < next->nsel; i++)
        if (next->sel[i]->flags & ACL__SEL_ALLCHANNELS) return;
    sub_check_t sc = {NULL, 0, 0};
    acl__pattern_t *all = NULL;
    for (int i = 0; i < next->nsel; i++) {
        const acl__selector_t *s = next->sel[i];
        all = xrealloc(all, sizeof(*all) * (size_t)(sc.n + s->nchans + 1));
        if (s->nchans) memcpy(all + sc.n, s->chans, sizeof(*all) * (size_t)s->nchans);
        sc.n += s->nchans;
    }
    sc.pats = all;
    int superset = 1;
    for (int i = 0; i < old->nsel && superset; i++) {
        const acl__selector_t *s = old->sel[i];
        if (s->flags & ACL__SEL_ALLCHANNELS) superset = 0;
        for (int j = 0; j < s->nchans && superset; j++) {
            int found = 0;
            for (int k = 0; k < sc.n && !found; k++)
                found =
                    all[k].len == s->chans[j].len && !memcmp(all[k].s, s->chans[j].s, all[k].len);
            superset = found;
        }
    }
    for (client_t *c = srv.clients; c && !superset; c = c->next) {
        if (c->user != old || !(c->flags & CLIENT_PUBSUB) || (c->flags & CLIENT_CLOSE_ASAP))
            continue;
        sc.denied = 0;
        pubsub_client_foreach(c, check_sub, &sc);
        if (sc.denied) kill_client(NULL, c);
    }
    xfree(all);
}

static int username_ok(const char *name, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (name[i] == ' ' || name[i] == '\t' || name[i] == '\r' || name[i] == '\n' ||
            name[i] == '\0' || name[i] == '\v' || name[i] == '\f')
            return 0;
    return 1;
}

int acl_setuser(const char *name, size_t len, int argc, const resp_arg_t *argv, buf_t *err)
{
    if (!username_ok(name, len)) {
        buf_append_str(err, "Usernames can't contain spaces or null characters");
        return -1;
    }
    acl_user_t *u = acl_user_find(name, len);
    acl_user_t *staged = u ? xcalloc(1, sizeof(*staged)) : acl_user_new(name, len);
    if (u) acl__user_copy(staged, u);
    if (acl_user_setrules(staged, argc, argv, err) < 0) {
        acl_user_free(staged);
        return -1;
    }
    if (!u) {
        insert_user(&users, &nusers, staged);
        return 0;
    }
    kill_pubsub_clients_if_needed(staged, u);
    acl__user_clear(u);
    *u = *staged; /* in place: clients keep pointing at u */
    xfree(staged);
    return 0;
}

int acl_deluser(client_t *current, const char *name, size_t len)
{
    int at = find_index(users, nusers, name, len);
    if (at < 0 || users[at] == default_user) return 0;
    acl_user_t *u = users[at];
    memmove(users + at, users + at + 1, sizeof(*users) * (size_t)(nusers - at - 1));
    nusers--;
    kill_clients_of(current, u);
    acl_user_free(u);
    return 1;
}

/* ---- checks with clients --------------------------------------------------------------- */

int acl_check_command(const client_t *c, const command_t *cmd, int argc, const resp_arg_t *argv,
                      int *pos)
{
    *pos = 0;
    if (c->flags & CLIENT_FAKE) return ACL_OK;
    return acl_check_user(c->user, cmd, argc, argv, pos);
}

void acl_denial_message(int result, const command_t *cmd, buf_t *out)
{
    if (result == ACL_DENIED_CMD)
        buf_printf(out, "NOPERM this user has no permissions to run the '%s' command",
                   cmd->fullname);
    else if (result == ACL_DENIED_KEY)
        buf_append_str(out, "NOPERM this user has no permissions to access one of the keys used "
                            "as arguments");
    else if (result == ACL_DENIED_CHANNEL)
        buf_append_str(out, "NOPERM this user has no permissions to access one of the channels "
                            "used as arguments");
    else
        buf_append_str(out, "NOPERM no permission");
}

const char *acl_script_denial_message(int result)
{
    switch (result) {
    case ACL_DENIED_CMD:
        return "The user executing the script can't run this command or subcommand";
    case ACL_DENIED_KEY:
        return "The user executing the script can't access at least one of the keys mentioned "
               "in the command";
    case ACL_DENIED_CHANNEL:
        return "The user executing the script can't publish to the channel mentioned in the "
               "command";
    default:
        return "The user executing the script is lacking the permissions for the command";
    }
}

int acl_reject_or_reply(client_t *c, int context)
{
    int pos, r = acl_check_command(c, c->cmd, c->argc, c->argv, &pos);
    if (r == ACL_OK) return 0;
    const char *obj = c->cmd->fullname;
    size_t objlen = strlen(obj);
    if (r != ACL_DENIED_CMD) {
        obj = c->argv[pos].ptr;
        objlen = c->argv[pos].len;
    }
    acl_log_add(c, r, context, obj, objlen, NULL, 0);
    buf_t msg;
    buf_init(&msg);
    acl_denial_message(r, c->cmd, &msg);
    if (!multi_exec_rejected(c, msg.data)) reply_error(c, msg.data);
    buf_deinit(&msg);
    return -1;
}

/* ---- the log --------------------------------------------------------------------------- */

typedef struct log_entry {
    struct log_entry *next;
    long long count;
    int reason, context;
    char *object, *username, *cinfo;
    size_t objlen, ulen;
    long long ctime_ms;
} log_entry_t;

static log_entry_t *log_head;
static long long log_len;

static void entry_free(log_entry_t *e)
{
    xfree(e->object);
    xfree(e->username);
    xfree(e->cinfo);
    xfree(e);
}

static void log_trim(void)
{
    long long max = srv.cfg.acllog_max_len, n = 0;
    for (log_entry_t **pp = &log_head; *pp;) {
        if (n++ < max) {
            pp = &(*pp)->next;
            continue;
        }
        log_entry_t *e = *pp;
        *pp = e->next;
        entry_free(e);
        log_len--;
    }
}

static int same_entry(const log_entry_t *e, int reason, int context, const char *obj, size_t objlen,
                      const char *user, size_t ulen, long long now)
{
    return e->reason == reason && e->context == context && e->objlen == objlen &&
           !memcmp(e->object, obj, objlen) && e->ulen == ulen && !memcmp(e->username, user, ulen) &&
           now - e->ctime_ms <= 60000;
}

void acl_log_add(client_t *c, int reason, int context, const char *object, size_t objlen,
                 const char *username, size_t ulen)
{
    if (!username) {
        username = acl_client_user_name(c);
        ulen = strlen(username);
    }
    long long now = time_ms();
    buf_t info;
    buf_init(&info);
    client_info_line(c, &info);
    for (log_entry_t **pp = &log_head; *pp; pp = &(*pp)->next) {
        log_entry_t *e = *pp;
        if (!same_entry(e, reason, context, object, objlen, username, ulen, now)) continue;
        e->count++;
        e->ctime_ms = now;
        xfree(e->cinfo);
        e->cinfo = xstrdup(info.data ? info.data : "");
        *pp = e->next;
        e->next = log_head;
        log_head = e;
        buf_deinit(&info);
        return;
    }
    log_entry_t *e = xcalloc(1, sizeof(*e));
    e->count = 1;
    e->reason = reason;
    e->context = context;
    e->object = xmemdup(object, objlen);
    e->objlen = objlen;
    e->username = xmemdup(username, ulen);
    e->ulen = ulen;
    e->cinfo = xstrdup(info.data ? info.data : "");
    e->ctime_ms = now;
    e->next = log_head;
    log_head = e;
    log_len++;
    buf_deinit(&info);
    log_trim();
}

void acl_log_reset(void)
{
    while (log_head) {
        log_entry_t *e = log_head;
        log_head = e->next;
        entry_free(e);
    }
    log_len = 0;
}

void acl_log_reply(client_t *c, long long count)
{
    static const char *const reasons[] = {"", "command", "key", "auth", "channel"};
    static const char *const contexts[] = {"toplevel", "multi", "lua"};
    if (count < 0 || count > log_len) count = log_len;
    long long now = time_ms();
    reply_array(c, count);
    log_entry_t *e = log_head;
    for (long long i = 0; i < count; i++, e = e->next) {
        reply_map(c, 7);
        reply_bulk_cstr(c, "count");
        reply_int(c, e->count);
        reply_bulk_cstr(c, "reason");
        reply_bulk_cstr(c, reasons[e->reason]);
        reply_bulk_cstr(c, "context");
        reply_bulk_cstr(c, contexts[e->context]);
        reply_bulk_cstr(c, "object");
        reply_bulk(c, e->object, e->objlen);
        reply_bulk_cstr(c, "username");
        reply_bulk(c, e->username, e->ulen);
        reply_bulk_cstr(c, "age-seconds");
        reply_double(c, (double)(now - e->ctime_ms) / 1000.0);
        reply_bulk_cstr(c, "client-info");
        reply_bulk_cstr(c, e->cinfo);
    }
}

/* ---- the aclfile ----------------------------------------------------------------------- */

/* The aclfile's path (relative ones are relative to dir), or NULL when none is set. */
static char *aclfile_path(void)
{
    const char *f = srv.cfg.aclfile;
    if (!f || !*f) return NULL;
    if (f[0] == '/' || !srv.cfg.dir || !*srv.cfg.dir) return xstrdup(f);
    buf_t p;
    buf_init(&p);
    buf_printf(&p, "%s/%s", srv.cfg.dir, f);
    return (char *)p.data;
}

/* Splits a line at spaces and tabs (the aclfile has no quoting, as Redis's has none) into
 * *w (allocated, every word of the line however many; the caller frees it). */
static int split_words(char *line, resp_arg_t **w)
{
    int n = 0, cap = 0;
    *w = NULL;
    for (char *p = line; *p;) {
        while (*p == ' ' || *p == '\t') p++;
        if (!*p) break;
        char *s = p;
        while (*p && *p != ' ' && *p != '\t') p++;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            *w = xrealloc(*w, sizeof(**w) * (size_t)cap);
        }
        (*w)[n].ptr = s;
        (*w)[n].len = (size_t)(p - s);
        n++;
    }
    return n;
}

/* Applies one aclfile line's rules to the new user u, reporting as Redis does: every unknown
 * command or category, and the first other error. 0, or -1 after appending to err. */
static int apply_line_rules(acl_user_t *u, int argc, const resp_arg_t *argv, const char *fname,
                            int lineno, buf_t *err)
{
    buf_t *words = xmalloc(sizeof(buf_t) * (size_t)(argc ? argc : 1));
    int bad = 0, n = acl__merge_args(argc, argv, words, &bad), rc = 0, other = 0;
    if (n < 0) {
        buf_printf(err, "%s:%d: Unmatched parenthesis in selector definition.", fname, lineno);
        xfree(words);
        return -1;
    }
    for (int j = 0; j < n; j++) {
        const char *why = "Wrong format", *op = words[j].data ? words[j].data : "";
        if (acl_user_apply(u, op, words[j].len, &why) == 0) continue;
        rc = -1;
        if (why == acl__unknown_reason())
            buf_printf(err, "%s:%d: Error in applying operation '%s': %s. ", fname, lineno, op,
                       why);
        else if (!other++)
            buf_printf(err, "%s:%d: %s. ", fname, lineno, why);
    }
    for (int j = 0; j < n; j++) buf_deinit(&words[j]);
    xfree(words);
    return rc;
}

/* Parses "user <name> <rules...>" lines into a new set of users. 0, or -1 with every
 * problem found in err ("<file>:<line>: <reason>. ") and nothing created. */
static int parse_users(const char *text, size_t len, const char *fname, acl_user_t ***out,
                       int *nout, buf_t *err)
{
    acl_user_t **set = NULL;
    int n = 0, lineno = 0;
    size_t start_err = err->len;
    for (const char *p = text; p < text + len;) {
        const char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t ll = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
        char *line = xmemdup(p, ll);
        p += ll + (nl ? 1 : 0);
        lineno++;
        size_t b = 0, e = ll;
        while (b < e && strchr(" \t\r", line[b])) b++;
        while (e > b && strchr(" \t\r", line[e - 1])) e--;
        line[e] = '\0';
        if (b == e) { /* blank lines are skipped, comments are not allowed (as Redis) */
            xfree(line);
            continue;
        }
        resp_arg_t *words;
        int nw = split_words(line + b, &words);
        if (nw < 2 || words[0].len != 4 || memcmp(words[0].ptr, "user", 4)) {
            buf_printf(err, "%s:%d should start with user keyword followed by the username. ",
                       fname, lineno);
        } else if (!username_ok(words[1].ptr, words[1].len)) {
            buf_printf(err, "%s:%d: username '%.*s' contains invalid characters. ", fname, lineno,
                       (int)words[1].len, words[1].ptr);
        } else if (find_index(set, n, words[1].ptr, words[1].len) >= 0) {
            buf_printf(err, "WARNING: Duplicate user '%.*s' found on line %d. ", (int)words[1].len,
                       words[1].ptr, lineno);
        } else {
            acl_user_t *u = acl_user_new(words[1].ptr, words[1].len);
            if (apply_line_rules(u, nw - 2, words + 2, fname, lineno, err) < 0)
                acl_user_free(u);
            else
                insert_user(&set, &n, u);
        }
        xfree(words);
        xfree(line);
    }
    if (err->len != start_err) {
        for (int i = 0; i < n; i++) acl_user_free(set[i]);
        xfree(set);
        return -1;
    }
    *out = set;
    *nout = n;
    return 0;
}

/* Makes set the registry: its default (or a fresh one) is copied over the live default user,
 * the other users of the old registry are freed and their clients closed. */
static void replace_users(client_t *current, acl_user_t **set, int n)
{
    int at = find_index(set, n, "default", 7);
    acl_user_t *nd = at >= 0 ? set[at] : new_default_user();
    if (at < 0) insert_user(&set, &n, nd);
    at = find_index(set, n, "default", 7);
    for (int i = 0; i < nusers; i++) {
        if (users[i] == default_user) continue;
        kill_clients_of(current, users[i]);
        acl_user_free(users[i]);
    }
    xfree(users);
    acl__user_clear(default_user);
    acl__user_copy(default_user, nd);
    acl_user_free(nd);
    set[at] = default_user;
    users = set;
    nusers = n;
}

static int read_file(const char *path, buf_t *text, buf_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        buf_printf(err, "Error loading ACLs, opening file '%s': %s", path, strerror(errno));
        return -1;
    }
    char chunk[4096];
    size_t got;
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) buf_append(text, chunk, got);
    fclose(f);
    return 0;
}

/* 0, -1 (errors in err) or -2 when the file cannot be read (err says why). */
static int load_file(client_t *current, buf_t *err)
{
    char *path = aclfile_path();
    buf_t text;
    buf_init(&text);
    int rc = read_file(path, &text, err) < 0 ? -2 : 0;
    acl_user_t **set = NULL;
    int n = 0;
    if (rc == 0)
        rc = parse_users(text.data ? text.data : "", text.len, srv.cfg.aclfile, &set, &n, err);
    if (rc == 0) replace_users(current, set, n);
    buf_deinit(&text);
    xfree(path);
    return rc;
}

int acl_load(client_t *current, buf_t *err)
{
    if (!srv.cfg.aclfile || !*srv.cfg.aclfile) {
        buf_append_str(err, "This Redis instance is not configured to use an ACL file. You may "
                            "want to specify users via the ACL SETUSER command and then issue a "
                            "CONFIG REWRITE (assuming you have a Redis configuration file set) in "
                            "order to store users in the Redis configuration.");
        return -1;
    }
    int rc = load_file(current, err);
    if (rc == 0) return 0;
    if (rc == -1) /* an unreadable file gets its reason alone, as in Redis */
        buf_append_str(err, "WARNING: ACL errors detected, no change to the previously active "
                            "ACL rules was performed");
    return -1;
}

int acl_save(char *err, size_t errlen)
{
    char *path = aclfile_path();
    if (!path) {
        snprintf(err, errlen,
                 "This Redis instance is not configured to use an ACL file. You "
                 "may want to specify users via the ACL SETUSER command and then "
                 "issue a CONFIG REWRITE (assuming you have a Redis configuration "
                 "file set) in order to store users in the Redis configuration.");
        return -1;
    }
    buf_t text;
    buf_init(&text);
    for (int i = 0; i < nusers; i++) {
        buf_printf(&text, "user %s ", users[i]->name);
        acl_user_describe(users[i], &text);
        buf_push(&text, '\n');
    }
    buf_t tmp;
    buf_init(&tmp);
    buf_printf(&tmp, "%s.tmp-%d", path, (int)getpid());
    int rc = -1, fd = open((char *)tmp.data, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const char *what = "open";
    if (fd >= 0) {
        what = "write";
        size_t off = 0;
        while (off < text.len) {
            ssize_t w = write(fd, text.data + off, text.len - off);
            if (w < 0 && errno == EINTR) continue;
            if (w <= 0) break;
            off += (size_t)w;
        }
        if (off == text.len && fsync(fd) == 0) what = "rename";
        if (close(fd) < 0) what = "close";
        if (!strcmp(what, "rename") && rename((char *)tmp.data, path) == 0) rc = 0;
    }
    if (rc < 0) {
        snprintf(err, errlen,
                 "There was an error trying to save the ACLs. Please check the "
                 "server logs for more information");
        log_warning("ACL SAVE: cannot %s '%s': %s", what, (char *)tmp.data, strerror(errno));
        unlink((char *)tmp.data);
    }
    buf_deinit(&tmp);
    buf_deinit(&text);
    xfree(path);
    return rc;
}

/* ---- start-up -------------------------------------------------------------------------- */

/* The `users:` of the config: each item "name rules...", as redis.conf's `user` lines. */
static int load_config_users(char *err, size_t errlen)
{
    const config_strlist_t *l = &srv.cfg.users;
    buf_t text;
    buf_init(&text);
    for (int i = 0; i < l->count; i++) buf_printf(&text, "user %s\n", l->items[i]);
    buf_t e;
    buf_init(&e);
    acl_user_t **set = NULL;
    int n = 0, rc = parse_users(text.data ? text.data : "", text.len, "users", &set, &n, &e);
    if (rc < 0) {
        snprintf(err, errlen, "Error in the users of the configuration: %s", e.data);
    } else {
        for (int i = 0; i < n; i++) {
            if (set[i]->len == 7 && !memcmp(set[i]->name, "default", 7)) {
                acl__user_clear(default_user);
                acl__user_copy(default_user, set[i]);
                acl_user_free(set[i]);
            } else {
                insert_user(&users, &nusers, set[i]);
            }
        }
        xfree(set);
    }
    buf_deinit(&e);
    buf_deinit(&text);
    return rc;
}

int acl_init(char *err, size_t errlen)
{
    acl__index();
    if (default_user) return 0;
    default_user = new_default_user();
    insert_user(&users, &nusers, default_user);
    apply_requirepass();
    int has_file = srv.cfg.aclfile && *srv.cfg.aclfile;
    if (has_file && srv.cfg.users.count) {
        snprintf(err, errlen,
                 "Configuring the server with users in the configuration (users) "
                 "and an ACL file (aclfile) at the same time is invalid: define "
                 "either an ACL file or users in the configuration, not both.");
        return -1;
    }
    if (srv.cfg.users.count && load_config_users(err, errlen) < 0) return -1;
    if (has_file) {
        buf_t e;
        buf_init(&e);
        int rc = load_file(NULL, &e);
        if (rc < 0) snprintf(err, errlen, "Aborting the start because of ACL errors: %s", e.data);
        buf_deinit(&e);
        if (rc < 0) return -1;
    }
    for (client_t *c = srv.clients; c; c = c->next)
        if (!c->user) acl_client_reset(c);
    return 0;
}

void acl_deinit(void)
{
    for (client_t *c = srv.clients; c; c = c->next) c->user = NULL;
    for (int i = 0; i < nusers; i++) acl_user_free(users[i]);
    xfree(users);
    users = NULL;
    nusers = 0;
    default_user = NULL;
    acl_log_reset();
}

void acl_config_sync_users(void)
{
    if (srv.cfg.aclfile && *srv.cfg.aclfile) return;
    config_strlist_t *l = &srv.cfg.users;
    for (int i = 0; i < l->count; i++) xfree(l->items[i]);
    xfree(l->items);
    l->items = xmalloc(sizeof(char *) * (size_t)nusers);
    l->count = nusers;
    for (int i = 0; i < nusers; i++) {
        buf_t b;
        buf_init(&b);
        buf_printf(&b, "%s ", users[i]->name);
        acl_user_describe(users[i], &b);
        l->items[i] = (char *)b.data;
    }
}

int acl_config_changed(const char *name, char *err, size_t errlen)
{
    if (!strcmp(name, "requirepass") && default_user) apply_requirepass();
    return 0; /* a smaller acllog-max-len trims at the next entry, as in Redis */
}

/* ---- GETUSER --------------------------------------------------------------------------- */

static void reply_selector_fields(client_t *c, const acl__selector_t *s)
{
    buf_t cmds, keys, chans;
    buf_init(&cmds);
    buf_init(&keys);
    buf_init(&chans);
    acl__describe_fields(s, &cmds, &keys, &chans);
    reply_bulk_cstr(c, "commands");
    reply_bulk(c, cmds.data, cmds.len);
    reply_bulk_cstr(c, "keys");
    reply_bulk(c, keys.data, keys.len);
    reply_bulk_cstr(c, "channels");
    reply_bulk(c, chans.data, chans.len);
    buf_deinit(&cmds);
    buf_deinit(&keys);
    buf_deinit(&chans);
}

void acl_getuser_reply(client_t *c, const acl_user_t *u)
{
    int nflags = 0;
    for (const acl__flag_name_t *f = acl__user_flags; f->name; f++)
        nflags += (u->flags & f->flag) != 0;
    reply_map(c, 6);
    reply_bulk_cstr(c, "flags");
    reply_set(c, nflags);
    for (const acl__flag_name_t *f = acl__user_flags; f->name; f++)
        if (u->flags & f->flag) reply_bulk_cstr(c, f->name);
    reply_bulk_cstr(c, "passwords");
    reply_array(c, u->npass);
    for (int i = 0; i < u->npass; i++) reply_bulk(c, u->pass[i], SHA256_HEX_LEN);
    reply_selector_fields(c, u->sel[0]);
    reply_bulk_cstr(c, "selectors");
    reply_array(c, u->nsel - 1);
    for (int i = 1; i < u->nsel; i++) {
        reply_map(c, 3);
        reply_selector_fields(c, u->sel[i]);
    }
}
