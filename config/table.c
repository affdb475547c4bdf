/* table.c - every config key, one row each, and the three special value types
 * (client-output-buffer-limit, notify-keyspace-events, tiers).
 *
 * To add a key: add a field to config_t and a row here; the parser, CONFIG GET/SET, CONFIG
 * REWRITE, the command line and the docs pick it up. Names are Redis's where Redis has the
 * setting, and so are ranges, defaults, mutability and error texts, unless a row's doc says
 * otherwise. Rows are grouped as the README groups them; keys under a YAML section (search:,
 * shm:) are named <section>-<key>. Loop thread (or startup). */
#include "config/config_int.h"

#include "common/alloc.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- client-output-buffer-limit --------------------------------------------------------- */

/* Input accepts replica or slave; CONFIG GET says slave, as Redis 7 does. */
static int obuf_class(const char *s)
{
    if (!strcasecmp(s, "normal")) return CONFIG_CLIENT_NORMAL;
    if (!strcasecmp(s, "replica") || !strcasecmp(s, "slave")) return CONFIG_CLIENT_REPLICA;
    if (!strcasecmp(s, "pubsub")) return CONFIG_CLIENT_PUBSUB;
    return -1;
}

/* Parses the words w[0..3] (class hard soft seconds) into lim[class]. */
static const char *obuf_parse_one(char **w, config_obuf_limit_t *lim)
{
    int cls = obuf_class(w[0]);
    config_obuf_limit_t l;

    if (cls < 0) return "Invalid client class specified in buffer limit configuration.";
    if (config__parse_memory(w[1], &l.hard_bytes) < 0 ||
        config__parse_memory(w[2], &l.soft_bytes) < 0 ||
        config__parse_ll(w[3], &l.soft_seconds) < 0 || l.soft_seconds < 0)
        return "Error in hard, soft or soft_seconds setting in buffer limit configuration.";
    lim[cls] = l;
    return NULL;
}

static int obuf_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                      config__why_t *why)
{
    config_obuf_limit_t next[CONFIG_CLIENT_CLASSES];
    config_strlist_t w;
    const char *bad = NULL;

    memcpy(next, c->client_obuf_limits, sizeof next);
    config__split(v, &w);
    if (w.count == 0 || w.count % 4)
        bad = "Wrong number of arguments in buffer limit configuration.";
    for (int i = 0; !bad && i < w.count; i += 4) bad = obuf_parse_one(w.items + i, next);
    config__strlist_free(&w);
    if (bad) {
        config__why_set(why, 0, "%s", bad);
        return -1;
    }
    memcpy(c->client_obuf_limits, next, sizeof next);
    return 0;
}

static void obuf_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    static const char *const get_names[] = {"normal", "slave", "pubsub"};
    static const char *const human_names[] = {"normal", "replica", "pubsub"};

    for (int i = 0; i < CONFIG_CLIENT_CLASSES; i++) {
        const config_obuf_limit_t *l = &c->client_obuf_limits[i];
        buf_printf(out, "%s%s ", i ? " " : "", human ? human_names[i] : get_names[i]);
        config__format_memory(out, l->hard_bytes, human);
        buf_push(out, ' ');
        config__format_memory(out, l->soft_bytes, human);
        buf_printf(out, " %lld", l->soft_seconds);
    }
}

static void obuf_describe(const config__row_t *r, buf_t *out, int brief)
{
    buf_append_str(out, brief ? "CLASS HARD SOFT SECONDS ..."
                              : "groups of: normal|replica|pubsub hard soft soft-seconds");
}

static const config__type_t type_obuf = {
    .name = "special",
    .parse = obuf_parse,
    .format = obuf_format,
    .describe = obuf_describe,
};

/* ---- notify-keyspace-events ------------------------------------------------------------- */

static const struct {
    char letter;
    int flags;
} notify_letters[] = {
    {'A', CONFIG_NOTIFY_ALL},      {'g', CONFIG_NOTIFY_GENERIC},  {'$', CONFIG_NOTIFY_STRING},
    {'l', CONFIG_NOTIFY_LIST},     {'s', CONFIG_NOTIFY_SET},      {'h', CONFIG_NOTIFY_HASH},
    {'z', CONFIG_NOTIFY_ZSET},     {'x', CONFIG_NOTIFY_EXPIRED},  {'e', CONFIG_NOTIFY_EVICTED},
    {'t', CONFIG_NOTIFY_STREAM},   {'d', CONFIG_NOTIFY_MODULE},   {'T', CONFIG_NOTIFY_TAG},
    {'n', CONFIG_NOTIFY_NEW},
    {'K', CONFIG_NOTIFY_KEYSPACE}, {'E', CONFIG_NOTIFY_KEYEVENT}, {'m', CONFIG_NOTIFY_KEY_MISS},
};
#define NOTIFY_NLETTERS (sizeof notify_letters / sizeof notify_letters[0])

static int notify_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                        config__why_t *why)
{
    int flags = 0;

    for (const char *p = v; *p; p++) {
        size_t i = 0;
        while (i < NOTIFY_NLETTERS && notify_letters[i].letter != *p) i++;
        if (i == NOTIFY_NLETTERS) {
            config__why_set(why, 0, "Invalid event class character. Use 'Ag$lshzxeKEtmdnT'.");
            return -1;
        }
        flags |= notify_letters[i].flags;
    }
    c->notify_keyspace_events = flags;
    return 0;
}

/* Redis's canonical form: A when every class is on, else the class letters; then n K E m
 * (Redis drops n next to A; we keep it so that the value reads back as it was set). */
static void notify_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    int flags = c->notify_keyspace_events;
    int all = (flags & CONFIG_NOTIFY_ALL) == CONFIG_NOTIFY_ALL;

    if (all) buf_push(out, 'A');
    for (size_t i = 1; i < NOTIFY_NLETTERS; i++) {
        int f = notify_letters[i].flags;
        if (all && (f & CONFIG_NOTIFY_ALL)) continue;
        if (flags & f) buf_push(out, notify_letters[i].letter);
    }
}

static void notify_describe(const config__row_t *r, buf_t *out, int brief)
{
    buf_append_str(out, brief ? "letters of KEg$lshzxetdTnmA" : "letters of Ag$lshzxeKEtmdnT");
}

static const config__type_t type_notify = {
    .name = "flags",
    .parse = notify_parse,
    .format = notify_format,
    .describe = notify_describe,
};

/* ---- tiers ------------------------------------------------------------------------------ */

void config__tier_release(config_tier_t *t)
{
    xfree(t->name);
    xfree(t->path);
    t->name = t->path = NULL;
}

static int valid_tier_name(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '-' || *s == '.')) return 0;
    return 1;
}

/* A path that survives CONFIG GET / REWRITE and --tier specs: no spaces, ':' or control bytes. */
static int valid_tier_path(const char *s)
{
    for (; *s; s++)
        if (isspace((unsigned char)*s) || iscntrl((unsigned char)*s) || *s == ':') return 0;
    return 1;
}

int config__tier_check(const config_tier_t *t, config__why_t *why)
{
    if (!valid_tier_name(t->name))
        config__why_set(why, 0, "tier name '%s' must be letters, digits, '_', '-' or '.'", t->name);
    else if (t->kind == CONFIG_TIER_RAM && t->path[0])
        config__why_set(why, 0, "RAM tier '%s' takes no path", t->name);
    else if (t->kind == CONFIG_TIER_FILE && !t->path[0])
        config__why_set(why, 0, "file tier '%s' needs a path", t->name);
    else if (!valid_tier_path(t->path))
        config__why_set(why, 0, "path of tier '%s' must not hold spaces, ':' or control characters",
                        t->name);
    else if (t->capacity <= 0)
        config__why_set(why, 0, "tier '%s' needs a capacity above 0", t->name);
    else if (t->score != -1 && !(t->score >= 0 && t->score <= 1))
        config__why_set(why, 0, "score of tier '%s' must be in [0, 1]", t->name);
    else
        return 0;
    return -1;
}

static int parse_score(const char *s, double *out)
{
    char *end;
    if (!*s) {
        *out = -1;
        return 0;
    }
    *out = strtod(s, &end);
    return *end || isspace((unsigned char)s[0]) ? -1 : 0;
}

int config__tier_parse_spec(const char *spec, config_tier_t *t, config__why_t *why)
{
    char *copy = xstrdup(spec), *f[6] = {0};
    int n = 0;

    for (char *p = copy; n < 6; n++) {
        f[n] = p;
        p = strchr(p, ':');
        if (!p) {
            n++;
            break;
        }
        *p++ = '\0';
    }
    t->name = t->path = NULL;
    if (n < 3 || n > 5) {
        config__why_set(why, 0, "tier '%s' is not NAME:KIND:CAPACITY[:PATH[:SCORE]]", spec);
        goto fail;
    }
    t->kind = !strcasecmp(f[1], "ram")    ? CONFIG_TIER_RAM
              : !strcasecmp(f[1], "file") ? CONFIG_TIER_FILE
                                          : -1;
    if (t->kind < 0) {
        config__why_set(why, 0, "tier kind '%s' is not ram or file", f[1]);
        goto fail;
    }
    if (config__parse_memory(f[2], &t->capacity) < 0) {
        config__why_set(why, 0, "tier capacity '%s' is not a memory value", f[2]);
        goto fail;
    }
    if (parse_score(n == 5 ? f[4] : "", &t->score) < 0) {
        config__why_set(why, 0, "tier score '%s' is not a number", f[4]);
        goto fail;
    }
    t->name = xstrdup(f[0]);
    t->path = xstrdup(n >= 4 ? f[3] : "");
    xfree(copy);
    if (config__tier_check(t, why) == 0) return 0;
    config__tier_release(t);
    return -1;
fail:
    xfree(copy);
    return -1;
}

int config__tiers_set(config_t *c, config_tier_t *tiers, int n, config__why_t *why)
{
    int bad = 0;

    if (n < 1 || n > CONFIG_MAX_TIERS) {
        config__why_set(why, 0, "between 1 and %d tiers are needed, not %d", CONFIG_MAX_TIERS, n);
        bad = 1;
    }
    for (int i = 0; !bad && i < n; i++) {
        for (int j = 0; j < i; j++) {
            if (!strcmp(tiers[i].name, tiers[j].name)) {
                config__why_set(why, 0, "two tiers are named '%s'", tiers[i].name);
                bad = 1;
            }
        }
    }
    if (bad) {
        for (int i = 0; i < n; i++) config__tier_release(&tiers[i]);
        return -1;
    }
    for (int i = 0; i < c->ntiers; i++) config__tier_release(&c->tiers[i]);
    memcpy(c->tiers, tiers, n * sizeof *tiers);
    c->ntiers = n;
    return 0;
}

static int tiers_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                       config__why_t *why)
{
    config_tier_t next[CONFIG_MAX_TIERS];
    config_strlist_t w;
    int n = 0, rc = 0;

    config__split(v, &w);
    if (w.count > CONFIG_MAX_TIERS) {
        config__why_set(why, 0, "at most %d tiers, not %d", CONFIG_MAX_TIERS, w.count);
        rc = -1;
    }
    for (; rc == 0 && n < w.count; n++) rc = config__tier_parse_spec(w.items[n], &next[n], why);
    config__strlist_free(&w);
    if (rc < 0) {
        for (int i = 0; i < n - 1; i++) config__tier_release(&next[i]);
        return -1;
    }
    return config__tiers_set(c, next, n, why);
}

static void tiers_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    for (int i = 0; i < c->ntiers; i++) {
        const config_tier_t *t = &c->tiers[i];
        buf_printf(out, "%s%s:%s:", i ? " " : "", t->name,
                   t->kind == CONFIG_TIER_RAM ? "ram" : "file");
        config__format_memory(out, t->capacity, human);
        if (t->path[0] || t->score != -1) buf_printf(out, ":%s", t->path);
        if (t->score != -1) {
            buf_push(out, ':');
            config__format_double(out, t->score);
        }
    }
}

static void tiers_describe(const config__row_t *r, buf_t *out, int brief)
{
    buf_append_str(out, "NAME:KIND:CAPACITY[:PATH[:SCORE]] ...");
}

static void tiers_release(config_t *c, const config__row_t *r)
{
    for (int i = 0; i < c->ntiers; i++) config__tier_release(&c->tiers[i]);
    c->ntiers = 0;
}

static void tiers_copy(config_t *dst, const config_t *src, const config__row_t *r)
{
    for (int i = 0; i < src->ntiers; i++) {
        dst->tiers[i] = src->tiers[i];
        dst->tiers[i].name = xstrdup(src->tiers[i].name);
        dst->tiers[i].path = xstrdup(src->tiers[i].path);
    }
    dst->ntiers = src->ntiers;
}

static const config__type_t type_tiers = {
    .name = "tiers",
    .parse = tiers_parse,
    .format = tiers_format,
    .describe = tiers_describe,
    .release = tiers_release,
    .copy = tiers_copy,
};

/* ---- checks of string keys -------------------------------------------------------------- */

static const char *check_cluster_config_file(const char *v)
{
    return *v ? NULL : "cluster-config-file can't be empty";
}

/* Redis's rule for cluster-announce-hostname: letters, digits, '-' and '.' only */
static const char *check_cluster_hostname(const char *v)
{
    if (strlen(v) > 255)
        return "Hostnames must be less than 256 characters and only contain alphanumeric "
               "characters, '-' or '.'";
    for (; *v; v++)
        if (!isalnum((unsigned char)*v) && *v != '-' && *v != '.')
            return "Hostnames must be less than 256 characters and only contain alphanumeric "
                   "characters, '-' or '.'";
    return NULL;
}

static const char *check_dir(const char *v)
{
    return *v ? NULL : "dir can't be empty";
}

static const char *check_appendfilename(const char *v)
{
    if (!*v) return "appendfilename can't be empty";
    if (strchr(v, '/')) return "appendfilename can't be a path, just a filename";
    return NULL;
}

/* Redis's syntax: pairs of "seconds changes", or "" for none. */
static const char *check_save(const char *v)
{
    config_strlist_t w;
    const char *bad = NULL;
    long long n;

    config__split(v, &w);
    if (w.count % 2) bad = "Invalid save parameters";
    for (int i = 0; !bad && i < w.count; i++)
        if (config__parse_ll(w.items[i], &n) < 0 || n < 0) bad = "Invalid save parameters";
    config__strlist_free(&w);
    return bad;
}

/* ---- the table -------------------------------------------------------------------------- */

static const config__enum_t loglevel_enum[] = {
    {"debug", CONFIG_LOG_DEBUG},     {"verbose", CONFIG_LOG_VERBOSE}, {"notice", CONFIG_LOG_NOTICE},
    {"warning", CONFIG_LOG_WARNING}, {"nothing", CONFIG_LOG_NOTHING}, {NULL, 0},
};
static const config__enum_t pubsub_default_enum[] = {
    {"resetchannels", 0},
    {"allchannels", 1},
    {NULL, 0},
};
static const config__enum_t fsync_enum[] = {
    {"always", CONFIG_FSYNC_ALWAYS},
    {"everysec", CONFIG_FSYNC_EVERYSEC},
    {"no", CONFIG_FSYNC_NO},
    {NULL, 0},
};
static const config__enum_t policy_enum[] = {
    {"volatile-lru", CONFIG_MAXMEMORY_VOLATILE_LRU},
    {"volatile-lfu", CONFIG_MAXMEMORY_VOLATILE_LFU},
    {"volatile-random", CONFIG_MAXMEMORY_VOLATILE_RANDOM},
    {"volatile-ttl", CONFIG_MAXMEMORY_VOLATILE_TTL},
    {"allkeys-lru", CONFIG_MAXMEMORY_ALLKEYS_LRU},
    {"allkeys-lfu", CONFIG_MAXMEMORY_ALLKEYS_LFU},
    {"allkeys-random", CONFIG_MAXMEMORY_ALLKEYS_RANDOM},
    {"noeviction", CONFIG_MAXMEMORY_NOEVICTION},
    {NULL, 0},
};
static const config__enum_t supervised_enum[] = {
    {"no", CONFIG_SUPERVISED_NO},
    {"systemd", CONFIG_SUPERVISED_SYSTEMD},
    {"auto", CONFIG_SUPERVISED_AUTO},
    {NULL, 0},
};
static const config__enum_t endpoint_enum[] = {
    {"ip", CONFIG_ENDPOINT_IP},
    {"hostname", CONFIG_ENDPOINT_HOSTNAME},
    {"unknown-endpoint", CONFIG_ENDPOINT_UNKNOWN},
    {NULL, 0},
};
static const config__enum_t debug_enum[] = {
    {"no", CONFIG_DEBUG_CMD_NO},
    {"yes", CONFIG_DEBUG_CMD_YES},
    {"local", CONFIG_DEBUG_CMD_LOCAL},
    {NULL, 0},
};

/* ---- maxmemory-clients: bytes or a percentage of maxmemory ------------------------------ */

/* Kept as Redis keeps it: bytes, or a percentage as a negative number. */
static int mem_or_pct_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                            config__why_t *why)
{
    size_t len = strlen(v);
    long long n;
    if (len > 1 && v[len - 1] == '%') {
        char num[32];
        char *end;
        if (len - 1 >= sizeof num) goto bad;
        memcpy(num, v, len - 1);
        num[len - 1] = '\0';
        n = strtoll(num, &end, 10);
        if (*end || !isdigit((unsigned char)num[0])) goto bad;
        if (n > 100) {
            config__why_set(why, 0, "percentage argument must be less or equal to 100");
            return -1;
        }
        n = -n;
    } else if (config__parse_memory(v, &n) < 0) {
        goto bad;
    }
    memcpy((char *)c + r->offset, &n, sizeof n);
    return 0;
bad:
    config__why_set(why, 1, "argument must be a memory or percent value");
    return -1;
}

static void mem_or_pct_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    long long n;
    memcpy(&n, (const char *)c + r->offset, sizeof n);
    if (n < 0) buf_printf(out, "%lld%%", -n);
    else config__format_memory(out, n, human);
}

static void mem_or_pct_describe(const config__row_t *r, buf_t *out, int brief)
{
    buf_append_str(out, brief ? "bytes or N%" : "a memory value or a percentage up to 100%");
}

static const config__type_t type_mem_or_pct = {
    .name = "memory-or-percent",
    .parse = mem_or_pct_parse,
    .format = mem_or_pct_format,
    .describe = mem_or_pct_describe,
};

/* shutdown-on-sigint/sigterm: "default" (0), or some of save nosave now force, kept as bits
 * and shown in this order, as Redis keeps and shows its flags configs. */
static const char *const shutdown_words[] = {"save", "nosave", "now", "force"};

static int shutdown_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                          config__why_t *why)
{
    int bits = 0, words = 0;
    for (const char *p = v + strspn(v, " "); *p; p += strspn(p, " ")) {
        size_t len = strcspn(p, " "), i;
        words++;
        if (len == 7 && !strncasecmp(p, "default", 7)) {
            p += len;
            continue;
        }
        for (i = 0; i < 4; i++)
            if (len == strlen(shutdown_words[i]) && !strncasecmp(p, shutdown_words[i], len)) break;
        if (i == 4) { /* not a flag: refused as a whole */
            words = 0;
            break;
        }
        bits |= 1 << i;
        p += len;
    }
    if (!words) {
        config__why_set(why, 1, "argument(s) must be one of the following: default, save, "
                                "nosave, now, force");
        return -1;
    }
    if ((bits & 3) == 3) {
        config__why_set(why, 0, "shutdown options SAVE and NOSAVE can't be used simultaneously");
        return -1;
    }
    memcpy((char *)c + r->offset, &bits, sizeof bits);
    return 0;
}

static void shutdown_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    int bits, n = 0;
    memcpy(&bits, (const char *)c + r->offset, sizeof bits);
    if (!bits) buf_append_str(out, "default");
    for (int i = 0; i < 4; i++)
        if (bits & (1 << i)) buf_printf(out, "%s%s", n++ ? " " : "", shutdown_words[i]);
}

static void shutdown_describe(const config__row_t *r, buf_t *out, int brief)
{
    buf_append_str(out, brief ? "default, or save|nosave now force"
                              : "default, or some of save, nosave, now, force");
}

static const config__type_t type_shutdown = {
    .name = "flags",
    .parse = shutdown_parse,
    .format = shutdown_format,
    .describe = shutdown_describe,
};

/* latency-tracking-info-percentiles: numbers in 0..100, space-separated (may be empty), stored
 * as Redis shows them back ("0.0 50.0 99.90" reads as "0 50 99.9"). */
static int percentiles_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                             config__why_t *why)
{
    buf_t norm;
    buf_init(&norm);
    for (const char *p = v + strspn(v, " "); *p;) {
        char *end;
        double d = strtod(p, &end);
        if (end == p || (*end && *end != ' ') || !(d >= 0 && d <= 100)) {
            buf_deinit(&norm);
            config__why_set(why, 0,
                            "latency-tracking-info-percentiles must be between 0.0 and 100.0");
            return -1;
        }
        buf_printf(&norm, "%s%.15g", norm.len ? " " : "", d);
        p = end + strspn(end, " ");
    }
    buf_push(&norm, '\0');
    int rc = config__type_string.parse(c, r, norm.data, from_file, why);
    buf_deinit(&norm);
    return rc;
}

static void percentiles_describe(const config__row_t *r, buf_t *out, int brief)
{
    (void)r;
    buf_append_str(out, brief ? "numbers 0..100" : "space-separated numbers in 0..100");
}

static const config__type_t type_percentiles = {
    .name = "string",
    .parse = percentiles_parse,
    .format = config__string_format,
    .describe = percentiles_describe,
    .release = config__string_release,
    .copy = config__string_copy,
};

static const config__enum_t diskless_load_enum[] = {
    {"disabled", 0}, {"on-empty-db", 1}, {"swapdb", 2}, {NULL, 0},
};

#define F(fld) .offset = offsetof(config_t, fld), .size = sizeof(((config_t *)0)->fld)
#define T(t) .type = &config__type_##t
#define IMM .flags = CONFIG__IMMUTABLE
#define LL_MAX .max = LLONG_MAX
#define I_MAX .max = INT_MAX

const config__row_t config__rows[] = {
    /* network */
    {"port", T(int), F(port), .def = "6379", .max = 65535,
     .doc = "TCP port to listen on (0: no TCP listener)."},
    {"bind", T(list), F(bind), .def = "127.0.0.1", .max = CONFIG_MAX_BIND, .flags = CONFIG__MULTI,
     .doc = "Addresses to listen on, space-separated; a leading '-' marks one that may be "
            "missing."},
    {"unixsocket", T(string), F(unixsocket), .def = "", IMM,
     .doc = "Path of the Unix socket to listen on (empty: none); shared-memory clients attach "
            "through it."},
    {"unixsocketperm", T(octal), F(unixsocketperm), .def = "700", .max = 0777, IMM,
     .doc = "Permissions of the Unix socket, in octal."},
    {"protected-mode", T(bool), F(protected_mode), .def = "yes",
     .doc = "Without requirepass, accept TCP clients only from loopback addresses, whatever "
            "bind says (Unix-socket clients always; a peer whose address cannot be read is "
            "refused)."},
    {"requirepass", T(string), F(requirepass), .def = "",
     .doc = "Password that clients give with AUTH (empty: no password)."},
    {"aclfile", T(string), F(aclfile), .def = "", IMM,
     .doc = "File of ACL users (`user <name> <rules>` lines) that ACL LOAD reads and ACL SAVE "
            "writes; relative to dir (empty: none, users come from `users`)."},
    {"acl-pubsub-default", T(enum), F(acl_pubsub_default), .def = "resetchannels",
     .enums = pubsub_default_enum,
     .doc = "Channel permissions a new ACL user (or a reset one) starts with."},
    {"acllog-max-len", T(int), F(acllog_max_len), .def = "128", LL_MAX,
     .doc = "Most entries the ACL LOG keeps."},
    {"users", T(lines), F(users), .def = "", .max = 1000000, .alias = "user",
     .flags = CONFIG__MULTI | CONFIG__LINES | CONFIG__IMMUTABLE | CONFIG__SET_SAME,
     .doc =
         "ACL users, one per item, as ACL SETUSER rules after the name: "
         "[\"alice on >pw ~* +@all\"]. Not with aclfile. CONFIG SET takes only its current value "
         "(a no-op)."},
    {"maxclients", T(int), F(maxclients), .def = "10000", .min = 1, I_MAX,
     .doc = "Most clients connected at once."},
    {"timeout", T(int), F(timeout), .def = "0", I_MAX,
     .doc = "Close a client idle for this many seconds (0: never)."},
    {"tcp-keepalive", T(int), F(tcp_keepalive), .def = "300", I_MAX,
     .doc = "Seconds between TCP keepalive probes on client sockets (0: off)."},
    {"tcp-backlog", T(int), F(tcp_backlog), .def = "511", I_MAX, IMM,
     .doc = "Backlog of pending connections given to listen()."},
    {"socket-spin-us", T(int), F(socket_spin_us), .def = "200", .min = 0, .max = 1000,
     .doc = "Microseconds the loop keeps polling without sleeping after a read from a TCP or "
            "Unix socket client, so a client that waits for each reply has its next request "
            "caught without two wake-ups; adaptive: a spin that catches nothing halves the "
            "next, down to a sixteenth (0: never spin)."},
    {"io-threads", T(int), F(io_threads), .def = "1", .min = 1, .max = 128, IMM,
     .doc = "Threads that read, parse and write sockets (1: the loop thread does it all)."},
    /* cluster */
    {"cluster-enabled", T(bool), F(cluster_enabled), .def = "no", IMM,
     .doc = "Run as a node of a Redis Cluster (16384 hash slots, MOVED/ASK redirects, the "
            "cluster bus on cluster-port); only database 0."},
    {"cluster-config-file", T(string), F(cluster_config_file), .def = "nodes.conf", IMM,
     .check = check_cluster_config_file,
     .doc = "The node's cluster state (Redis's nodes.conf format); a relative path is inside "
            "dir. Written by the server, locked while it runs (<file>.lock)."},
    {"cluster-node-timeout", T(int), F(cluster_node_timeout), .def = "15000", .min = 1, LL_MAX,
     .doc = "Milliseconds a node may not answer before it is flagged PFAIL."},
    {"cluster-port", T(int), F(cluster_port), .def = "0", .max = 65535, IMM,
     .doc = "Port of the cluster bus (0: port + 10000)."},
    {"cluster-announce-ip", T(string), F(cluster_announce_ip), .def = "",
     .doc = "Address other nodes and clients are told (empty: the one the peers see)."},
    {"cluster-announce-port", T(int), F(cluster_announce_port), .def = "0", .max = 65535,
     .doc = "Client port other nodes and clients are told (0: port)."},
    {"cluster-announce-bus-port", T(int), F(cluster_announce_bus_port), .def = "0",
     .max = 65535, .doc = "Bus port other nodes are told (0: the bus port)."},
    {"cluster-announce-hostname", T(string), F(cluster_announce_hostname), .def = "",
     .check = check_cluster_hostname,
     .doc = "Hostname shown in CLUSTER NODES, SLOTS and SHARDS (empty: none)."},
    {"cluster-require-full-coverage", T(bool), F(cluster_require_full_coverage), .def = "yes",
     .doc = "The cluster is down (CLUSTERDOWN) while a slot is unassigned or its node failed."},
    {"cluster-allow-reads-when-down", T(bool), F(cluster_allow_reads_when_down), .def = "no",
     .doc = "Serve read-only commands for this node's slots while the cluster is down."},
    {"cluster-preferred-endpoint-type", T(enum), F(cluster_preferred_endpoint_type), .def = "ip",
     .enums = endpoint_enum,
     .doc = "What MOVED, ASK, CLUSTER SLOTS and SHARDS name a node by: its ip, its hostname "
            "(\"?\" when it has none) or nothing (unknown-endpoint: clients reuse the address "
            "they used)."},
    {"cluster-allow-pubsubshard-when-down", T(bool), F(cluster_allow_pubsubshard_when_down),
     .def = "yes", .doc = "Serve SPUBLISH and SSUBSCRIBE for this node's slots while the "
                          "cluster is down."},
    /* general */
    {"dir", T(string), F(dir), .def = ".", IMM, .check = check_dir,
     .doc = "Data directory: the append-only file and relative tier paths live here."},
    {"databases", T(int), F(databases), .def = "16", .min = 1, .max = 1024, IMM,
     .doc = "Number of databases (SELECT 0 to databases-1)."},
    {"daemonize", T(bool), F(daemonize), .def = "no", IMM,
     .doc = "Fork into the background at start."},
    {"supervised", T(enum), F(supervised), .def = "no", IMM, .enums = supervised_enum,
     .doc = "Tell systemd when ready (sd_notify); auto does so when NOTIFY_SOCKET is set."},
    {"pidfile", T(string), F(pidfile), .def = "", IMM,
     .doc = "Write the process id to this file (empty: no file)."},
    {"loglevel", T(enum), F(loglevel), .def = "notice", .enums = loglevel_enum,
     .doc = "Least severe messages that are logged."},
    {"logfile", T(string), F(logfile), .def = "", IMM,
     .doc = "Log to this file (empty: standard output)."},
    {"hz", T(int), F(hz), .def = "10", .min = 1, .max = 500,
     .doc = "Background task rounds (expiry, timeouts, rehashing) per second."},
    {"enable-debug-command", T(enum), F(enable_debug_command), .def = "no", IMM,
     .enums = debug_enum,
     .doc = "Allow DEBUG: yes, no, or local (from loopback and Unix-socket clients only)."},
    /* limits and memory */
    {"proto-max-bulk-len", T(memory), F(proto_max_bulk_len), .def = "512mb", .min = 1 << 20, LL_MAX,
     .doc = "Largest bulk string a client may send."},
    {"client-query-buffer-limit", T(memory), F(client_query_buffer_limit), .def = "1gb",
     .min = 1 << 20, LL_MAX,
     .doc = "Largest query buffer of one client; a client past it is closed."},
    {"client-output-buffer-limit", .type = &type_obuf, F(client_obuf_limits),
     .def = "normal 0 0 0 replica 256mb 64mb 60 pubsub 32mb 8mb 60", .flags = CONFIG__MULTI,
     .doc = "Per client class: hard limit, soft limit, soft seconds; a client past the hard "
            "limit, or past the soft one that long, is closed (0: no limit)."},
    {"tget-stall-timeout", T(int), F(tget_stall_timeout), .def = "60", .min = 1, I_MAX,
     .doc = "Close a client that has read nothing of a streamed TGET reply (4 MiB or more) for "
            "this many seconds: until it reads, writes to that blob wait."},
    {"max-reply-bytes", T(memory), F(max_reply_bytes), .def = "1gb", .min = 1 << 20, LL_MAX,
     .doc = "Largest reply one command may build: a count-driven reply estimated past it (or "
            "past maxmemory or the client's hard output limit) is refused with an error, and "
            "a client whose pending output grows past it is closed."},
    {"maxmemory", T(memory), F(maxmemory), .def = "0", LL_MAX,
     .doc = "Limit on the RAM that is not a tier: keys, values, metadata, buffers (0: no limit)."},
    {"lfu-log-factor", T(int), F(lfu_log_factor), .def = "10", .min = 0, .max = 1000000,
     .doc = "How slowly the LFU counter of a key grows with its accesses (Redis's setting)."},
    {"lfu-decay-time", T(int), F(lfu_decay_time), .def = "1", .min = 0, .max = 1000000,
     .doc = "Minutes of idleness per decrement of a key's LFU counter (Redis's setting)."},
    {"tracking-table-max-keys", T(int), F(tracking_table_max_keys), .def = "1000000", .min = 0,
     I_MAX,
     .doc = "Most keys client-side caching remembers for CLIENT TRACKING clients; past "
            "it, random ones are invalidated (0: no limit)."},
    {"maxmemory-policy", T(enum), F(maxmemory_policy), .def = "noeviction", .enums = policy_enum,
     .doc = "What to evict when maxmemory is reached (noeviction: refuse writes)."},
    {"maxmemory-samples", T(int), F(maxmemory_samples), .def = "5", .min = 1, .max = 64,
     .doc = "Keys sampled per database for each LRU, LFU or TTL eviction (more: closer to exact)."},
    {"maxmemory-eviction-tenacity", T(int), F(maxmemory_eviction_tenacity), .def = "10", .min = 0,
     .max = 100,
     .doc = "Time spent evicting per command before the rest is left to the background "
            "(10: 500 us, 100: no limit; Redis's scale)."},
    {"busy-reply-threshold", T(int), F(busy_reply_threshold), .def = "5000", I_MAX,
     .alias = "lua-time-limit",
     .doc = "Milliseconds a script (EVAL, FCALL) may run before other clients get -BUSY and "
            "SCRIPT KILL / FUNCTION KILL may stop it (0: never)."},
    /* persistence */
    {"appendonly", T(bool), F(appendonly), .def = "no",
     .doc = "Log every write to the append-only file and replay it at start."},
    {"appendfilename", T(string), F(appendfilename), .def = "appendonly.aof", IMM,
     .check = check_appendfilename, .doc = "Name of the append-only file, inside dir."},
    {"appendfsync", T(enum), F(appendfsync), .def = "everysec", .enums = fsync_enum,
     .doc = "When to fsync the append-only file: always (each write), everysec, or no (the "
            "OS decides)."},
    {"aof-load-truncated", T(bool), F(aof_load_truncated), .def = "yes",
     .doc = "Start from an append-only file whose last command is cut short, dropping that "
            "command."},
    {"auto-aof-rewrite-percentage", T(int), F(auto_aof_rewrite_percentage), .def = "100", I_MAX,
     .doc = "Rewrite the append-only file once it grew by this percentage since the last "
            "rewrite (0: never)."},
    {"auto-aof-rewrite-min-size", T(memory), F(auto_aof_rewrite_min_size), .def = "64mb", LL_MAX,
     .doc = "No automatic rewrite while the append-only file is smaller than this."},
    {"save", T(string), F(save), .def = "", .flags = CONFIG__MULTI, .check = check_save,
     .doc = "Accepted for compatibility with Redis and ignored: there are no RDB snapshots."},
    /* keyspace */
    {"lazyfree-lazy-user-del", T(bool), F(lazyfree_lazy_user_del), .def = "no",
     .doc = "DEL frees large values in the background, as UNLINK does."},
    {"active-expire-enabled", T(bool), F(active_expire_enabled), .def = "yes",
     .doc = "Delete expired keys in a background cycle, not only when they are accessed."},
    {"activerehashing", T(bool), F(activerehashing), .def = "yes",
     .doc = "Background cycles help rehash the keyspace's hash tables."},
    {"notify-keyspace-events", .type = &type_notify, F(notify_keyspace_events), .def = "",
     .doc = "Keyspace notifications to publish, as Redis's letters (empty: none)."},
    {"hash-max-listpack-entries", T(int), F(hash_max_listpack_entries), .def = "512", LL_MAX,
     .alias = "hash-max-ziplist-entries",
     .doc = "Hashes of at most this many fields use the compact encoding."},
    {"hash-max-listpack-value", T(int), F(hash_max_listpack_value), .def = "64", LL_MAX,
     .alias = "hash-max-ziplist-value",
     .doc = "Hashes whose fields and values are at most this many bytes use the compact "
            "encoding."},
    {"zset-max-listpack-entries", T(int), F(zset_max_listpack_entries), .def = "128", LL_MAX,
     .alias = "zset-max-ziplist-entries",
     .doc = "Sorted sets of at most this many members use the compact encoding."},
    {"zset-max-listpack-value", T(int), F(zset_max_listpack_value), .def = "64", LL_MAX,
     .alias = "zset-max-ziplist-value",
     .doc = "Sorted sets whose members are at most this many bytes use the compact encoding."},
    {"set-max-intset-entries", T(int), F(set_max_intset_entries), .def = "512", LL_MAX,
     .doc = "Sets of at most this many integers use the integer-array encoding."},
    {"set-max-listpack-entries", T(int), F(set_max_listpack_entries), .def = "128", LL_MAX,
     .doc = "Sets of at most this many members use the compact encoding."},
    {"set-max-listpack-value", T(int), F(set_max_listpack_value), .def = "64", LL_MAX,
     .doc = "Sets whose members are at most this many bytes use the compact encoding."},
    {"list-max-listpack-size", T(int), F(list_max_listpack_size), .def = "-2", .min = INT_MIN,
     I_MAX, .alias = "list-max-ziplist-size",
     .doc = "Size of each list node: > 0 entries, or -1..-5 for 4, 8, 16, 32, 64 KiB."},
    {"stream-node-max-bytes", T(memory), F(stream_node_max_bytes), .def = "4096", LL_MAX,
     .doc = "Most bytes of one stream node (a listpack of entries); 0: no limit."},
    {"stream-node-max-entries", T(int), F(stream_node_max_entries), .def = "100", LL_MAX,
     .doc = "Most entries of one stream node; 0: no limit."},
    {"list-compress-depth", T(int), F(list_compress_depth), .def = "0", I_MAX,
     .doc = "List nodes left uncompressed at each end (0: no compression)."},
    {"hll-sparse-max-bytes", T(memory), F(hll_sparse_max_bytes), .def = "3000", LL_MAX,
     .doc = "HyperLogLogs of at most this many bytes (header included) keep the sparse "
            "encoding; past it PFADD converts them to dense (12304 bytes)."},
    /* introspection */
    {"slowlog-log-slower-than", T(int), F(slowlog_log_slower_than), .def = "10000", .min = -1,
     LL_MAX, .doc = "Slow log threshold in microseconds (-1: off, 0: log every command)."},
    {"slowlog-max-len", T(int), F(slowlog_max_len), .def = "128", LL_MAX,
     .doc = "Entries kept in the slow log."},
    {"latency-monitor-threshold", T(int), F(latency_monitor_threshold), .def = "0", LL_MAX,
     .doc = "Record events slower than this many milliseconds for LATENCY (0: off)."},
    {"latency-tracking", T(bool), F(latency_tracking), .def = "yes",
     .doc = "Keep a histogram of each command's latencies (LATENCY HISTOGRAM, INFO latencystats)."},
    {"latency-tracking-info-percentiles", .type = &type_percentiles,
     F(latency_tracking_info_percentiles), .def = "50 99 99.9",
     .doc = "Percentiles INFO latencystats reports per command, space-separated, 0 to 100."},
    /* search: */
    {"search-enabled", T(bool), F(search_enabled), .def = "yes",
     .doc = "Index blob contents for keyword search (BM25). CONFIG SET indexes every blob again "
            "(yes) or drops their contents from the index (no)."},
    {"search-max-bytes-per-blob", T(memory), F(search_max_bytes_per_blob), .def = "1mb", LL_MAX,
     .doc = "Bytes of each blob indexed, from its start (0: contents are not indexed)."},
    {"search-skip-binary", T(bool), F(search_skip_binary), .def = "yes",
     .doc = "Do not index blobs whose contents are not valid UTF-8 text."},
    /* shm: */
    {"shm-enabled", T(bool), F(shm_enabled), .def = "yes",
     .doc = "Let clients on this machine attach through shared memory (over the Unix socket)."},
    {"shm-ring-size", T(memory), F(shm_ring_size), .def = "1mb", .min = 4096, .max = 1LL << 30,
     .doc = "Bytes of each request and reply ring of a new shared-memory client."},
    {"shm-data-size", T(memory), F(shm_data_size), .def = "32mb", .min = 0, .max = 1LL << 30,
     .doc = "Bytes of each of the two data areas (requests, replies) of a new shared-memory "
            "client, where values of 2 KiB or more travel without a copy through the rings "
            "(0: none)."},
    /* tiers: */
    {"organizer", T(bool), F(organizer), .def = "no",
     .doc = "Rescore blobs in the background from access recency and frequency and move them "
            "to the tier their new score picks."},
    {"organizer-batch", T(int), F(organizer_batch), .def = "100", .min = 1, .max = 100000,
     .doc = "Blobs the organizer rescores per server tick (hz times a second)."},
    {"organizer-half-life", T(int), F(organizer_half_life), .def = "600", .min = 1,
     .max = 100000000,
     .doc = "Seconds after which the recency half of an idle blob's score halves."},
    {"max-blob-size", T(memory), F(max_blob_size), .def = "4gb", .min = 1, LL_MAX,
     .doc = "Largest blob a tag may hold (TPUT and TTRUNCATE past it are refused)."},
    {"tiers", .type = &type_tiers, F(tiers), .def = "ram:ram:1gb",
     .flags = CONFIG__IMMUTABLE | CONFIG__MULTI | CONFIG__SET_SAME,
     .doc = "Storage tiers, fastest first: name:kind:capacity[:path[:score]], kind ram or file, "
            "path relative to dir, score in [0, 1] (default: spread evenly). CONFIG SET takes only "
            "its current value (a no-op)."},
/* Redis 7.0 keys accepted for compatibility, inert here (config_t.inert) */
#define INERT(what) .doc = "Accepted as Redis 7.0 does; no effect here (" what ")."
    {"maxmemory-clients", .type = &type_mem_or_pct, F(inert.maxmemory_clients), .def = "0",
     INERT("clients are not evicted for their memory")},
    {"min-replicas-to-write", .alias = "min-slaves-to-write", T(int), F(min_replicas_to_write),
     .def = "0", I_MAX,
     .doc = "Refuse writes with -NOREPLICAS unless this many replicas are connected; there is no "
            "replication here, so any value above 0 (with min-replicas-max-lag above 0) refuses "
            "every write, as Redis without replicas does."},
    {"min-replicas-max-lag", .alias = "min-slaves-max-lag", T(int), F(min_replicas_max_lag),
     .def = "10", I_MAX,
     .doc = "Seconds within which a replica counts as good (0: the check is off)."},
    {"repl-backlog-size", T(memory), F(inert.repl_backlog_size), .def = "1mb", .min = 16384, LL_MAX,
     INERT("no replication")},
    {"repl-backlog-ttl", T(int), F(inert.repl_backlog_ttl), .def = "3600", I_MAX,
     INERT("no replication")},
    {"repl-timeout", T(int), F(inert.repl_timeout), .def = "60", .min = 1, I_MAX,
     INERT("no replication")},
    {"repl-ping-replica-period", .alias = "repl-ping-slave-period", T(int),
     F(inert.repl_ping_replica_period), .def = "10", .min = 1, I_MAX, INERT("no replication")},
    {"repl-diskless-sync", T(bool), F(inert.repl_diskless_sync), .def = "yes",
     INERT("no replication")},
    {"repl-diskless-sync-delay", T(int), F(inert.repl_diskless_sync_delay), .def = "5", I_MAX,
     INERT("no replication")},
    {"repl-diskless-load", T(enum), F(inert.repl_diskless_load), .def = "disabled",
     .enums = diskless_load_enum, INERT("no replication")},
    {"repl-disable-tcp-nodelay", T(bool), F(inert.repl_disable_tcp_nodelay), .def = "no",
     INERT("no replication")},
    {"replica-priority", .alias = "slave-priority", T(int), F(inert.replica_priority), .def = "100",
     I_MAX, INERT("no replication")},
    {"replica-read-only", .alias = "slave-read-only", T(bool), F(inert.replica_read_only),
     .def = "yes", INERT("never a replica")},
    {"replica-serve-stale-data", .alias = "slave-serve-stale-data", T(bool),
     F(inert.replica_serve_stale_data), .def = "yes", INERT("never a replica")},
    {"replica-ignore-maxmemory", .alias = "slave-ignore-maxmemory", T(bool),
     F(inert.replica_ignore_maxmemory), .def = "yes", INERT("never a replica")},
    {"replica-lazy-flush", .alias = "slave-lazy-flush", T(bool), F(inert.replica_lazy_flush),
     .def = "no", INERT("never a replica")},
    {"replica-announced", T(bool), F(inert.replica_announced), .def = "yes",
     INERT("never a replica")},
    {"replica-announce-ip", .alias = "slave-announce-ip", T(string), F(inert.replica_announce_ip),
     .def = "", INERT("never a replica")},
    {"masterauth", T(string), F(inert.masterauth), .def = "", INERT("never a replica")},
    {"masteruser", T(string), F(inert.masteruser), .def = "", INERT("never a replica")},
    {"replicaof", .alias = "slaveof", T(string), F(inert.replicaof), .def = "", IMM,
     INERT("never a replica")},
    {"lazyfree-lazy-eviction", T(bool), F(inert.lazyfree_lazy_eviction), .def = "no",
     INERT("evicted values are freed at once")},
    {"lazyfree-lazy-expire", T(bool), F(inert.lazyfree_lazy_expire), .def = "no",
     INERT("expired values are freed at once")},
    {"lazyfree-lazy-server-del", T(bool), F(inert.lazyfree_lazy_server_del), .def = "no",
     INERT("values that commands overwrite are freed at once")},
    {"lazyfree-lazy-user-flush", T(bool), F(inert.lazyfree_lazy_user_flush), .def = "no",
     INERT("FLUSHDB and FLUSHALL free at once, ASYNC or not")},
    {"activedefrag", T(bool), F(inert.activedefrag), .def = "no", INERT("no defragmentation")},
    {"active-defrag-ignore-bytes", T(memory), F(inert.active_defrag_ignore_bytes), .def = "100mb",
     .min = 1, LL_MAX, INERT("no defragmentation")},
    {"active-defrag-threshold-lower", T(int), F(inert.active_defrag_threshold_lower), .def = "10",
     .max = 1000, INERT("no defragmentation")},
    {"active-defrag-threshold-upper", T(int), F(inert.active_defrag_threshold_upper), .def = "100",
     .max = 1000, INERT("no defragmentation")},
    {"active-defrag-cycle-min", T(int), F(inert.active_defrag_cycle_min), .def = "1", .min = 1,
     .max = 99, INERT("no defragmentation")},
    {"active-defrag-cycle-max", T(int), F(inert.active_defrag_cycle_max), .def = "25", .min = 1,
     .max = 99, INERT("no defragmentation")},
    {"active-defrag-max-scan-fields", T(int), F(inert.active_defrag_max_scan_fields), .def = "1000",
     .min = 1, I_MAX, INERT("no defragmentation")},
    {"active-expire-effort", T(int), F(inert.active_expire_effort), .def = "1", .min = 1, .max = 10,
     INERT("the expiry cycle has a fixed effort")},
    {"dynamic-hz", T(bool), F(inert.dynamic_hz), .def = "yes", INERT("hz is fixed")},
    {"jemalloc-bg-thread", T(bool), F(inert.jemalloc_bg_thread), .def = "yes",
     INERT("freed pages are given back by the server cron")},
    {"stop-writes-on-bgsave-error", T(bool), F(inert.stop_writes_on_bgsave_error), .def = "yes",
     INERT("no RDB file; append-only file errors always stop writes")},
    {"rdbcompression", T(bool), F(inert.rdbcompression), .def = "yes", INERT("no RDB file")},
    {"rdbchecksum", T(bool), F(inert.rdbchecksum), .def = "yes", IMM, INERT("no RDB file")},
    {"rdb-save-incremental-fsync", T(bool), F(inert.rdb_save_incremental_fsync), .def = "yes",
     INERT("no RDB file")},
    {"dbfilename", T(string), F(inert.dbfilename), .def = "dump.rdb", INERT("no RDB file")},
    {"aof-use-rdb-preamble", T(bool), F(inert.aof_use_rdb_preamble), .def = "yes",
     INERT("the append-only file holds commands only")},
    {"aof-timestamp-enabled", T(bool), F(inert.aof_timestamp_enabled), .def = "no",
     INERT("the append-only file always has its own time lines")},
    {"aof-rewrite-incremental-fsync", T(bool), F(inert.aof_rewrite_incremental_fsync), .def = "yes",
     INERT("rewrites are written whole, then synced")},
    {"no-appendfsync-on-rewrite", T(bool), F(inert.no_appendfsync_on_rewrite), .def = "no",
     INERT("appendfsync applies during rewrites too")},
    {"shutdown-timeout", T(int), F(inert.shutdown_timeout), .def = "10", I_MAX,
     INERT("no replicas to wait for")},
    {"shutdown-on-sigint", .type = &type_shutdown, F(inert.shutdown_on_sigint), .def = "default",
     .flags = CONFIG__MULTI, INERT("SIGINT and SIGTERM always shut down as SHUTDOWN")},
    {"shutdown-on-sigterm", .type = &type_shutdown, F(inert.shutdown_on_sigterm), .def = "default",
     .flags = CONFIG__MULTI, INERT("SIGINT and SIGTERM always shut down as SHUTDOWN")},
    {"disable-thp", T(bool), F(inert.disable_thp), .def = "yes", IMM,
     INERT("transparent huge pages are left as the system sets them")},
    {"key-load-delay", T(int), F(inert.key_load_delay), .def = "0", .min = INT_MIN, I_MAX,
     .flags = CONFIG__HIDDEN,
     INERT("a debugging key of Redis's RDB loading; hidden from CONFIG GET *")},
#undef INERT
};

const size_t config__nrows = sizeof config__rows / sizeof config__rows[0];
