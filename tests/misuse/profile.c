/* Misuse cases for qkv/profile.h: op profile and kernel timings. */
#include "misuse.h"

MISUSE(qkv_profile_start, twice_clears)
{
    qkv_profile_start();
    qkv_tensor *x = tensor(SHAPE23);
    MISUSE_ASSERT(qkv_add(arena(), x, x) != NULL);
    qkv_profile_start();
    int n = -1;
    MISUSE_ASSERT(qkv_profile_rows(&n) != NULL && n == 0);
    qkv_profile_stop();
}
MISUSE(qkv_profile_stop, without_start) { HARMLESS((qkv_profile_stop(), 0)); }
MISUSE(qkv_profile_mark, without_start) { HARMLESS((qkv_profile_mark(), 0)); }
MISUSE(qkv_profile_rows, null_n) { FAILS_NULL(qkv_profile_rows(NULL), "n is NULL"); }

MISUSE(qkv_kernel_count, takes_no_arguments) { MISUSE_ASSERT(qkv_kernel_count() > 0); }
MISUSE(qkv_kernel_name, negative) { FAILS_NULL(qkv_kernel_name(-1), "kernel -1"); }
MISUSE(qkv_kernel_name, past_the_last)
{
    FAILS_NULL(qkv_kernel_name(qkv_kernel_count()), "does not exist");
}
MISUSE(qkv_kernel_limit, past_the_last)
{
    FAILS_NULL(qkv_kernel_limit(qkv_kernel_count()), "does not exist");
}
MISUSE(qkv_kernel_space_new, zero_values) { FAILS_NULL(qkv_kernel_space_new(0, 1, 1), "n 0"); }
MISUSE(qkv_kernel_space_new, zero_cols) { FAILS_NULL(qkv_kernel_space_new(8, 0, 1), "cols 0"); }
MISUSE(qkv_kernel_space_new, part_row) { FAILS_NULL(qkv_kernel_space_new(10, 4, 1), "n 10"); }
MISUSE(qkv_kernel_space_new, huge) { FAILS_NULL(qkv_kernel_space_new(SIZE_MAX, 1, 1), "n "); }
MISUSE(qkv_kernel_space_free, null) { HARMLESS((qkv_kernel_space_free(NULL), 0)); }
MISUSE(qkv_kernel_run, null_space) { FAILS_INT(qkv_kernel_run(NULL, 0, 1), "s is NULL"); }
MISUSE(qkv_kernel_run, bad_kernel)
{
    qkv_kernel_space *s = qkv_kernel_space_new(64, 8, 1);
    FAILS_INT(qkv_kernel_run(s, qkv_kernel_count(), 1), "does not exist");
    qkv_kernel_space_free(s);
}
MISUSE(qkv_kernel_run, zero_reps)
{
    qkv_kernel_space *s = qkv_kernel_space_new(64, 8, 1);
    FAILS_INT(qkv_kernel_run(s, 0, 0), "reps 0");
    qkv_kernel_space_free(s);
}
