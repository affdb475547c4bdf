/* leak.h - LTest: a Criterion test that, in ASan builds, ends with a LeakSanitizer check, so a
 * leak fails the test that caused it (Criterion ignores LeakSanitizer at worker exit). */
#ifndef CTE_TESTS_LEAK_H
#define CTE_TESTS_LEAK_H

#include <criterion/criterion.h>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
static inline void leak_check(void)
{
    cr_assert_eq(__lsan_do_recoverable_leak_check(), 0, "LeakSanitizer found leaks (above)");
}
#else
static inline void leak_check(void) {}
#endif

#define LTest(suite, name, ...)                                                                    \
    static void suite##_##name##_body(void);                                                       \
    Test(suite, name, ##__VA_ARGS__)                                                               \
    {                                                                                              \
        suite##_##name##_body();                                                                   \
        leak_check();                                                                              \
    }                                                                                              \
    static void suite##_##name##_body(void)

#endif
