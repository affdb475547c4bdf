/* types.c - the plain value types of config keys: bool, int, memory, octal, enum, string and
 * list. Each is a config__type_t of parse / format / describe functions that reach the field
 * through the row's offset and size, so one "int" type serves int and long long fields. Parsers
 * follow Redis's rules and error texts (config.c in Redis 7), and write the field only once the
 * whole value is known good. Loop thread (or startup). */
#include "config/config_int.h"

#include "common/alloc.h"

#include <assert.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static void *field(config_t *c, const config__row_t *r)
{
    return (char *)c + r->offset;
}

static const void *cfield(const config_t *c, const config__row_t *r)
{
    return (const char *)c + r->offset;
}

static long long num_get(const config_t *c, const config__row_t *r)
{
    if (r->size == sizeof(int)) return *(const int *)cfield(c, r);
    assert(r->size == sizeof(long long));
    return *(const long long *)cfield(c, r);
}

static void num_put(config_t *c, const config__row_t *r, long long v)
{
    if (r->size == sizeof(int)) {
        assert(v >= INT_MIN && v <= INT_MAX);
        *(int *)field(c, r) = (int)v;
    } else {
        assert(r->size == sizeof(long long));
        *(long long *)field(c, r) = v;
    }
}

/* ---- numbers ---------------------------------------------------------------------------- */

int config__parse_ll(const char *s, long long *out)
{
    const char *d = s[0] == '-' ? s + 1 : s;
    char *end;
    long long v;

    if (!isdigit((unsigned char)d[0])) return -1;
    errno = 0;
    v = strtoll(s, &end, 10);
    if (errno || *end) return -1;
    *out = v;
    return 0;
}

static const struct {
    const char *unit;
    long long mul;
} mem_units[] = {
    {"", 1},
    {"b", 1},
    {"k", 1000LL},
    {"kb", 1LL << 10},
    {"m", 1000LL * 1000},
    {"mb", 1LL << 20},
    {"g", 1000LL * 1000 * 1000},
    {"gb", 1LL << 30},
    {"t", 1000LL * 1000 * 1000 * 1000},
    {"tb", 1LL << 40},
};

int config__parse_memory(const char *s, long long *out)
{
    const char *u = s;
    long long v = 0, mul = 0;

    while (isdigit((unsigned char)*u)) {
        int d = *u++ - '0';
        if (v > (LLONG_MAX - d) / 10) return -1;
        v = v * 10 + d;
    }
    if (u == s) return -1;
    for (size_t i = 0; i < sizeof mem_units / sizeof mem_units[0]; i++)
        if (!strcasecmp(u, mem_units[i].unit)) mul = mem_units[i].mul;
    if (!mul || v > LLONG_MAX / mul) return -1;
    *out = v * mul;
    return 0;
}

void config__format_memory(buf_t *out, long long v, int human)
{
    static const char *const names[] = {"tb", "gb", "mb", "kb"};
    static const int shifts[] = {40, 30, 20, 10};

    if (human && v > 0) {
        for (int i = 0; i < 4; i++) {
            if (v % (1LL << shifts[i]) == 0) {
                buf_printf(out, "%lld%s", v >> shifts[i], names[i]);
                return;
            }
        }
    }
    buf_printf(out, "%lld", v);
}

void config__format_double(buf_t *out, double d)
{
    char tmp[64];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(tmp, sizeof tmp, "%.*g", prec, d);
        if (strtod(tmp, NULL) == d) break;
    }
    buf_append_str(out, tmp);
}

static int out_of_range(const config__row_t *r, long long v, config__why_t *why)
{
    if (v >= r->min && v <= r->max) return 0;
    config__why_set(why, 1, "argument must be between %lld and %lld inclusive", r->min, r->max);
    return 1;
}

static int int_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                     config__why_t *why)
{
    long long n;
    if (config__parse_ll(v, &n) < 0) {
        config__why_set(why, 1, "argument couldn't be parsed into an integer");
        return -1;
    }
    if (out_of_range(r, n, why)) return -1;
    num_put(c, r, n);
    return 0;
}

static void int_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    buf_printf(out, "%lld", num_get(c, r));
}

/* Appends the allowed range: "0..65535", ">= 1mb", or "" for the whole range of the field. */
static void num_range(const config__row_t *r, buf_t *out, int memory)
{
    long long top = r->size == sizeof(int) ? INT_MAX : LLONG_MAX;
    long long bottom = r->size == sizeof(int) ? INT_MIN : LLONG_MIN;

    if (r->min == bottom && r->max == top) return;
    if (r->max == top) buf_append_str(out, ">= ");
    if (memory)
        config__format_memory(out, r->min, 1);
    else
        buf_printf(out, "%lld", r->min);
    if (r->max == top) return;
    buf_append_str(out, "..");
    if (memory)
        config__format_memory(out, r->max, 1);
    else
        buf_printf(out, "%lld", r->max);
}

static void num_describe(const config__row_t *r, buf_t *out, int brief, int memory)
{
    buf_t range;

    buf_init(&range);
    num_range(r, &range, memory);
    if (!brief) {
        buf_append_str(out, memory ? "a size like 64mb (units k kb m mb g gb)" : "an integer");
        if (range.len) buf_append_str(out, range.data[0] == '>' ? " " : " in ");
    }
    if (range.len)
        buf_append_str(out, range.data);
    else if (brief)
        buf_append_str(out, "any");
    buf_deinit(&range);
}

static void int_describe(const config__row_t *r, buf_t *out, int brief)
{
    num_describe(r, out, brief, 0);
}

const config__type_t config__type_int = {
    .name = "int",
    .parse = int_parse,
    .format = int_format,
    .describe = int_describe,
};

static int memory_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                        config__why_t *why)
{
    long long n;
    if (config__parse_memory(v, &n) < 0) {
        config__why_set(why, 1, "argument must be a memory value");
        return -1;
    }
    if (out_of_range(r, n, why)) return -1;
    num_put(c, r, n);
    return 0;
}

static void memory_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    config__format_memory(out, num_get(c, r), human);
}

static void memory_describe(const config__row_t *r, buf_t *out, int brief)
{
    num_describe(r, out, brief, 1);
}

const config__type_t config__type_memory = {
    .name = "memory",
    .parse = memory_parse,
    .format = memory_format,
    .describe = memory_describe,
};

static int octal_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                       config__why_t *why)
{
    char *end;
    long long n;

    errno = 0;
    n = isdigit((unsigned char)v[0]) ? strtoll(v, &end, 8) : -1;
    if (n < 0 || errno || *end) {
        config__why_set(why, 1, "argument couldn't be parsed as an octal number");
        return -1;
    }
    if (n < r->min || n > r->max) {
        config__why_set(why, 1, "argument must be between %llo and %llo inclusive",
                        (unsigned long long)r->min, (unsigned long long)r->max);
        return -1;
    }
    num_put(c, r, n);
    return 0;
}

static void octal_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    buf_printf(out, "%llo", (unsigned long long)num_get(c, r));
}

static void octal_describe(const config__row_t *r, buf_t *out, int brief)
{
    buf_printf(out, "%s%llo..%llo", brief ? "octal " : "an octal file mode in ",
               (unsigned long long)r->min, (unsigned long long)r->max);
}

const config__type_t config__type_octal = {
    .name = "octal",
    .parse = octal_parse,
    .format = octal_format,
    .describe = octal_describe,
};

/* ---- bool and enum ---------------------------------------------------------------------- */

static int bool_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                      config__why_t *why)
{
    static const char *const words[] = {"no", "yes", "false", "true", "off", "on"};
    int n = from_file ? 6 : 2;

    for (int i = 0; i < n; i++) {
        if (!strcasecmp(v, words[i])) {
            num_put(c, r, i & 1);
            return 0;
        }
    }
    config__why_set(why, 1, "argument must be 'yes' or 'no'");
    return -1;
}

static void bool_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    buf_append_str(out, num_get(c, r) ? "yes" : "no");
}

static void bool_describe(const config__row_t *r, buf_t *out, int brief)
{
    buf_append_str(out, brief ? "yes, no" : "yes or no");
}

const config__type_t config__type_bool = {
    .name = "bool",
    .parse = bool_parse,
    .format = bool_format,
    .describe = bool_describe,
};

static void enum_names(const config__row_t *r, buf_t *out)
{
    for (const config__enum_t *e = r->enums; e->name; e++)
        buf_printf(out, "%s%s", e == r->enums ? "" : ", ", e->name);
}

static int enum_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                      config__why_t *why)
{
    buf_t names;

    for (const config__enum_t *e = r->enums; e->name; e++) {
        if (!strcasecmp(v, e->name)) {
            num_put(c, r, e->value);
            return 0;
        }
    }
    buf_init(&names);
    enum_names(r, &names);
    config__why_set(why, 1, "argument(s) must be one of the following: %s", names.data);
    buf_deinit(&names);
    return -1;
}

static void enum_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    long long v = num_get(c, r);
    for (const config__enum_t *e = r->enums; e->name; e++) {
        if (e->value == v) {
            buf_append_str(out, e->name);
            return;
        }
    }
    assert(!"enum field holds a value that has no name");
}

static void enum_describe(const config__row_t *r, buf_t *out, int brief)
{
    if (!brief) buf_append_str(out, "one of ");
    enum_names(r, out);
}

const config__type_t config__type_enum = {
    .name = "enum",
    .parse = enum_parse,
    .format = enum_format,
    .describe = enum_describe,
};

/* ---- string and list -------------------------------------------------------------------- */

static int string_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                        config__why_t *why)
{
    char **slot = field(c, r);
    const char *bad = r->check ? r->check(v) : NULL;

    if (bad) {
        config__why_set(why, 0, "%s", bad);
        return -1;
    }
    xfree(*slot);
    *slot = xstrdup(v);
    return 0;
}

void config__string_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    const char *const *slot = cfield(c, r);
    buf_append_str(out, *slot ? *slot : "");
}

static void string_describe(const config__row_t *r, buf_t *out, int brief)
{
    if (!brief) buf_append_str(out, "a string");
}

void config__string_release(config_t *c, const config__row_t *r)
{
    char **slot = field(c, r);
    xfree(*slot);
    *slot = NULL;
}

void config__string_copy(config_t *dst, const config_t *src, const config__row_t *r)
{
    char *const *from = cfield(src, r);
    char **to = field(dst, r);
    *to = *from ? xstrdup(*from) : NULL;
}

const config__type_t config__type_string = {
    .name = "string",
    .parse = string_parse,
    .format = config__string_format,
    .describe = string_describe,
    .release = config__string_release,
    .copy = config__string_copy,
};

void config__strlist_free(config_strlist_t *l)
{
    for (int i = 0; i < l->count; i++) xfree(l->items[i]);
    xfree(l->items);
    l->items = NULL;
    l->count = 0;
}

void config__split(const char *v, config_strlist_t *out)
{
    const char *p = v;

    out->items = NULL;
    out->count = 0;
    for (;;) {
        while (isspace((unsigned char)*p)) p++;
        if (!*p) break;
        const char *end = p;
        while (*end && !isspace((unsigned char)*end)) end++;
        out->items = xrealloc(out->items, (out->count + 1) * sizeof *out->items);
        out->items[out->count++] = xmemdup(p, end - p);
        p = end;
    }
}

static int list_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                      config__why_t *why)
{
    config_strlist_t next;

    config__split(v, &next);
    if (next.count > r->max) {
        config__strlist_free(&next);
        config__why_set(why, 1, "too many values (at most %lld)", r->max);
        return -1;
    }
    config__strlist_free(field(c, r));
    *(config_strlist_t *)field(c, r) = next;
    return 0;
}

static void list_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    const config_strlist_t *l = cfield(c, r);
    for (int i = 0; i < l->count; i++) buf_printf(out, "%s%s", i ? " " : "", l->items[i]);
}

static void list_describe(const config__row_t *r, buf_t *out, int brief)
{
    buf_printf(out, "%s%lld space-separated words", brief ? "up to " : "at most ", r->max);
}

static void list_release(config_t *c, const config__row_t *r)
{
    config__strlist_free(field(c, r));
}

static void list_copy(config_t *dst, const config_t *src, const config__row_t *r)
{
    const config_strlist_t *from = cfield(src, r);
    config_strlist_t *to = field(dst, r);

    to->count = from->count;
    to->items = from->count ? xmalloc(from->count * sizeof *to->items) : NULL;
    for (int i = 0; i < from->count; i++) to->items[i] = xstrdup(from->items[i]);
}

const config__type_t config__type_list = {
    .name = "list",
    .parse = list_parse,
    .format = list_format,
    .describe = list_describe,
    .release = list_release,
    .copy = list_copy,
};

/* ---- lines: a list of strings that may hold spaces (users) ------------------------------ */

static int lines_parse(config_t *c, const config__row_t *r, const char *v, int from_file,
                       config__why_t *why)
{
    config_strlist_t next = {NULL, 0};

    for (const char *p = v; *p;) {
        size_t len = strcspn(p, "\n");
        size_t b = 0, e = len;
        while (b < e && isspace((unsigned char)p[b])) b++;
        while (e > b && isspace((unsigned char)p[e - 1])) e--;
        if (e > b) {
            if (next.count >= r->max) {
                config__strlist_free(&next);
                config__why_set(why, 1, "too many values (at most %lld)", r->max);
                return -1;
            }
            next.items = xrealloc(next.items, (next.count + 1) * sizeof *next.items);
            next.items[next.count++] = xmemdup(p + b, e - b);
        }
        p += len;
        if (*p) p++;
    }
    config__strlist_free(field(c, r));
    *(config_strlist_t *)field(c, r) = next;
    return 0;
}

static void lines_format(const config_t *c, const config__row_t *r, buf_t *out, int human)
{
    const config_strlist_t *l = cfield(c, r);
    for (int i = 0; i < l->count; i++) buf_printf(out, "%s%s", i ? "\n" : "", l->items[i]);
}

static void lines_describe(const config__row_t *r, buf_t *out, int brief)
{
    buf_printf(out, "%s%lld strings (a YAML list)", brief ? "up to " : "at most ", r->max);
}

const config__type_t config__type_lines = {
    .name = "lines",
    .parse = lines_parse,
    .format = lines_format,
    .describe = lines_describe,
    .release = list_release,
    .copy = list_copy,
};
