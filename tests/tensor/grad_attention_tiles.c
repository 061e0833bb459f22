/* The tiled attention core in the double build: the plain loops' values to
 * 1e-12 (tests/support/attention_tiles.c). */
#include "attention_tiles.h"
#include "testing.h"

START_TEST(test_tiles_match_plain) { attention_tiles_check(1e-12); }
END_TEST

static Suite *tiles_suite(void)
{
    Suite *s = suite_create("attention_tiles");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60); /* the plain loops under the sanitizers */
    tcase_add_test(tc, test_tiles_match_plain);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(tiles_suite)
