/* The per-op profile (qkv/profile.h): each recorded op gets one row, named by
 * its op, input width and output shape, charged its forwards and its
 * backward; ops outside a profile are not charged; a new start clears. */
#include <string.h>

#include "testing.h"

/* The row named what in rows[0..n), or NULL. */
static const qkv_op_time *row(const qkv_op_time *rows, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (strcmp(rows[i].what, what) == 0)
            return &rows[i];
    return NULL;
}

/* Two (3,4)·(4,5) products summed, forward and backward, in arena a. */
static void step(qkv_arena *a, qkv_rng *rng)
{
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(3, 4), 1, rng), *w = qkv_randn(a, QKV_SHAPE(4, 5), 1, rng);
    qkv_set_requires_grad(w, true);
    qkv_tensor *y = qkv_add(a, qkv_matmul(a, x, w, false, false), qkv_matmul(a, x, w, false, false));
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, y)), 0);
}

START_TEST(test_rows_per_op_and_shape)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    step(a, &rng); /* before any profile: charged nowhere */
    qkv_profile_start();
    int n = -1;
    ck_assert_ptr_nonnull(qkv_profile_rows(&n));
    ck_assert_int_eq(n, 0);
    qkv_profile_mark();
    step(a, &rng);
    qkv_profile_stop();
    const qkv_op_time *rows = qkv_profile_rows(&n);
    ck_assert_int_eq(n, 3); /* matmul, add, sum */
    const qkv_op_time *mm = row(rows, n, "matmul 4->(3,5)"), *sum = row(rows, n, "qkv_sum 5->(1)");
    ck_assert_msg(mm && sum && row(rows, n, "qkv_add 5->(3,5)"), "rows: %s, %s, %s", rows[0].what,
                  rows[1].what, rows[2].what);
    ck_assert_int_eq(mm->calls, 2);
    ck_assert_int_eq(sum->calls, 1);
    ck_assert(mm->forward >= 0 && mm->backward > 0 && sum->backward > 0);
    double backward = mm->backward;
    step(a, &rng); /* stopped: the rows stay as they were */
    ck_assert_int_eq(mm->calls, 2);
    ck_assert(mm->backward == backward);
    qkv_profile_rows(&n);
    ck_assert_int_eq(n, 3);
    qkv_profile_start();
    qkv_profile_rows(&n);
    ck_assert_int_eq(n, 0);
    qkv_profile_stop();
    qkv_arena_free(&a);
}
END_TEST

static Suite *profile_suite(void)
{
    Suite *s = suite_create("profile");
    TCase *tc = tcase_create("ops");
    tcase_add_test(tc, test_rows_per_op_and_shape);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(profile_suite)
