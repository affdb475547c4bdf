/* test_glob.c - tests of common/glob.c: Redis's glob semantics, byte safety and bounded time. */
#include "common/glob.h"

#include <criterion/criterion.h>
#include <string.h>
#include <time.h>

static int m(const char *pat, const char *s)
{
    return strglob_match(pat, strlen(pat), s, strlen(s), 0);
}

static int mi(const char *pat, const char *s)
{
    return strglob_match(pat, strlen(pat), s, strlen(s), 1);
}

Test(glob, literal_patterns_match_only_themselves)
{
    cr_assert(m("hello", "hello"));
    cr_assert_not(m("hello", "hell"));
    cr_assert_not(m("hell", "hello"));
    cr_assert(m("", ""));
    cr_assert_not(m("", "a"));
}

Test(glob, star_matches_any_run_including_empty)
{
    cr_assert(m("*", "anything"));
    cr_assert(m("*", ""));
    cr_assert(m("h*o", "hello"));
    cr_assert(m("h*o", "ho"));
    cr_assert(m("*llo", "hello"));
    cr_assert(m("he*", "he"));
    cr_assert(m("a**b", "axyzb"));
    cr_assert_not(m("h*x", "hello"));
    cr_assert(m("*a*b*c*", "xxaxxbxxcxx"));
    cr_assert_not(m("*a*b*c*", "xxaxxcxxbxx"));
}

Test(glob, question_mark_matches_exactly_one_byte)
{
    cr_assert(m("h?llo", "hello"));
    cr_assert(m("h?llo", "hallo"));
    cr_assert_not(m("h?llo", "hllo"));
    cr_assert_not(m("?", ""));
    cr_assert(m("??", "ab"));
}

Test(glob, brackets_match_one_byte_of_a_set)
{
    cr_assert(m("h[ae]llo", "hello"));
    cr_assert(m("h[ae]llo", "hallo"));
    cr_assert_not(m("h[ae]llo", "hillo"));
    cr_assert_not(m("h[ae]llo", "hllo"));
}

Test(glob, caret_negates_a_set)
{
    cr_assert(m("h[^e]llo", "hallo"));
    cr_assert_not(m("h[^e]llo", "hello"));
}

Test(glob, ranges_work_in_either_order)
{
    cr_assert(m("h[a-b]llo", "hallo"));
    cr_assert(m("h[a-b]llo", "hbllo"));
    cr_assert_not(m("h[a-b]llo", "hcllo"));
    cr_assert(m("[z-a]", "m"));
    cr_assert(m("key[0-9]", "key7"));
    cr_assert_not(m("key[0-9]", "keyx"));
}

Test(glob, backslash_escapes_special_characters)
{
    cr_assert(m("a\\*b", "a*b"));
    cr_assert_not(m("a\\*b", "axb"));
    cr_assert(m("a\\?", "a?"));
    cr_assert(m("[\\]]", "]"));
    cr_assert(m("\\[x\\]", "[x]"));
    cr_assert(m("a\\", "a\\")); /* a trailing backslash is itself */
}

Test(glob, odd_patterns_behave_as_in_redis)
{
    cr_assert(m("[abc", "b")); /* unterminated: the rest is the set */
    cr_assert_not(m("[", "a"));
    cr_assert_not(m("[]", "a")); /* an empty set matches nothing */
}

Test(glob, nocase_folds_ascii_letters)
{
    cr_assert(mi("HELLO", "hello"));
    cr_assert(mi("h[A-Z]llo", "hello"));
    cr_assert(mi("*PORT*", "tcp-port"));
    cr_assert_not(m("HELLO", "hello"));
}

Test(glob, embedded_nul_bytes_are_ordinary_bytes)
{
    cr_assert(strglob_match("a\0*", 3, "a\0bc", 4, 0));
    cr_assert_not(strglob_match("a\0b", 3, "a\0c", 3, 0));
    cr_assert(strglob_match("a?c", 3, "a\0c", 3, 0));
}

Test(glob, pathological_patterns_finish_quickly)
{
    char subject[4001], pat[200];
    memset(subject, 'a', 4000);
    subject[4000] = '\0';
    strcpy(pat, "");
    for (int i = 0; i < 30; i++) strcat(pat, "*a");
    strcat(pat, "*b");
    clock_t t0 = clock();
    cr_assert_not(m(pat, subject));
    cr_assert(clock() - t0 < CLOCKS_PER_SEC, "matching took over a second");
}

Test(glob, very_deep_star_nesting_does_not_overflow_the_stack)
{
    static char pat[5001];
    memset(pat, '*', 5000);
    for (int i = 1; i < 5000; i += 2) pat[i] = 'a';
    cr_assert_not(m(pat, "aaaaaaaaaaaaaaaaaaaaaaab"));
}
