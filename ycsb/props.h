/* props.h - YCSB's properties: a set of name=value strings read from java.util.Properties
 * files (-P) and the command line (-p), and the typed reads CoreWorkload and the bindings make.
 *
 * Files are parsed as Properties.load parses them: '#' and '!' comment lines, '=' ':' or
 * blank as the separator, backslash continuation lines and escapes (\t \n \r \f \uXXXX, any
 * other escaped character stands for itself). Bytes are kept as they are (Java would read
 * them as ISO-8859-1). A props_t belongs to one thread while it is changed; read-only, any. */
#ifndef YCSB_PROPS_H
#define YCSB_PROPS_H

#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct props props_t;

/* An empty set; the caller frees it with props_free (NULL is fine). */
props_t *props_new(void);
void props_free(props_t *p);

/* Sets name to value (both copied), replacing an earlier value. */
void props_set(props_t *p, const char *name, const char *value);
/* The value of name, or NULL; owned by p until name is set again or p is freed. */
const char *props_get(const props_t *p, const char *name);
/* props_get, or def when name is not set. */
const char *props_get_or(const props_t *p, const char *name, const char *def);
/* Copies every property of src into dst (src wins). */
void props_merge(props_t *dst, const props_t *src);
/* The number of properties, and the i-th (in the order they were first set). */
size_t props_count(const props_t *p);
void props_at(const props_t *p, size_t i, const char **name, const char **value);

/* Parses text[0..len) and sets what it defines (a later line wins). 0, or -EINVAL with the
 * line number and what is wrong in e (a malformed \u escape is the only error). */
int props_parse(props_t *p, const char *text, size_t len, util_err_t *e);
/* Reads and parses the file at path (at most 16 MiB). 0, or -errno / -EINVAL with e saying
 * why (the message names the file). */
int props_load_file(props_t *p, const char *path, util_err_t *e);

/* Typed reads. Each returns 0 with *out set (def when the property is absent), or -EINVAL with
 * e naming the property, its value and what was expected. Surrounding blanks are ignored.
 * Integers are decimal with an optional sign (Long.parseLong); doubles as Double.parseDouble
 * reads them (a trailing d/D/f/F allowed). */
int props_long(const props_t *p, const char *name, int64_t def, int64_t min, int64_t max,
               int64_t *out, util_err_t *e);
int props_double(const props_t *p, const char *name, double def, double min, double max,
                 double *out, util_err_t *e);
/* Boolean.parseBoolean: true only for "true" in any case; def when absent. */
bool props_bool(const props_t *p, const char *name, bool def);

/* Parses a whole string as the above do (no property involved); 0 or -EINVAL. */
int props_parse_long(const char *s, int64_t *out);
int props_parse_double(const char *s, double *out);

#endif
