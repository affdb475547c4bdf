/* cmd_docs.h - what COMMAND DOCS and COMMAND INFO tell about a command beyond its table row:
 * the argument tree, the history, the doc flags (deprecated, syscmd), what replaces a
 * deprecated command, the tips (request_policy:all_shards, nondeterministic_output...) and
 * the notes of key specs.
 *
 * The data is one table in cmd_docs.c, keyed by the command's full name ("set",
 * "client|kill"), in a compact notation documented there; cmd_docs_init() parses it once at
 * start. Everything returned lives until the process exits. Loop thread only. */
#ifndef CTE_SERVER_CMD_DOCS_H
#define CTE_SERVER_CMD_DOCS_H

#include <stddef.h>

/* Argument types, in the order of Redis 7.0's names (cmd_doc_arg_type_name). */
enum cmd_doc_arg_type {
    CMD_DOC_ARG_STRING,
    CMD_DOC_ARG_INTEGER,
    CMD_DOC_ARG_DOUBLE,
    CMD_DOC_ARG_KEY,
    CMD_DOC_ARG_PATTERN,
    CMD_DOC_ARG_UNIX_TIME,
    CMD_DOC_ARG_PURE_TOKEN,
    CMD_DOC_ARG_ONEOF,
    CMD_DOC_ARG_BLOCK,
};

/* Argument flags, in the order COMMAND DOCS lists them. */
enum cmd_doc_arg_flag {
    CMD_DOC_ARG_OPTIONAL = 1 << 0,
    CMD_DOC_ARG_MULTIPLE = 1 << 1,
    CMD_DOC_ARG_MULTIPLE_TOKEN = 1 << 2,
};

/* Command doc flags. */
enum cmd_doc_flag {
    CMD_DOC_DEPRECATED = 1 << 0,
    CMD_DOC_SYSCMD = 1 << 1,
};

typedef struct cmd_doc_arg {
    const char *name;
    const char *token;            /* NULL: none */
    const char *since;            /* NULL: not listed */
    const char *deprecated_since; /* NULL: not deprecated */
    int type;                     /* enum cmd_doc_arg_type */
    int key_spec_index;           /* -1 unless type is key */
    unsigned flags;               /* enum cmd_doc_arg_flag */
    size_t nargs;                 /* the nested arguments of oneof and block */
    const struct cmd_doc_arg *args;
} cmd_doc_arg_t;

typedef struct cmd_doc {
    const char *name; /* full name, lower case */
    const char *src;  /* the argument list in the table's notation */
    /* One change per line: "<version> <text>"; NULL: no history. */
    const char *history;
    const char *tips; /* space separated; NULL: none */
    /* COMMAND INFO's key spec notes, '|' separated in key spec order ("" for none); NULL:
     * none */
    const char *key_notes;
    const char *deprecated_since, *replaced_by;
    unsigned doc_flags; /* enum cmd_doc_flag */
    /* parsed from src by cmd_docs_init */
    size_t nargs;
    const cmd_doc_arg_t *args;
} cmd_doc_t;

/* Parses the table; call once at start (again: no-op). A notation error in the table is a bug
 * of ours: it asserts. */
void cmd_docs_init(void);
/* The docs of the command with this full name ("config|get", lower case), or NULL. */
const cmd_doc_t *cmd_docs_find(const char *fullname);
/* The notes of cmd's i-th key spec (*len bytes, not NUL-terminated), or NULL. */
const char *cmd_docs_key_note(const cmd_doc_t *d, int i, size_t *len);
/* Redis's name of an argument type: "string", "pure-token", "oneof"... */
const char *cmd_doc_arg_type_name(int type);
/* Calls fn for every word of a space-separated list (tips), with its length; returns the count
 * (fn may be NULL to count). */
size_t cmd_docs_words(const char *list, void (*fn)(void *ud, const char *w, size_t len), void *ud);

#endif
