/* config_int.h - inside the config module: the key table and the value types.
 *
 * The table (table.c) has one config__row_t per key. A row points at its type, a
 * config__type_t of functions (types.c for the plain types, table.c for the special ones), and
 * at its field through offset and size: the number types work on int and long long fields
 * alike. Parsing writes the field only on success, so a refused value leaves the config as it
 * was. Only files of config/ and its unit tests include this header. */
#ifndef CTE_CONFIG_CONFIG_INT_H
#define CTE_CONFIG_CONFIG_INT_H

#include "config/config.h"

#include <stddef.h>

/* Row flags. */
#define CONFIG__IMMUTABLE 1u /* CONFIG SET refuses it; the file and command line may set it */
#define CONFIG__MULTI 2u     /* a YAML list is accepted and joined with spaces */
#define CONFIG__LINES 4u     /* with CONFIG__MULTI: the items are joined with newlines */
/* CONFIG GET shows a hidden key only when asked by its exact name (Redis's HIDDEN_CONFIG) */
#define CONFIG__HIDDEN 8u
/* With CONFIG__IMMUTABLE, for keys of ours (not Redis's): CONFIG SET to the value CONFIG GET
 * shows is a no-op that succeeds, so a client setting back every pair of CONFIG GET * (as
 * Redis's test suite does) works; any other value is refused as immutable. Redis's own
 * immutable keys keep Redis's answer (always refused). */
#define CONFIG__SET_SAME 16u

/* Why a value was refused. msg is Redis's reason as CONFIG SET prints it after " - ". When
 * generic is set the value simply is not of the row's type, and file and command-line
 * messages say what was expected instead (type->describe). */
typedef struct config__why {
    char msg[256];
    int generic;
} config__why_t;

typedef struct config__row config__row_t;

typedef struct config__type {
    const char *name; /* for the docs: "bool", "int", ... */
    /* Parses v into the row's field of c; on failure returns -1, fills why, c unchanged.
     * from_file is set for YAML input (booleans may then be true/false). */
    int (*parse)(config_t *c, const config__row_t *r, const char *v, int from_file,
                 config__why_t *why);
    /* Appends the value: human = 0 as CONFIG GET shows it (memory in bytes), human = 1 for
     * files and docs (memory with units). Both forms parse back to the same value. */
    void (*format)(const config_t *c, const config__row_t *r, buf_t *out, int human);
    /* Appends what a value must look like: brief = 0 for messages ("an integer in 0..10"),
     * brief = 1 for the docs' values column ("0..10"). */
    void (*describe)(const config__row_t *r, buf_t *out, int brief);
    void (*release)(config_t *c, const config__row_t *r);                     /* NULL: nothing */
    void (*copy)(config_t *dst, const config_t *src, const config__row_t *r); /* NULL: memcpy */
} config__type_t;

typedef struct config__enum {
    const char *name;
    int value;
} config__enum_t;

struct config__row {
    const char *name;
    const char *alias; /* NULL or an older name, e.g. hash-max-ziplist-entries */
    const config__type_t *type;
    size_t offset;               /* of the field in config_t */
    size_t size;                 /* of the field: sizeof(int) or sizeof(long long) for numbers */
    const char *def;             /* default, parsed like any other value by config_init */
    long long min, max;          /* numbers: bounds; lists: most items */
    unsigned flags;              /* CONFIG__* */
    const config__enum_t *enums; /* enum rows: names, ending with {NULL, 0} */
    /* string rows: extra validation; returns NULL when v is fine, else Redis-style reason */
    const char *(*check)(const char *v);
    const char *doc; /* one line */
};

extern const config__row_t config__rows[];
extern const size_t config__nrows;
extern const config__type_t config__type_bool, config__type_int, config__type_memory,
    config__type_octal, config__type_enum, config__type_string, config__type_list,
    config__type_lines;
extern const char config__default_yaml_text[];
/* The string type's functions, for special types that store a string (table.c). */
void config__string_format(const config_t *c, const config__row_t *r, buf_t *out, int human);
void config__string_release(config_t *c, const config__row_t *r);
void config__string_copy(config_t *dst, const config_t *src, const config__row_t *r);

/* The row named name (or aliased so), case-insensitive; NULL when none. */
const config__row_t *config__lookup(const char *name);
/* Parses v into r's field of c (see config__type_t.parse). */
int config__parse_row(config_t *c, const config__row_t *r, const char *v, int from_file,
                      config__why_t *why);
/* Formats "bad value for 'name': 'v' (expected ...)" or "(reason)" into out. */
void config__bad_value(buf_t *out, const config__row_t *r, const char *shown_name, const char *v,
                       const config__why_t *why);
/* Deep copy: dst gets its own strings. The on_change hook is copied too. */
void config__clone(config_t *dst, const config_t *src);
/* Moves src into *dst after freeing what dst held; src must not be used afterwards. */
void config__replace(config_t *dst, config_t *src);
void config__why_set(config__why_t *why, int generic, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* Copies msg into err (cut to errlen) as one line: control bytes become spaces. errlen 0
 * writes nothing. */
void config__err(char *err, size_t errlen, const char *msg);

/* Strict decimal integer: optional '-', digits, nothing else. Returns 0 or -1. */
int config__parse_ll(const char *s, long long *out);
/* Memory value: digits and an optional unit (b k kb m mb g gb t tb). Returns 0 or -1. */
int config__parse_memory(const char *s, long long *out);
/* Appends v; with human set, in the largest unit that divides it exactly ("64mb"). */
void config__format_memory(buf_t *out, long long v, int human);
/* Splits v at whitespace into out (fresh; free with config__strlist_free). */
void config__split(const char *v, config_strlist_t *out);
void config__strlist_free(config_strlist_t *l);
/* Appends the shortest decimal form of d that parses back to d. */
void config__format_double(buf_t *out, double d);

/* Tiers (table.c). A spec is NAME:KIND:CAPACITY[:PATH[:SCORE]]. */
int config__tier_parse_spec(const char *spec, config_tier_t *t, config__why_t *why);
/* Checks one tier's fields: a valid name, a path for file tiers and none for RAM tiers, a
 * positive capacity and a score in [0, 1] or -1. */
int config__tier_check(const config_tier_t *t, config__why_t *why);
/* Replaces c's tiers by tiers[0..n) after checking the set (1..16 tiers, unique names); takes
 * ownership of the tiers' strings either way. */
int config__tiers_set(config_t *c, config_tier_t *tiers, int n, config__why_t *why);
void config__tier_release(config_tier_t *t);

#endif
