/* Inspection (qkv/tensor.h): the printed line of a tensor, its values and
 * statistics worked out by hand, and one value read by index. */
#include <stdlib.h>

#include "testing.h"

/* What qkv_tensor_print writes for t, in a malloc'd string. */
static char *printed(const qkv_tensor *t, const char *name)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(qkv_tensor_print(t, name, f), 0);
    fclose(f);
    return buf;
}

START_TEST(test_print_small)
{
    qkv_test_env f = qkv_test_env_new(1);
    qkv_tensor *t = qkv_from_array(f.a, QKV_SHAPE(2, 3), (qkv_real[]){0.5, -1.25, 3, 0, 2, 1});
    char *s = printed(t, "h");
    /* mean 5.25/6 = 0.875; Σ(v - mean)² = 0.140625 + 4.515625 + 4.515625 + 0.765625 + 1.265625 + 0.015625
     * = 11.21875, / 6 = 1.8697917, √ = 1.36740 */
    ck_assert_str_eq(s, "h (2,3): [0.5, -1.25, 3, 0, 2, 1] min -1.25 max 3 mean 0.875 std 1.3674\n");
    free(s);
    qkv_arena_free(&f.a);
}
END_TEST

START_TEST(test_print_long_and_nonfinite)
{
    qkv_test_env f = qkv_test_env_new(2);
    qkv_tensor *t = qkv_zeros(f.a, QKV_SHAPE(10));
    for (int i = 0; i < 10; i++)
        t->data[i] = (qkv_real)i;
    t->data[4] = NAN, t->data[5] = INFINITY;
    char *s = printed(t, NULL); /* no name: "tensor" */
    /* finite: 0 1 2 3 6 7 8 9, mean 4.5, Σ(v - 4.5)² = 2·(20.25 + 12.25 + 6.25 + 2.25) = 82, /8 → √10.25 */
    ck_assert_str_eq(s, "tensor (10): [0, 1, 2, ..., 7, 8, 9] min 0 max 9 mean 4.5 std 3.20156 "
                        "(1 NaN, 1 inf)\n");
    free(s);
    qkv_arena_free(&f.a);
}
END_TEST

START_TEST(test_get)
{
    qkv_test_env f = qkv_test_env_new(3);
    qkv_tensor *t = qkv_randn(f.a, QKV_SHAPE(2, 3, 4), 1, &f.rng);
    qkv_real v;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 4; k++) {
                ck_assert_int_eq(qkv_tensor_get(t, QKV_SHAPE(i, j, k), &v), 0);
                ck_assert(v == t->data[(i * 3 + j) * 4 + k]);
                ck_assert_int_eq(qkv_tensor_get(t, QKV_SHAPE(i - 2, j - 3, k - 4), &v), 0);
                ck_assert(v == t->data[(i * 3 + j) * 4 + k]);
            }
    qkv_arena_free(&f.a);
}
END_TEST

static Suite *inspect_suite(void)
{
    Suite *s = suite_create("inspect");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_print_small);
    tcase_add_test(tc, test_print_long_and_nonfinite);
    tcase_add_test(tc, test_get);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(inspect_suite)
