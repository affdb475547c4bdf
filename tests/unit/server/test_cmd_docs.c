/* tests/unit/server/test_cmd_docs.c - server/cmd_docs.c: the notation of the docs table parses
 * into the argument trees COMMAND DOCS sends (types, key spec indexes, tokens implied by a
 * pure-token's name, quoted and empty tokens, flags, versions, nesting), lookups by full name,
 * key-spec notes and tip lists. */
#include "server/cmd_docs.h"

#include <criterion/criterion.h>
#include <string.h>

static void setup(void)
{
    cmd_docs_init();
}

TestSuite(cmd_docs, .init = setup);

static const cmd_doc_arg_t *arg_named(const cmd_doc_arg_t *args, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(args[i].name, name) == 0) return &args[i];
    return NULL;
}

Test(cmd_docs, set_has_its_argument_tree)
{
    const cmd_doc_t *d = cmd_docs_find("set");
    cr_assert_not_null(d);
    cr_assert_eq(d->nargs, 5);
    cr_assert_str_eq(d->args[0].name, "key");
    cr_assert_eq(d->args[0].type, CMD_DOC_ARG_KEY);
    cr_assert_eq(d->args[0].key_spec_index, 0);
    cr_assert_eq(d->args[1].key_spec_index, -1);
    const cmd_doc_arg_t *cond = arg_named(d->args, d->nargs, "condition");
    cr_assert_eq(cond->type, CMD_DOC_ARG_ONEOF);
    cr_assert_eq(cond->flags, CMD_DOC_ARG_OPTIONAL);
    cr_assert_str_eq(cond->since, "2.6.12");
    cr_assert_eq(cond->nargs, 2);
    cr_assert_str_eq(cond->args[0].token, "NX"); /* implied by the name */
    const cmd_doc_arg_t *exp = arg_named(d->args, d->nargs, "expiration");
    const cmd_doc_arg_t *px = arg_named(exp->args, exp->nargs, "milliseconds");
    cr_assert_eq(px->type, CMD_DOC_ARG_INTEGER);
    cr_assert_str_eq(px->token, "PX");
    cr_assert_null(px->deprecated_since);
    cr_assert_not_null(strstr(d->history, "6.0.0 Added the `KEEPTTL` option."));
}

Test(cmd_docs, quoted_words_and_empty_tokens)
{
    const cmd_doc_t *d = cmd_docs_find("migrate");
    cr_assert_not_null(d);
    const cmd_doc_arg_t *k = arg_named(d->args, d->nargs, "key_or_empty_string");
    cr_assert_not_null(k);
    const cmd_doc_arg_t *e = arg_named(k->args, k->nargs, "empty_string");
    cr_assert_str_eq(e->token, "");
    d = cmd_docs_find("xadd");
    const cmd_doc_arg_t *id = arg_named(d->args, d->nargs, "id_or_auto");
    cr_assert_str_eq(id->args[0].token, "*");
    d = cmd_docs_find("client|kill");
    const cmd_doc_arg_t *f = &d->args[0];
    cr_assert_str_eq(f->args[0].name, "ip:port");
    cr_assert_str_eq(f->args[0].deprecated_since, "2.8.12");
}

Test(cmd_docs, patterns_may_name_key_specs_and_flags_combine)
{
    const cmd_doc_t *d = cmd_docs_find("sort");
    const cmd_doc_arg_t *by = &d->args[1];
    cr_assert_eq(by->type, CMD_DOC_ARG_PATTERN);
    cr_assert_eq(by->key_spec_index, 1);
    const cmd_doc_arg_t *get = arg_named(d->args, d->nargs, "pattern");
    for (size_t i = 2; i < d->nargs; i++)
        if (strcmp(d->args[i].name, "pattern") == 0) get = &d->args[i];
    cr_assert_eq(get->flags,
                 CMD_DOC_ARG_OPTIONAL | CMD_DOC_ARG_MULTIPLE | CMD_DOC_ARG_MULTIPLE_TOKEN);
    cr_assert_str_eq(get->token, "GET");
}

Test(cmd_docs, own_commands_and_missing_ones)
{
    const cmd_doc_t *d = cmd_docs_find("tput");
    cr_assert_not_null(d);
    cr_assert_eq(d->nargs, 5);
    cr_assert_eq(d->args[4].type, CMD_DOC_ARG_DOUBLE);
    cr_assert_eq(d->args[4].flags, CMD_DOC_ARG_OPTIONAL);
    d = cmd_docs_find("tiers");
    cr_assert_not_null(d);
    cr_assert_eq(d->nargs, 0);
    cr_assert_null(cmd_docs_find("nosuchcommand"));
    cr_assert_null(cmd_docs_find("client|nosuch"));
}

Test(cmd_docs, doc_flags_notes_and_tips)
{
    const cmd_doc_t *d = cmd_docs_find("brpoplpush");
    cr_assert_eq(d->doc_flags, CMD_DOC_DEPRECATED);
    cr_assert_str_eq(d->deprecated_since, "6.2.0");
    size_t len = 0;
    const char *note = cmd_docs_key_note(cmd_docs_find("sort"), 0, &len);
    cr_assert_null(note); /* the first spec has none */
    note = cmd_docs_key_note(cmd_docs_find("sort"), 2, &len);
    cr_assert_not_null(note);
    cr_assert(len > 10 && strncmp(note, "For the optional STORE", 22) == 0);
    cr_assert_null(cmd_docs_key_note(cmd_docs_find("sort"), 3, &len));
    cr_assert_eq(cmd_docs_words(cmd_docs_find("keys")->tips, NULL, NULL), 2);
    cr_assert_eq(cmd_docs_words(cmd_docs_find("get")->tips, NULL, NULL), 0);
    cr_assert_str_eq(cmd_doc_arg_type_name(CMD_DOC_ARG_PURE_TOKEN), "pure-token");
    cr_assert_str_eq(cmd_doc_arg_type_name(CMD_DOC_ARG_UNIX_TIME), "unix-time");
}
