/* The ops over any axis, broadcasting, div, exp, log, tanh, sigmoid and the
 * masked mean in the float build: values against plain loops from the
 * formulas (tests/support/axis_ops_check.c), ties, and what a classifier's
 * mean-pool over padded tokens is. Gradients: tests/tensor/grad_axis_ops.c. */
#include "axis_ops_check.h"
#include "error_text.h"
#include "testing.h"

START_TEST(test_forward_matches_the_formulas)
{
    ck_assert_int_eq(axis_ops_forward_check(1e-5), 0);
}
END_TEST

/* max and argmax pick the first of equal largest values, and max's gradient goes there only. */
START_TEST(test_max_ties_go_to_the_first)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(2, 4), (const qkv_real[]){1, 3, 3, 0, 5, 5, 5, 5});
    qkv_set_requires_grad(x, true);
    int32_t *arg = qkv_argmax(a, x, 1);
    ck_assert_ptr_nonnull(arg);
    ck_assert_int_eq(arg[0], 1);
    ck_assert_int_eq(arg[1], 0);
    qkv_tensor *m = qkv_max_axis(a, x, -1, false);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, m)), 0);
    const qkv_real want[8] = {0, 1, 0, 0, 1, 0, 0, 0};
    qkv_test_assert_close(x, (const qkv_real[]){1, 3, 3, 0, 5, 5, 5, 5}, 0);
    for (int i = 0; i < 8; i++)
        ck_assert_msg(x->grad[i] == want[i], "grad %d is %g", i, (double)x->grad[i]);
    qkv_arena_free(&a);
}
END_TEST

/* The classifier's mean-pool in one call: (B,T,C) under a (B,T) padding mask. */
START_TEST(test_mean_pool_over_valid_tokens)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *h = qkv_from_array(a, QKV_SHAPE(2, 3, 2),
                                   (const qkv_real[]){1, 2, 3, 4, 100, 100, 5, 6, 7, 8, 9, 10});
    const uint8_t valid[6] = {1, 1, 0, 1, 1, 1}; /* sequence 0: its third token is padding */
    qkv_tensor *pooled = qkv_masked_mean(a, h, 1, valid);
    ck_assert_qkv(pooled);
    ck_assert_int_eq(pooled->ndim, 2);
    ck_assert_int_eq(pooled->shape[0], 2);
    ck_assert_int_eq(pooled->shape[1], 2);
    qkv_test_assert_close(pooled, (const qkv_real[]){2, 3, 7, 8}, 1e-6);
    qkv_arena_free(&a);
}
END_TEST

/* Today's shapes keep their results: y of x's trailing dims, x and y the same shape. */
START_TEST(test_trailing_broadcast_unchanged)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(2, 2), (const qkv_real[]){1, 2, 3, 4});
    qkv_tensor *b = qkv_from_array(a, QKV_SHAPE(2), (const qkv_real[]){10, 20});
    qkv_test_assert_close(qkv_add(a, x, b), (const qkv_real[]){11, 22, 13, 24}, 0);
    /* and the other way round, which used to be refused: */
    qkv_test_assert_close(qkv_sub(a, b, x), (const qkv_real[]){9, 18, 7, 16}, 0);
    qkv_tensor *col = qkv_from_array(a, QKV_SHAPE(2, 1), (const qkv_real[]){2, 4});
    qkv_test_assert_close(qkv_div(a, x, col), (const qkv_real[]){0.5, 1, 0.75, 1}, 0);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_errors_name_the_op_and_shapes)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_zeros(a, QKV_SHAPE(2, 3));
    ck_assert_ptr_null(qkv_add(a, x, qkv_zeros(a, QKV_SHAPE(2))));
    ck_assert_error("qkv_add", "broadcast", "(2,3)", "(2)");
    ck_assert_ptr_null(qkv_div(a, qkv_zeros(a, QKV_SHAPE(4, 1, 3)), qkv_zeros(a, QKV_SHAPE(2, 2, 1))));
    ck_assert_error("qkv_div", "(4,1,3)", "(2,2,1)");
    ck_assert_ptr_null(qkv_sum_axis(a, x, 2, false));
    ck_assert_error("qkv_sum_axis", "axis 2", "(2,3)", "0..1", "-2..-1");
    ck_assert_ptr_null(qkv_max_axis(a, x, -3, true));
    ck_assert_error("qkv_max_axis", "axis -3");
    ck_assert_ptr_null(qkv_concat_axis(a, 2, (qkv_tensor *[]){x, qkv_zeros(a, QKV_SHAPE(3, 3))}, 1));
    ck_assert_error("qkv_concat_axis", "axis 1", "(2,3)", "(3,3)");
    ck_assert_ptr_null(qkv_slice_axis(a, x, 0, 1, 2));
    ck_assert_error("qkv_slice_axis", "[1, 3)", "dim 0", "(2,3)");
    ck_assert_ptr_null(qkv_transpose_axes(a, x, 0, 5));
    ck_assert_error("qkv_transpose_axes", "d1 5");
    ck_assert_ptr_null(qkv_masked_mean(a, x, 1, NULL));
    ck_assert_error("qkv_masked_mean", "mask is NULL");
    qkv_arena_free(&a);
}
END_TEST

static Suite *axis_ops_suite(void)
{
    Suite *s = suite_create("axis_ops");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_forward_matches_the_formulas);
    tcase_add_test(tc, test_max_ties_go_to_the_first);
    tcase_add_test(tc, test_mean_pool_over_valid_tokens);
    tcase_add_test(tc, test_trailing_broadcast_unchanged);
    tcase_add_test(tc, test_errors_name_the_op_and_shapes);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(axis_ops_suite)
