/* What the error suites share (see errors_suite.h). */
#include "errors_suite.h"

#include <omp.h>

qkv_arena *errors_arena;

const char *const ERRORS_TEXT =
    "the quick brown fox jumps over the lazy dog; attention is all you need.\n";

static void arena_setup(void)
{
    omp_set_num_threads(1);
    errors_arena = qkv_arena_new(1 << 16);
}

static void arena_teardown(void) { qkv_arena_free(&errors_arena); }

TCase *errors_tcase(const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, arena_setup, arena_teardown);
    tcase_set_timeout(tc, 60);
    return tc;
}
