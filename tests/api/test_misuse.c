/* The misuse suite: no call through the public API crashes. Every function
 * declared in the public headers (include/qkv) is called with NULL and
 * out-of-range arguments by the cases in tests/misuse/, a file per header
 * (version.h's one case is in base.c). Each case runs in a child process of
 * its own (tests/support/misuse.c): a signal, a hang, a success where a
 * failure is documented, or a message that does not name the function and the
 * argument fails the suite. tests/misuse_coverage.sh checks that every public
 * function has a case. */
#include "misuse.h"
#include "testing.h"

/* Under AddressSanitizer a huge malloc must return NULL like the real one;
 * visible, since the build hides symbols by default and ASan looks this one up. */
__attribute__((visibility("default"))) const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }

/* Each case is one loop iteration; the cases registered themselves before main. */
START_TEST(test_case) { misuse_run(_i); }
END_TEST

static Suite *misuse_suite(void)
{
    Suite *s = suite_create("misuse");
    TCase *tc = tcase_create("every public function");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_case, 0, misuse_count());
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(misuse_suite)
