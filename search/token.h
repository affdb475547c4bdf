/* token.h - the tokenizer of COMMANDS.md section 4, and the text test of search-skip-binary.
 *
 * A token is a maximal run of ASCII letters and digits, lower-cased, at least 2 bytes long;
 * every other byte separates tokens. The same tokenizer reads blob contents and queries, so a
 * query word matches exactly the tokens it would produce inside a document. Pure functions,
 * any thread. */
#ifndef CTE_SEARCH_TOKEN_H
#define CTE_SEARCH_TOKEN_H

#include <stddef.h>

/* Called for each token: tok[0..len) is lower-cased (a buffer owned by the tokenizer, valid
 * during the call). */
typedef void token_fn(void *ud, const char *tok, size_t len);

/* Calls fn for every token of text[0..len) in order; returns the number of tokens. */
size_t token_each(const char *text, size_t len, token_fn *fn, void *ud);

/* 1 if text[0..len) is valid UTF-8 (NUL bytes included). A multi-byte sequence cut short by
 * the end counts as valid when truncated is set (the text is a prefix of a longer blob). */
int token_is_utf8(const char *text, size_t len, int truncated);

#endif
