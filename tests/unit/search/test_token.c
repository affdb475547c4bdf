/* test_token.c - search/token.c: the tokenizer of COMMANDS.md section 4 and the UTF-8 test
 * behind search-skip-binary. */
#include "search/token.h"

#include <criterion/criterion.h>
#include <string.h>

struct toks {
    char out[512];
    size_t len;
};

static void join(void *ud, const char *tok, size_t len)
{
    struct toks *t = ud;
    if (t->len) t->out[t->len++] = '|';
    memcpy(t->out + t->len, tok, len);
    t->len += len;
    t->out[t->len] = '\0';
}

static const char *tokens(const char *s, size_t *count)
{
    static struct toks t;
    memset(&t, 0, sizeof(t));
    *count = token_each(s, strlen(s), join, &t);
    return t.out;
}

Test(token, runs_of_ascii_alnum_lower_cased_at_least_two_long)
{
    size_t n;
    cr_assert_str_eq(tokens("Hello, WORLD! a b2 x9y C3PO", &n), "hello|world|b2|x9y|c3po");
    cr_assert_eq(n, 5);
}

Test(token, every_other_byte_separates_including_underscore_and_utf8)
{
    size_t n;
    cr_assert_str_eq(tokens("snake_case caf\xc3\xa9s na\xc3\xafve-42", &n),
                     "snake|case|caf|na|ve|42");
    cr_assert_eq(n, 6);
}

Test(token, empty_and_separator_only_texts_have_no_tokens)
{
    size_t n;
    cr_assert_str_eq(tokens("", &n), "");
    cr_assert_eq(n, 0);
    cr_assert_str_eq(tokens(" . a ; b ", &n), "");
    cr_assert_eq(n, 0);
}

Test(token, a_token_longer_than_the_stack_buffer_is_kept_whole)
{
    char big[400];
    memset(big, 'Q', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    size_t n;
    const char *t = tokens(big, &n);
    cr_assert_eq(n, 1);
    cr_assert_eq(strlen(t), sizeof(big) - 1);
    cr_assert_eq(t[0], 'q');
    cr_assert_eq(t[398], 'q');
}

Test(token, utf8_accepts_text_and_rejects_binary)
{
    cr_assert(token_is_utf8("plain ascii", 11, 0));
    cr_assert(token_is_utf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 14, 0));
    cr_assert(token_is_utf8("a\0b", 3, 0)); /* NUL is valid UTF-8 */
    cr_assert_not(token_is_utf8("\xff\xfe", 2, 0));
    cr_assert_not(token_is_utf8("\xc0\xaf", 2, 0));         /* overlong */
    cr_assert_not(token_is_utf8("\xed\xa0\x80", 3, 0));     /* surrogate */
    cr_assert_not(token_is_utf8("\xf4\x90\x80\x80", 4, 0)); /* past U+10FFFF */
    cr_assert_not(token_is_utf8("\x80", 1, 0));             /* lone continuation */
}

Test(token, a_sequence_cut_by_the_end_counts_only_when_truncated)
{
    cr_assert_not(token_is_utf8("ab\xe2\x82", 4, 0));
    cr_assert(token_is_utf8("ab\xe2\x82", 4, 1));
    cr_assert_not(token_is_utf8("ab\xe2\x41", 4, 1)); /* broken, not cut */
}
