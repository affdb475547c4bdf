/* acl.c - ACL rules, their matching and their descriptions (see acl.h, acl_int.h).
 *
 * Categories: a command's come from its flags (write, readonly -> read unless scripting,
 * admin -> admin + dangerous, pubsub, fast, blocking, and slow for whatever is not fast) and
 * its group (the data-type category), plus extra_categories below for the facts flags do not
 * carry (KEYS is @keyspace @dangerous, ...). Key access: a read-only command reads its keys,
 * a write command reads and writes them, but for the commands key_access lists (LPUSH only
 * writes; COPY reads its source and writes its destination) - Redis 7.0's key-spec flags.
 *
 * GETUSER describes a selector's command bits as Redis 7.0 does: "+@all" or "-@all" (by the
 * future-commands bit), then, round by round, the category that gets the fewest of what is
 * left to explain wrong (while it gets more right than wrong), then single commands (a parent
 * before its subcommands) and first-arg rules until a fake selector built from those rules has
 * exactly the same bits (asserted). Loop thread only. */
#include "server/acl_int.h"

#include "common/alloc.h"
#include "common/glob.h"
#include "common/sha256.h"
#include "server/server.h"

#include <assert.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- categories ------------------------------------------------------------------------ */

enum {
    CAT_KEYSPACE,
    CAT_READ,
    CAT_WRITE,
    CAT_SET,
    CAT_SORTEDSET,
    CAT_LIST,
    CAT_HASH,
    CAT_STRING,
    CAT_BITMAP,
    CAT_HYPERLOGLOG,
    CAT_GEO,
    CAT_STREAM,
    CAT_PUBSUB,
    CAT_ADMIN,
    CAT_FAST,
    CAT_SLOW,
    CAT_BLOCKING,
    CAT_DANGEROUS,
    CAT_CONNECTION,
    CAT_TRANSACTION,
    CAT_SCRIPTING,
    CAT_TAG,
    CAT_SEARCH,
    CAT_COUNT,
};

static const char *const cat_names[CAT_COUNT] = {
    "keyspace",   "read",        "write",     "set",         "sortedset", "list",
    "hash",       "string",      "bitmap",    "hyperloglog", "geo",       "stream",
    "pubsub",     "admin",       "fast",      "slow",        "blocking",  "dangerous",
    "connection", "transaction", "scripting", "tag",         "search",
};

/* data-type (or other) category of a command group */
static const struct {
    const char *group;
    int cat;
} group_cats[] = {
    {"generic", CAT_KEYSPACE},
    {"string", CAT_STRING},
    {"hash", CAT_HASH},
    {"sorted-set", CAT_SORTEDSET},
    {"list", CAT_LIST},
    {"set", CAT_SET},
    {"bitmap", CAT_BITMAP},
    {"hyperloglog", CAT_HYPERLOGLOG},
    {"geo", CAT_GEO},
    {"stream", CAT_STREAM},
    {"pubsub", CAT_PUBSUB},
    {"connection", CAT_CONNECTION},
    {"transactions", CAT_TRANSACTION},
    {"scripting", CAT_SCRIPTING},
    {"tag", CAT_TAG},
    {"search", CAT_SEARCH},
};

/* Categories that neither flags nor group give (Redis 7.0's command docs), by full name. A
 * leading '-' removes one the group gave. */
static const struct {
    const char *name, *cats;
} extra_categories[] = {
    {"keys", "@dangerous"},
    {"flushdb", "@keyspace @dangerous"},
    {"flushall", "@keyspace @dangerous"},
    {"swapdb", "@keyspace @dangerous"},
    {"dbsize", "@keyspace"},
    {"randomkey", "@keyspace"},
    {"scan", "@keyspace"},
    {"sort", "@set @sortedset @list @dangerous -@keyspace"},
    {"sort_ro", "@set @sortedset @list -@keyspace"},
    {"migrate", "@keyspace @dangerous"},
    {"restore", "@keyspace @dangerous"},
    {"restore-asking", "@keyspace @dangerous"},
    {"wait", "@connection -@keyspace"},
    {"info", "@dangerous"},
    {"monitor", "@dangerous"},
    {"lastsave", "@admin @dangerous"},
    {"role", "@admin @dangerous"},
    {"command", "@connection"},
    {"command|count", "@connection"},
    {"command|docs", "@connection"},
    {"command|getkeys", "@connection"},
    {"command|getkeysandflags", "@connection"},
    {"command|info", "@connection"},
    {"command|list", "@connection"},
    {"command|help", "@connection"},
    {"client|help", "@connection"},
    {"pubsub|help", "-@pubsub"},
    {"config|help", ""},
    {"memory|help", ""},
    {"object|help", "@keyspace"},
    {"latency|help", ""},
    {"slowlog|help", ""},
    {"cluster|help", ""},
    {"script|help", "@scripting"},
    {"function|help", "@scripting"},
    {"eval", "@scripting"},
    {"readonly", "@connection"},
    {"readwrite", "@connection"},
    {"asking", "@connection"},
    {"echo", "@connection"},
    {"ping", "@connection"},
    {"select", "@connection"},
    {"quit", "@connection"},
    {"reset", "@connection"},
    {"hello", "@connection"},
    {"auth", "@connection"},
    {"tquery", "@search"},
    {"tsearch", "@search"},
};

/* Per-key access of the commands whose keys are not all read (read-only commands) or all
 * read and written (write commands): one letter per key in order, the last one repeating; r
 * read, w write, b both, n neither (EXISTS only looks). */
static const struct {
    const char *name, *access;
} key_access[] = {
    {"append", "w"},
    {"bitop", "wr"},
    {"blmove", "bw"},
    {"brpoplpush", "bw"},
    {"copy", "rw"},
    {"del", "w"},
    {"unlink", "w"},
    {"exists", "n"},
    {"expire", "w"},
    {"expireat", "w"},
    {"pexpire", "w"},
    {"pexpireat", "w"},
    {"persist", "w"},
    {"geoadd", "w"},
    {"georadius", "rw"},
    {"georadiusbymember", "rw"},
    {"geosearchstore", "wr"},
    {"hdel", "w"},
    {"hexists", "n"},
    {"hlen", "n"},
    {"hmset", "w"},
    {"hset", "w"},
    {"hsetnx", "w"},
    {"hstrlen", "n"},
    {"linsert", "w"},
    {"llen", "n"},
    {"lmove", "bw"},
    {"lpush", "w"},
    {"lpushx", "w"},
    {"lrem", "w"},
    {"lset", "w"},
    {"ltrim", "w"},
    {"memory|usage", "n"},
    {"mset", "w"},
    {"msetnx", "w"},
    {"object|encoding", "n"},
    {"object|freq", "n"},
    {"object|idletime", "n"},
    {"object|refcount", "n"},
    {"pfadd", "w"},
    {"pfdebug", "r"},
    {"pfmerge", "br"},
    {"psetex", "w"},
    {"rename", "bw"},
    {"renamenx", "bw"},
    {"restore", "w"},
    {"restore-asking", "w"},
    {"rpoplpush", "bw"},
    {"rpush", "w"},
    {"rpushx", "w"},
    {"sadd", "w"},
    {"scard", "n"},
    {"sdiffstore", "wr"},
    {"setex", "w"},
    {"setnx", "w"},
    {"setrange", "w"},
    {"sinterstore", "wr"},
    {"sismember", "n"},
    {"smove", "bw"},
    {"sort", "rw"},
    {"srem", "w"},
    {"strlen", "n"},
    {"sunionstore", "wr"},
    {"touch", "n"},
    {"type", "n"},
    {"watch", "n"},
    {"xack", "w"},
    {"xadd", "w"},
    {"xautoclaim", "w"},
    {"xclaim", "w"},
    {"xdel", "w"},
    {"xgroup|create", "w"},
    {"xgroup|createconsumer", "w"},
    {"xgroup|delconsumer", "w"},
    {"xgroup|destroy", "w"},
    {"xgroup|setid", "w"},
    {"xlen", "n"},
    {"xreadgroup", "r"},
    {"xsetid", "w"},
    {"xtrim", "w"},
    {"zadd", "w"},
    {"zcard", "n"},
    {"zdiffstore", "wr"},
    {"zinterstore", "wr"},
    {"zrangestore", "wr"},
    {"zrem", "w"},
    {"zremrangebylex", "w"},
    {"zremrangebyrank", "w"},
    {"zremrangebyscore", "w"},
    {"zunionstore", "wr"},
    {"tput", "w"},
    {"tdel", "w"},
    {"ttruncate", "w"},
    {"tsize", "n"},
    {"tlen", "n"},
    {"tscore", "n"},
};

/* Commands whose key access depends on their arguments (Redis's VARIABLE_FLAGS key specs). */
static char set_access(int argc, const resp_arg_t *argv)
{
    for (int i = 3; i < argc; i++)
        if (argv[i].len == 3 && !strncasecmp(argv[i].ptr, "get", 3)) return 'b';
    return 'w';
}

static char bitfield_access(int argc, const resp_arg_t *argv)
{
    for (int i = 2; i < argc; i++) {
        int rem = argc - i - 1;
        const resp_arg_t *a = &argv[i];
        if (a->len == 3 && !strncasecmp(a->ptr, "get", 3) && rem >= 2)
            i += 2;
        else if (a->len == 8 && !strncasecmp(a->ptr, "overflow", 8) && rem >= 1)
            i += 1;
        else
            return 'b'; /* SET, INCRBY or a syntax error: may write */
    }
    return 'r';
}

static const struct {
    const char *name;
    char (*fn)(int argc, const resp_arg_t *argv);
} variable_access[] = {
    {"set", set_access},
    {"bitfield", bitfield_access},
};

/* The channel arguments of the pub/sub commands (Redis's getChannelsFromCommand). */
#define CH_PUBLISH 1
#define CH_SUBSCRIBE 2
#define CH_PATTERN 4
static const struct {
    const char *name;
    int first, last; /* last -1: every argument from first */
    int flags;
} channel_args[] = {
    {"publish", 1, 1, CH_PUBLISH},
    {"spublish", 1, 1, CH_PUBLISH},
    {"subscribe", 1, -1, CH_SUBSCRIBE},
    {"ssubscribe", 1, -1, CH_SUBSCRIBE},
    {"psubscribe", 1, -1, CH_SUBSCRIBE | CH_PATTERN},
};

typedef struct cmd_info {
    command_t *cmd;
    uint64_t cats;                                       /* 1 << CAT_* */
    const char *access;                                  /* key_access letters, or NULL */
    char (*access_fn)(int argc, const resp_arg_t *argv); /* or the access of its one key */
    int chan;                                            /* index into channel_args + 1, or 0 */
    int nsubs; /* the subcommands follow at id + 1 .. id + nsubs */
} cmd_info_t;

static cmd_info_t cmds[ACL__MAX_CMDS];
static int ncmds;

static void add_category_words(uint64_t *cats, const char *words)
{
    for (const char *p = words; *p;) {
        size_t len = strcspn(p, " ");
        int neg = p[0] == '-';
        const char *w = p + neg;
        size_t wl = len - (size_t)neg;
        if (wl > 1 && w[0] == '@') {
            int i = acl_category_find(w + 1, wl - 1);
            if (i >= 0) *cats = neg ? *cats & ~(1ull << i) : *cats | (1ull << i);
        }
        p += len;
        p += strspn(p, " ");
    }
}

/* A container (CLIENT, CONFIG) has only what its flags give (and extra_categories). */
static uint64_t derive_categories(const command_t *cmd)
{
    uint64_t cats = 0;
    for (size_t i = 0; i < sizeof(group_cats) / sizeof(group_cats[0]) && !cmd->subcommands; i++)
        if (cmd->group && !strcmp(cmd->group, group_cats[i].group))
            cats |= 1ull << group_cats[i].cat;
    if (cmd->acl && !cmd->subcommands) add_category_words(&cats, cmd->acl);
    for (size_t i = 0; i < sizeof(extra_categories) / sizeof(extra_categories[0]); i++)
        if (!strcmp(cmd->fullname, extra_categories[i].name))
            add_category_words(&cats, extra_categories[i].cats);
    if (cmd->flags & CMD_WRITE) cats |= 1ull << CAT_WRITE;
    if ((cmd->flags & CMD_READONLY) && !(cats & (1ull << CAT_SCRIPTING))) cats |= 1ull << CAT_READ;
    if (cmd->flags & CMD_ADMIN) cats |= 1ull << CAT_ADMIN | 1ull << CAT_DANGEROUS;
    if (cmd->flags & CMD_PUBSUB) cats |= 1ull << CAT_PUBSUB;
    if (cmd->flags & CMD_FAST) cats |= 1ull << CAT_FAST;
    if (cmd->flags & CMD_BLOCKING) cats |= 1ull << CAT_BLOCKING;
    if (!(cats & (1ull << CAT_FAST))) cats |= 1ull << CAT_SLOW;
    return cats;
}

static void describe_command(int id, command_t *cmd)
{
    cmd_info_t *ci = &cmds[id];
    cmd->acl_id = id;
    ci->cmd = cmd;
    ci->cats = derive_categories(cmd);
    ci->access = NULL;
    for (size_t i = 0; i < sizeof(key_access) / sizeof(key_access[0]); i++)
        if (!strcmp(cmd->fullname, key_access[i].name)) ci->access = key_access[i].access;
    ci->access_fn = NULL;
    for (size_t i = 0; i < sizeof(variable_access) / sizeof(variable_access[0]); i++)
        if (!strcmp(cmd->fullname, variable_access[i].name)) ci->access_fn = variable_access[i].fn;
    ci->chan = 0;
    for (size_t i = 0; i < sizeof(channel_args) / sizeof(channel_args[0]); i++)
        if (!strcmp(cmd->fullname, channel_args[i].name)) ci->chan = (int)i + 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp((*(command_t *const *)a)->name, (*(command_t *const *)b)->name);
}

static void collect(void *ud, const command_t *cmd)
{
    buf_t *b = ud;
    buf_append(b, &cmd, sizeof(cmd));
}

void acl__index(void)
{
    if (ncmds) return;
    buf_t all;
    buf_init(&all);
    command_foreach(collect, &all);
    size_t n = all.len / sizeof(command_t *);
    command_t **top = (command_t **)all.data;
    qsort(top, n, sizeof(*top), by_name);
    for (size_t i = 0; i < n; i++) {
        int id = ncmds++;
        assert(ncmds < ACL__FUTURE_BIT);
        describe_command(id, top[i]);
        for (command_t *s = (command_t *)top[i]->subcommands; s && s->name; s++) {
            assert(ncmds < ACL__FUTURE_BIT);
            describe_command(ncmds++, s);
            cmds[id].nsubs++;
        }
    }
    buf_deinit(&all);
}

int acl_category_count(void)
{
    return CAT_COUNT;
}

const char *acl_category_name(int i)
{
    return i >= 0 && i < CAT_COUNT ? cat_names[i] : NULL;
}

int acl_category_find(const char *name, size_t len)
{
    for (int i = 0; i < CAT_COUNT; i++)
        if (strlen(cat_names[i]) == len && !strncasecmp(cat_names[i], name, len)) return i;
    return -1;
}

void acl_command_categories(const command_t *cmd, void (*fn)(void *ud, const char *cat), void *ud)
{
    acl__index();
    uint64_t cats = cmds[cmd->acl_id].cmd == cmd ? cmds[cmd->acl_id].cats : derive_categories(cmd);
    for (int i = 0; i < CAT_COUNT; i++)
        if (cats & (1ull << i)) fn(ud, cat_names[i]);
}

void acl_category_commands(int i, void (*fn)(void *ud, const char *fullname), void *ud)
{
    acl__index();
    for (int id = 0; id < ncmds; id++)
        if (cmds[id].cats & (1ull << i)) fn(ud, cmds[id].cmd->fullname);
}

/* ---- selectors ------------------------------------------------------------------------- */

int acl__pubsub_default_all(void)
{
    return srv.cfg.acl_pubsub_default != 0;
}

static acl__selector_t *sel_new(uint32_t flags)
{
    acl__selector_t *s = xcalloc(1, sizeof(*s));
    s->flags = flags | (acl__pubsub_default_all() ? ACL__SEL_ALLCHANNELS : 0);
    return s;
}

static void patterns_free(acl__pattern_t **p, int *n)
{
    for (int i = 0; i < *n; i++) xfree((*p)[i].s);
    xfree(*p);
    *p = NULL;
    *n = 0;
}

static void firstargs_free_one(acl__firstargs_t *fa)
{
    for (int j = 0; j < fa->n; j++) xfree(fa->args[j]);
    xfree(fa->args);
}

static void firstargs_reset(acl__selector_t *s)
{
    for (int i = 0; i < s->nfa; i++) firstargs_free_one(&s->fa[i]);
    xfree(s->fa);
    s->fa = NULL;
    s->nfa = 0;
}

static void sel_free(acl__selector_t *s)
{
    if (!s) return;
    patterns_free(&s->keys, &s->nkeys);
    patterns_free(&s->chans, &s->nchans);
    firstargs_reset(s);
    xfree(s);
}

static acl__pattern_t *patterns_dup(const acl__pattern_t *p, int n)
{
    if (!n) return NULL;
    acl__pattern_t *d = xmalloc(sizeof(*d) * (size_t)n);
    for (int i = 0; i < n; i++) {
        d[i] = p[i];
        d[i].s = xmemdup(p[i].s, p[i].len);
    }
    return d;
}

static acl__selector_t *sel_dup(const acl__selector_t *s)
{
    acl__selector_t *d = xmalloc(sizeof(*d));
    *d = *s;
    d->keys = patterns_dup(s->keys, s->nkeys);
    d->chans = patterns_dup(s->chans, s->nchans);
    d->fa = s->nfa ? xmalloc(sizeof(*d->fa) * (size_t)s->nfa) : NULL;
    for (int i = 0; i < s->nfa; i++) {
        d->fa[i].id = s->fa[i].id;
        d->fa[i].n = s->fa[i].n;
        d->fa[i].args = xmalloc(sizeof(char *) * (size_t)s->fa[i].n);
        for (int j = 0; j < s->fa[i].n; j++) d->fa[i].args[j] = xstrdup(s->fa[i].args[j]);
    }
    return d;
}

static int bit_get(const acl__selector_t *s, int id)
{
    return (s->allowed[id / 64] >> (id % 64)) & 1;
}

static void bit_set(acl__selector_t *s, int id, int on)
{
    if (on) {
        s->allowed[id / 64] |= 1ull << (id % 64);
    } else {
        s->allowed[id / 64] &= ~(1ull << (id % 64));
        s->flags &= ~ACL__SEL_ALLCOMMANDS; /* no longer everything */
    }
}

static void firstargs_reset_for(acl__selector_t *s, int id)
{
    for (int i = 0; i < s->nfa; i++) {
        if (s->fa[i].id != id) continue;
        firstargs_free_one(&s->fa[i]);
        s->fa[i] = s->fa[--s->nfa];
        return;
    }
}

static const acl__firstargs_t *firstargs_of(const acl__selector_t *s, int id)
{
    for (int i = 0; i < s->nfa; i++)
        if (s->fa[i].id == id) return &s->fa[i];
    return NULL;
}

/* 0, or -1 when the command already has ACL__MAX_FIRSTARGS first arguments. */
static int firstargs_add(acl__selector_t *s, int id, const char *arg, size_t len)
{
    acl__firstargs_t *fa = (acl__firstargs_t *)firstargs_of(s, id);
    if (!fa) {
        s->fa = xrealloc(s->fa, sizeof(*s->fa) * (size_t)(s->nfa + 1));
        fa = &s->fa[s->nfa++];
        fa->id = id;
        fa->n = 0;
        fa->args = NULL;
    }
    for (int j = 0; j < fa->n; j++)
        if (strlen(fa->args[j]) == len && !strncasecmp(fa->args[j], arg, len)) return 0;
    if (fa->n >= ACL__MAX_FIRSTARGS) return -1;
    fa->args = xrealloc(fa->args, sizeof(char *) * (size_t)(fa->n + 1));
    char *a = xmalloc(len + 1);
    for (size_t k = 0; k < len; k++) a[k] = (char)tolower((unsigned char)arg[k]);
    a[len] = '\0';
    fa->args[fa->n++] = a;
    return 0;
}

/* Allows or denies a command and, for a container, all its subcommands. */
static void change_perm(acl__selector_t *s, int id, int allow)
{
    bit_set(s, id, allow);
    firstargs_reset_for(s, id);
    for (int k = 1; k <= cmds[id].nsubs; k++) bit_set(s, id + k, allow);
}

static void set_category(acl__selector_t *s, int cat, int allow)
{
    for (int id = 0; id < ncmds; id++)
        if (cmds[id].cats & (1ull << cat)) change_perm(s, id, allow);
}

static int lookup_id(const char *name, size_t len)
{
    char tmp[128];
    if (len == 0 || len >= sizeof(tmp)) return -1;
    memcpy(tmp, name, len);
    tmp[len] = '\0';
    char *bar = strchr(tmp, '|');
    resp_arg_t top = {tmp, bar ? (size_t)(bar - tmp) : len};
    const command_t *cmd = command_lookup(&top);
    if (!cmd) return -1;
    if (bar) {
        if (strchr(bar + 1, '|') || !cmd->subcommands) return -1;
        resp_arg_t sub = {bar + 1, strlen(bar + 1)};
        cmd = command_lookup_sub(cmd, &sub);
        if (!cmd) return -1;
    }
    return cmds[cmd->acl_id].cmd == cmd ? cmd->acl_id : -1;
}

static int has_space(const char *p, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (isspace((unsigned char)p[i]) || p[i] == '\0') return 1;
    return 0;
}

static int is_word(const char *op, size_t len, const char *w)
{
    return strlen(w) == len && !strncasecmp(op, w, len);
}

static const char *const ERR_SYNTAX = "Syntax error";
static const char *const ERR_UNKNOWN = "Unknown command or category name in ACL";
static const char *const ERR_KEYS_AFTER_ALL =
    "Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not "
    "have any effect. Try 'resetkeys' to start with an empty list of patterns";
static const char *const ERR_CHANS_AFTER_ALL =
    "Adding a pattern after the * pattern (or the 'allchannels' flag) is not valid and does "
    "not have any effect. Try 'resetchannels' to start with an empty list of channels";
static const char *const ERR_NO_PASS = "The password you are trying to remove from the user "
                                       "does not exist";
static const char *const ERR_HASH = "The password hash must be exactly 64 characters and "
                                    "contain only lowercase hexadecimal characters";
static const char *const ERR_FIRSTARG_SUB = "Allowing first-arg of a subcommand is not supported";
/* our own limits (Redis has none): they bound the time SETUSER spends finding duplicates and
 * every command spends matching, and the memory a user takes */
static const char *const ERR_TOO_MANY_KEYS = "Too many key patterns in one selector (the limit "
                                             "is " ACL__XSTR(ACL__MAX_PATTERNS) ")";
static const char *const ERR_TOO_MANY_CHANNELS = "Too many channel patterns in one selector (the "
                                                 "limit is " ACL__XSTR(ACL__MAX_PATTERNS) ")";
static const char *const ERR_TOO_MANY_FIRSTARGS =
    "Too many first-args for one command (the limit is " ACL__XSTR(ACL__MAX_FIRSTARGS) ")";
static const char *const ERR_TOO_MANY_SELECTORS =
    "Too many selectors (the limit is " ACL__XSTR(ACL__MAX_SELECTORS) ")";

static int add_key_pattern(acl__selector_t *s, const char *op, size_t len, const char **why)
{
    if (s->flags & ACL__SEL_ALLKEYS) {
        *why = ERR_KEYS_AFTER_ALL;
        return -1;
    }
    int flags = 0;
    size_t off = 1;
    if (op[0] == '%') {
        for (; off < len; off++) {
            char ch = (char)toupper((unsigned char)op[off]);
            if (ch == 'R' && !(flags & ACL__KEY_READ))
                flags |= ACL__KEY_READ;
            else if (ch == 'W' && !(flags & ACL__KEY_WRITE))
                flags |= ACL__KEY_WRITE;
            else if (op[off] == '~') {
                off++;
                break;
            } else {
                *why = ERR_SYNTAX;
                return -1;
            }
        }
    } else {
        flags = ACL__KEY_READ | ACL__KEY_WRITE;
    }
    if (!flags || has_space(op + off, len - off)) { /* "%R" and "~" mean an empty pattern */
        *why = ERR_SYNTAX;
        return -1;
    }
    for (int i = 0; i < s->nkeys; i++) {
        if (s->keys[i].len == len - off && !memcmp(s->keys[i].s, op + off, len - off)) {
            s->keys[i].flags |= flags;
            return 0;
        }
    }
    if (s->nkeys >= ACL__MAX_PATTERNS) {
        *why = ERR_TOO_MANY_KEYS;
        return -1;
    }
    s->keys = xrealloc(s->keys, sizeof(*s->keys) * (size_t)(s->nkeys + 1));
    s->keys[s->nkeys++] = (acl__pattern_t){xmemdup(op + off, len - off), len - off, flags};
    return 0;
}

static int add_channel_pattern(acl__selector_t *s, const char *op, size_t len, const char **why)
{
    if (s->flags & ACL__SEL_ALLCHANNELS) {
        *why = ERR_CHANS_AFTER_ALL;
        return -1;
    }
    if (has_space(op + 1, len - 1)) {
        *why = ERR_SYNTAX;
        return -1;
    }
    for (int i = 0; i < s->nchans; i++)
        if (s->chans[i].len == len - 1 && !memcmp(s->chans[i].s, op + 1, len - 1)) return 0;
    if (s->nchans >= ACL__MAX_PATTERNS) {
        *why = ERR_TOO_MANY_CHANNELS;
        return -1;
    }
    s->chans = xrealloc(s->chans, sizeof(*s->chans) * (size_t)(s->nchans + 1));
    s->chans[s->nchans++] = (acl__pattern_t){xmemdup(op + 1, len - 1), len - 1, 0};
    return 0;
}

/* +cmd, +cmd|sub, +cmd|firstarg */
static int allow_command(acl__selector_t *s, const char *name, size_t len, const char **why)
{
    const char *bar = len ? memchr(name, '|', len) : NULL;
    if (!bar) {
        int id = lookup_id(name, len);
        if (id < 0) goto unknown;
        change_perm(s, id, 1);
        return 0;
    }
    /* the part before the last '|' names the command */
    const char *last = name + len;
    while (last[-1] != '|') last--;
    size_t headlen = (size_t)(last - 1 - name), sublen = (size_t)(name + len - last);
    int id = lookup_id(name, headlen);
    if (id < 0) goto unknown;
    if (cmds[id].cmd->parent) {
        *why = ERR_FIRSTARG_SUB;
        return -1;
    }
    if (sublen == 0) {
        *why = ERR_SYNTAX;
        return -1;
    }
    if (cmds[id].cmd->subcommands) {
        int sid = lookup_id(name, len);
        if (sid < 0) goto unknown;
        change_perm(s, sid, 1);
    } else if (firstargs_add(s, id, last, sublen) < 0) {
        *why = ERR_TOO_MANY_FIRSTARGS;
        return -1;
    }
    return 0;
unknown:
    *why = ERR_UNKNOWN;
    return -1;
}

static int sel_apply(acl__selector_t *s, const char *op, size_t len, const char **why)
{
    if (is_word(op, len, "allkeys") || is_word(op, len, "~*")) {
        s->flags |= ACL__SEL_ALLKEYS;
        patterns_free(&s->keys, &s->nkeys);
    } else if (is_word(op, len, "resetkeys")) {
        s->flags &= ~ACL__SEL_ALLKEYS;
        patterns_free(&s->keys, &s->nkeys);
    } else if (is_word(op, len, "allchannels") || is_word(op, len, "&*")) {
        s->flags |= ACL__SEL_ALLCHANNELS;
        patterns_free(&s->chans, &s->nchans);
    } else if (is_word(op, len, "resetchannels")) {
        s->flags &= ~ACL__SEL_ALLCHANNELS;
        patterns_free(&s->chans, &s->nchans);
    } else if (is_word(op, len, "allcommands") || is_word(op, len, "+@all")) {
        memset(s->allowed, 0xff, sizeof(s->allowed));
        s->flags |= ACL__SEL_ALLCOMMANDS;
        firstargs_reset(s);
    } else if (is_word(op, len, "nocommands") || is_word(op, len, "-@all")) {
        memset(s->allowed, 0, sizeof(s->allowed));
        s->flags &= ~ACL__SEL_ALLCOMMANDS;
        firstargs_reset(s);
    } else if (op[0] == '~' || op[0] == '%') {
        return add_key_pattern(s, op, len, why);
    } else if (op[0] == '&') {
        return add_channel_pattern(s, op, len, why);
    } else if ((op[0] == '+' || op[0] == '-') && len > 1 && op[1] == '@') {
        int cat = acl_category_find(op + 2, len - 2);
        if (cat < 0) {
            *why = ERR_UNKNOWN;
            return -1;
        }
        set_category(s, cat, op[0] == '+');
    } else if (op[0] == '+') {
        return allow_command(s, op + 1, len - 1, why);
    } else if (op[0] == '-') {
        int id = lookup_id(op + 1, len - 1);
        if (id < 0) {
            *why = ERR_UNKNOWN;
            return -1;
        }
        change_perm(s, id, 0);
    } else {
        *why = ERR_SYNTAX;
        return -1;
    }
    return 0;
}

/* Splits the inside of "(...)" at spaces (no quoting inside selectors from ACL SETUSER
 * arguments: Redis splits them as a command line, and a quote is then a syntax error). */
static acl__selector_t *sel_from_op(const char *op, size_t len, const char **why)
{
    acl__selector_t *s = sel_new(0);
    const char *p = op + 1, *end = op + len - 1;
    while (p < end) {
        while (p < end && isspace((unsigned char)*p)) p++;
        if (p == end) break;
        const char *w = p;
        while (p < end && !isspace((unsigned char)*p)) p++;
        if (*w == '"' || *w == '\'' || sel_apply(s, w, (size_t)(p - w), why) < 0) {
            if (*w == '"' || *w == '\'') *why = ERR_SYNTAX;
            sel_free(s);
            return NULL;
        }
    }
    return s;
}

/* ---- users ----------------------------------------------------------------------------- */

acl_user_t *acl_user_new(const char *name, size_t len)
{
    acl__index();
    acl_user_t *u = xcalloc(1, sizeof(*u));
    u->name = xmemdup(name, len);
    u->len = len;
    u->flags = ACL__USER_OFF;
    u->sel = xmalloc(sizeof(*u->sel));
    u->sel[0] = sel_new(ACL__SEL_ROOT);
    u->nsel = 1;
    return u;
}

void acl__user_clear(acl_user_t *u)
{
    for (int i = 0; i < u->nsel; i++) sel_free(u->sel[i]);
    xfree(u->sel);
    xfree(u->pass);
    xfree(u->name);
    memset(u, 0, sizeof(*u));
}

void acl_user_free(acl_user_t *u)
{
    if (!u) return;
    acl__user_clear(u);
    xfree(u);
}

void acl__user_copy(acl_user_t *dst, const acl_user_t *src)
{
    dst->name = xmemdup(src->name, src->len);
    dst->len = src->len;
    dst->flags = src->flags;
    dst->npass = src->npass;
    dst->pass = src->npass ? (char(*)[SHA256_HEX_LEN + 1])
                                 xmemdup(src->pass, sizeof(*src->pass) * (size_t)src->npass)
                           : NULL;
    dst->nsel = src->nsel;
    dst->sel = xmalloc(sizeof(*dst->sel) * (size_t)src->nsel);
    for (int i = 0; i < src->nsel; i++) dst->sel[i] = sel_dup(src->sel[i]);
}

const char *acl__unknown_reason(void)
{
    return ERR_UNKNOWN;
}

const char *acl_user_name(const acl_user_t *u)
{
    return u->name;
}

static int valid_hash(const char *h, size_t len)
{
    if (len != SHA256_HEX_LEN) return 0;
    for (size_t i = 0; i < len; i++)
        if (!((h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f'))) return 0;
    return 1;
}

static int find_pass(const acl_user_t *u, const char *hex)
{
    for (int i = 0; i < u->npass; i++)
        if (!memcmp(u->pass[i], hex, SHA256_HEX_LEN)) return i;
    return -1;
}

static int password_rule(acl_user_t *u, const char *op, size_t len, const char **why)
{
    char hex[SHA256_HEX_LEN + 1];
    if (op[0] == '>' || op[0] == '<') {
        sha256_hex(op + 1, len - 1, hex);
    } else {
        if (!valid_hash(op + 1, len - 1)) {
            *why = ERR_HASH;
            return -1;
        }
        memcpy(hex, op + 1, SHA256_HEX_LEN);
        hex[SHA256_HEX_LEN] = '\0';
    }
    int at = find_pass(u, hex);
    if (op[0] == '>' || op[0] == '#') {
        if (at < 0) {
            u->pass = xrealloc(u->pass, sizeof(*u->pass) * (size_t)(u->npass + 1));
            memcpy(u->pass[u->npass++], hex, sizeof(hex));
        }
        u->flags &= ~ACL__USER_NOPASS;
        return 0;
    }
    if (at < 0) {
        *why = ERR_NO_PASS;
        return -1;
    }
    memmove(u->pass[at], u->pass[at + 1], sizeof(*u->pass) * (size_t)(u->npass - at - 1));
    u->npass--;
    return 0;
}

static void clear_selectors(acl_user_t *u)
{
    for (int i = 1; i < u->nsel; i++) sel_free(u->sel[i]);
    u->nsel = 1;
}

int acl_user_apply(acl_user_t *u, const char *op, size_t len, const char **why)
{
    static const char *const reset_rules[] = {"resetpass", "resetkeys",        "resetchannels",
                                              "off",       "sanitize-payload", "clearselectors",
                                              "-@all"};
    if (len == 0) return 0;
    if (is_word(op, len, "on")) {
        u->flags = (u->flags | ACL__USER_ON) & ~ACL__USER_OFF;
    } else if (is_word(op, len, "off")) {
        u->flags = (u->flags | ACL__USER_OFF) & ~ACL__USER_ON;
    } else if (is_word(op, len, "skip-sanitize-payload")) {
        u->flags = (u->flags | ACL__USER_SKIP_SANITIZE) & ~ACL__USER_SANITIZE;
    } else if (is_word(op, len, "sanitize-payload")) {
        u->flags = (u->flags | ACL__USER_SANITIZE) & ~ACL__USER_SKIP_SANITIZE;
    } else if (is_word(op, len, "nopass")) {
        u->flags |= ACL__USER_NOPASS;
        u->npass = 0;
    } else if (is_word(op, len, "resetpass")) {
        u->flags &= ~ACL__USER_NOPASS;
        u->npass = 0;
    } else if (op[0] == '>' || op[0] == '#' || op[0] == '<' || op[0] == '!') {
        return password_rule(u, op, len, why);
    } else if (op[0] == '(' && op[len - 1] == ')') {
        if (u->nsel > ACL__MAX_SELECTORS) { /* the root selector does not count */
            *why = ERR_TOO_MANY_SELECTORS;
            return -1;
        }
        acl__selector_t *s = sel_from_op(op, len, why);
        if (!s) return -1;
        u->sel = xrealloc(u->sel, sizeof(*u->sel) * (size_t)(u->nsel + 1));
        u->sel[u->nsel++] = s;
    } else if (is_word(op, len, "clearselectors")) {
        clear_selectors(u);
    } else if (is_word(op, len, "reset")) {
        for (size_t i = 0; i < sizeof(reset_rules) / sizeof(reset_rules[0]); i++) {
            int rc = acl_user_apply(u, reset_rules[i], strlen(reset_rules[i]), why);
            assert(rc == 0);
            if (i == 2 && acl__pubsub_default_all()) acl_user_apply(u, "allchannels", 11, why);
        }
    } else {
        return sel_apply(u->sel[0], op, len, why);
    }
    return 0;
}

/* see acl_int.h */
int acl__merge_args(int argc, const resp_arg_t *argv, buf_t *words, int *bad)
{
    int n = 0, open = -1;
    for (int j = 0; j < argc; j++) {
        const char *op = argv[j].ptr;
        size_t len = argv[j].len;
        if (len && op[0] == '(' && op[len - 1] != ')') { /* (re)opens, as Redis */
            if (open >= 0) buf_deinit(&words[n]);
            buf_init(&words[n]);
            buf_append(&words[n], op, len);
            open = j;
            continue;
        }
        if (open >= 0) {
            buf_push(&words[n], ' ');
            buf_append(&words[n], op, len);
            if (len && op[len - 1] == ')') {
                open = -1;
                n++;
            }
            continue;
        }
        buf_init(&words[n]);
        buf_append(&words[n], op, len);
        n++;
    }
    if (open >= 0) {
        buf_deinit(&words[n]);
        for (int i = 0; i < n; i++) buf_deinit(&words[i]);
        *bad = open;
        return -1;
    }
    return n;
}

int acl_user_setrules(acl_user_t *u, int argc, const resp_arg_t *argv, buf_t *err)
{
    buf_t *words = xmalloc(sizeof(buf_t) * (size_t)(argc ? argc : 1));
    int bad = 0, n = acl__merge_args(argc, argv, words, &bad), rc = 0;
    if (n < 0) {
        buf_printf(err, "Unmatched parenthesis in acl selector starting at '%.*s'.",
                   (int)argv[bad].len, argv[bad].ptr);
        xfree(words);
        return -1;
    }
    acl_user_t tmp;
    acl__user_copy(&tmp, u);
    for (int j = 0; j < n && rc == 0; j++) {
        const char *why = "Wrong format";
        if (acl_user_apply(&tmp, words[j].data ? words[j].data : "", words[j].len, &why) < 0) {
            buf_printf(err, "Error in ACL SETUSER modifier '%.*s': %s", (int)words[j].len,
                       words[j].data ? words[j].data : "", why);
            rc = -1;
        }
    }
    for (int j = 0; j < n; j++) buf_deinit(&words[j]);
    xfree(words);
    if (rc == 0) {
        acl__user_clear(u);
        *u = tmp;
    } else {
        acl__user_clear(&tmp);
    }
    return rc;
}

int acl_user_nopass(const acl_user_t *u)
{
    return (u->flags & ACL__USER_NOPASS) != 0;
}

int acl_user_password_ok(const acl_user_t *u, const char *pass, size_t len)
{
    char hex[SHA256_HEX_LEN + 1];
    sha256_hex(pass, len, hex); /* even for nopass: AUTH of a missing user asks the default */
    int ok = (u->flags & ACL__USER_NOPASS) != 0;
    for (int i = 0; i < u->npass; i++) {
        unsigned diff = 0;
        for (int k = 0; k < SHA256_HEX_LEN; k++)
            diff |= (unsigned)(unsigned char)(hex[k] ^ u->pass[i][k]);
        ok |= diff == 0;
    }
    return ok;
}

/* ---- descriptions ---------------------------------------------------------------------- */

static void count_category(const acl__selector_t *s, int cat, unsigned *on, unsigned *off)
{
    *on = *off = 0;
    for (int id = 0; id < ncmds; id++) {
        if (!(cmds[id].cats & (1ull << cat))) continue;
        if (bit_get(s, id))
            (*on)++;
        else
            (*off)++;
    }
}

static void describe_singles(const acl__selector_t *s, acl__selector_t *fake, buf_t *out)
{
    for (int id = 0; id < ncmds; id++) {
        int userbit = bit_get(s, id), fakebit = bit_get(fake, id);
        if (userbit != fakebit) {
            buf_printf(out, "%c%s ", userbit ? '+' : '-', cmds[id].cmd->fullname);
            change_perm(fake, id, userbit);
        }
        const acl__firstargs_t *fa = firstargs_of(s, id);
        if (!userbit && fa)
            for (int j = 0; j < fa->n; j++)
                buf_printf(out, "+%s|%s ", cmds[id].cmd->fullname, fa->args[j]);
    }
}

/* Our own categories (tag, search) are small: the rounds take them first, and when a Redis
 * category picked later covers them they would only clutter the description (and differ from
 * what Redis shows for the same rules). Drops those the result does not need. */
static void drop_redundant_own_categories(const acl__selector_t *fake, int additive, int *cats,
                                          int *n)
{
    for (int i = 0; i < *n; i++) {
        if (cats[i] != CAT_TAG && cats[i] != CAT_SEARCH) continue;
        acl__selector_t alt;
        memset(&alt, 0, sizeof(alt));
        if (!additive) memset(alt.allowed, 0xff, sizeof(alt.allowed));
        for (int j = 0; j < *n; j++)
            if (j != i) set_category(&alt, cats[j], additive);
        if (memcmp(alt.allowed, fake->allowed, sizeof(alt.allowed))) continue;
        memmove(cats + i, cats + i + 1, sizeof(int) * (size_t)(*n - i - 1));
        (*n)--;
        i--;
    }
}

/* The command rules of s, as GETUSER's "commands" field. */
static void describe_commands(const acl__selector_t *s, buf_t *out)
{
    acl__selector_t fake, temp;
    memset(&fake, 0, sizeof(fake));
    memset(&temp, 0, sizeof(temp));
    int additive = !bit_get(s, ACL__FUTURE_BIT);
    size_t start = out->len;
    buf_append_str(out, additive ? "-@all " : "+@all ");
    if (!additive) memset(fake.allowed, 0xff, sizeof(fake.allowed));
    memcpy(temp.allowed, s->allowed, sizeof(temp.allowed));
    /* each round takes the category that gets the fewest commands wrong (of those that get
     * more right than wrong), the one that gets more right on a tie */
    uint64_t applied = 0;
    int emitted[CAT_COUNT], nemitted = 0;
    for (;;) {
        int best = -1;
        unsigned mindiff = ~0u, maxsame = 0;
        for (int cat = 0; cat < CAT_COUNT; cat++) {
            if (applied & (1ull << cat)) continue;
            unsigned on, off;
            count_category(&temp, cat, &on, &off);
            unsigned diff = additive ? off : on, same = additive ? on : off;
            if (same > diff && (diff < mindiff || (diff == mindiff && same > maxsame))) {
                best = cat;
                mindiff = diff;
                maxsame = same;
            }
        }
        if (best < 0) break;
        emitted[nemitted++] = best;
        set_category(&fake, best, additive);
        set_category(&temp, best, !additive);
        applied |= 1ull << best;
    }
    drop_redundant_own_categories(&fake, additive, emitted, &nemitted);
    for (int i = 0; i < nemitted; i++)
        buf_printf(out, "%c@%s ", additive ? '+' : '-', cat_names[emitted[i]]);
    describe_singles(s, &fake, out);
    firstargs_reset(&fake);
    firstargs_reset(&temp);
    if (out->len > start) out->len--; /* the last space */
    out->data[out->len] = '\0';
    bit_set(&fake, ACL__FUTURE_BIT, bit_get(s, ACL__FUTURE_BIT));
    for (int id = ncmds; id < ACL__FUTURE_BIT; id++) bit_set(&fake, id, bit_get(s, id));
    assert(!memcmp(fake.allowed, s->allowed, sizeof(fake.allowed)));
}

static void describe_keys(const acl__selector_t *s, buf_t *out)
{
    if (s->flags & ACL__SEL_ALLKEYS) {
        buf_append_str(out, "~*");
        return;
    }
    for (int i = 0; i < s->nkeys; i++) {
        const acl__pattern_t *p = &s->keys[i];
        if (i) buf_push(out, ' ');
        if (p->flags == ACL__KEY_READ)
            buf_append_str(out, "%R");
        else if (p->flags == ACL__KEY_WRITE)
            buf_append_str(out, "%W");
        buf_push(out, '~');
        buf_append(out, p->s, p->len);
    }
}

static void describe_channels(const acl__selector_t *s, buf_t *out)
{
    if (s->flags & ACL__SEL_ALLCHANNELS) {
        buf_append_str(out, "&*");
        return;
    }
    for (int i = 0; i < s->nchans; i++) {
        if (i) buf_push(out, ' ');
        buf_push(out, '&');
        buf_append(out, s->chans[i].s, s->chans[i].len);
    }
}

/* ACL LIST's form of a selector: keys, channels (resetchannels first unless all), commands */
static void describe_selector(const acl__selector_t *s, buf_t *out)
{
    if ((s->flags & ACL__SEL_ALLKEYS) || s->nkeys) {
        describe_keys(s, out);
        buf_push(out, ' ');
    }
    if (!(s->flags & ACL__SEL_ALLCHANNELS)) buf_append_str(out, "resetchannels ");
    if ((s->flags & ACL__SEL_ALLCHANNELS) || s->nchans) {
        describe_channels(s, out);
        buf_push(out, ' ');
    }
    describe_commands(s, out);
}

const acl__flag_name_t acl__user_flags[] = {{ACL__USER_ON, "on"},
                                            {ACL__USER_OFF, "off"},
                                            {ACL__USER_NOPASS, "nopass"},
                                            {ACL__USER_SKIP_SANITIZE, "skip-sanitize-payload"},
                                            {ACL__USER_SANITIZE, "sanitize-payload"},
                                            {0, NULL}};

void acl_user_describe(const acl_user_t *u, buf_t *out)
{
    buf_reserve(out, 1);
    for (const acl__flag_name_t *f = acl__user_flags; f->name; f++)
        if (u->flags & f->flag) buf_printf(out, "%s ", f->name);
    for (int i = 0; i < u->npass; i++) buf_printf(out, "#%s ", u->pass[i]);
    describe_selector(u->sel[0], out);
    for (int i = 1; i < u->nsel; i++) {
        buf_append_str(out, " (");
        describe_selector(u->sel[i], out);
        buf_push(out, ')');
    }
}

void acl__describe_fields(const acl__selector_t *s, buf_t *commands, buf_t *keys, buf_t *chans)
{
    buf_reserve(commands, 1);
    buf_reserve(keys, 1);
    buf_reserve(chans, 1);
    describe_commands(s, commands);
    describe_keys(s, keys);
    describe_channels(s, chans);
}

/* ---- checks ---------------------------------------------------------------------------- */

static int key_ok(const acl__selector_t *s, const resp_arg_t *key, char access)
{
    int need = access == 'r'   ? ACL__KEY_READ
               : access == 'w' ? ACL__KEY_WRITE
               : access == 'b' ? ACL__KEY_READ | ACL__KEY_WRITE
                               : 0;
    for (int i = 0; i < s->nkeys; i++) {
        if ((s->keys[i].flags & need) != need) continue;
        if (strglob_match(s->keys[i].s, s->keys[i].len, key->ptr, key->len, 0)) return 1;
    }
    return 0;
}

int acl__channel_ok(const acl__pattern_t *pats, int n, const char *ch, size_t len, int is_pattern)
{
    for (int i = 0; i < n; i++) {
        if (is_pattern) {
            if (pats[i].len == len && !memcmp(pats[i].s, ch, len)) return 1;
        } else if (strglob_match(pats[i].s, pats[i].len, ch, len, 0)) {
            return 1;
        }
    }
    return 0;
}

static char access_of(const cmd_info_t *ci, int nth, int argc, const resp_arg_t *argv)
{
    if (ci->access_fn) return ci->access_fn(argc, argv);
    if (ci->access) {
        size_t n = strlen(ci->access);
        return ci->access[(size_t)nth < n ? (size_t)nth : n - 1];
    }
    if (ci->cmd->flags & CMD_WRITE) return 'b';
    if (ci->cmd->flags & CMD_READONLY) return 'r';
    return 'b';
}

static int firstarg_ok(const acl__selector_t *s, const command_t *cmd, int argc,
                       const resp_arg_t *argv)
{
    const acl__firstargs_t *fa = firstargs_of(s, cmd->acl_id);
    int idx = cmd->parent ? 2 : 1;
    if (!fa || argc <= idx) return 0;
    for (int j = 0; j < fa->n; j++)
        if (strlen(fa->args[j]) == argv[idx].len &&
            !strncasecmp(fa->args[j], argv[idx].ptr, argv[idx].len))
            return 1;
    return 0;
}

static int check_selector(const acl__selector_t *s, const command_t *cmd, int argc,
                          const resp_arg_t *argv, const int *keys, int nkeys, int *pos)
{
    const cmd_info_t *ci = &cmds[cmd->acl_id];
    if (!(s->flags & ACL__SEL_ALLCOMMANDS) && !(cmd->flags & CMD_NO_AUTH) &&
        !bit_get(s, cmd->acl_id) && !firstarg_ok(s, cmd, argc, argv))
        return ACL_DENIED_CMD;
    if (!(s->flags & ACL__SEL_ALLKEYS)) {
        for (int j = 0; j < nkeys; j++) {
            if (!key_ok(s, &argv[keys[j]], access_of(ci, j, argc, argv))) {
                *pos = keys[j];
                return ACL_DENIED_KEY;
            }
        }
    }
    if (ci->chan && !(s->flags & ACL__SEL_ALLCHANNELS)) {
        int first = channel_args[ci->chan - 1].first, last = channel_args[ci->chan - 1].last;
        int pattern = channel_args[ci->chan - 1].flags & CH_PATTERN;
        if (last < 0) last = argc - 1;
        for (int j = first; j <= last && j < argc; j++) {
            if (!acl__channel_ok(s->chans, s->nchans, argv[j].ptr, argv[j].len, pattern)) {
                *pos = j;
                return ACL_DENIED_CHANNEL;
            }
        }
    }
    return ACL_OK;
}

int acl_check_user(const acl_user_t *u, const command_t *cmd, int argc, const resp_arg_t *argv,
                   int *pos)
{
    *pos = 0;
    if (!u) return ACL_OK;
    assert(cmd->acl_id < ncmds && cmds[cmd->acl_id].cmd == cmd);
    int stack[64], *keys = stack, nkeys = 0;
    if (argc > 64) keys = xmalloc(sizeof(int) * (size_t)argc);
    int keys_done = 0, relevant = ACL_DENIED_CMD, last = 0, result = -1;
    for (int i = 0; i < u->nsel && result < 0; i++) {
        const acl__selector_t *s = u->sel[i];
        if (!keys_done && !(s->flags & ACL__SEL_ALLKEYS)) {
            nkeys = command_get_keys(cmd, argc, argv, keys, argc > 64 ? argc : 64);
            keys_done = 1;
        }
        int p = 0, r = check_selector(s, cmd, argc, argv, keys, nkeys, &p);
        if (r == ACL_OK)
            result = ACL_OK;
        else if (r > relevant || (r == relevant && p > last)) {
            relevant = r;
            last = p;
        }
    }
    if (keys != stack) xfree(keys);
    if (result == ACL_OK) return ACL_OK;
    *pos = last;
    return relevant;
}

int acl_check_all_keys(const client_t *c, int access)
{
    const acl_user_t *u = c->user;
    if (!u || (c->flags & CLIENT_FAKE)) return 1;
    int stack[64], *keys = c->argc > 64 ? xmalloc(sizeof(int) * (size_t)c->argc) : stack;
    int nkeys = command_get_keys(c->cmd, c->argc, c->argv, keys, c->argc > 64 ? c->argc : 64);
    int ok = 0;
    for (int i = 0; i < u->nsel && !ok; i++) {
        const acl__selector_t *s = u->sel[i];
        int pos;
        if (check_selector(s, c->cmd, c->argc, c->argv, keys, nkeys, &pos) != ACL_OK) continue;
        ok = (s->flags & ACL__SEL_ALLKEYS) != 0;
        for (int k = 0; k < s->nkeys && !ok; k++)
            ok = (s->keys[k].flags & access) == access && s->keys[k].len == 1 &&
                 s->keys[k].s[0] == '*';
    }
    if (keys != stack) xfree(keys);
    return ok;
}
