/* Custom ops (qkv/custom.h) through the public gradient check, in the double
 * build: a right backward passes qkv_gradcheck, a wrong one does not, and a
 * custom node sits in a graph like a built-in op's. */
#include "custom_ops.h"
#include "testing.h"

static qkv_real three = 3;

/* f = gelu(scaled_product(x, y)) + x, so the custom node
 * has built-in ops on both sides. */
static qkv_tensor *mixed(qkv_arena *a, qkv_tensor **in, void *op)
{
    qkv_tensor *p = qkv_custom(a, op, in, 2, in[0]->ndim, in[0]->shape, &three);
    return qkv_add(a, qkv_gelu(a, p), in[0]);
}

static qkv_tensor **two_inputs(qkv_arena *a, bool y_grad)
{
    static qkv_tensor *in[2];
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    in[0] = qkv_randn(a, QKV_SHAPE(2, 3), 1, &rng);
    in[1] = qkv_randn(a, QKV_SHAPE(2, 3), 1, &rng);
    qkv_set_requires_grad(in[0], true);
    qkv_set_requires_grad(in[1], y_grad);
    return in;
}

START_TEST(test_right_backward_passes)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int y_grad = 0; y_grad < 2; y_grad++) {
        double err = qkv_gradcheck(mixed, two_inputs(a, y_grad), 2, (void *)&scaled_product_op);
        ck_assert_msg(err <= QKV_GRADCHECK_TOL, "y_grad %d: error %g: %s", y_grad, err,
                      qkv_last_error());
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_wrong_backward_fails)
{
    /* The check must be able to fail: a backward missing the factor 3 is
     * off by far more than the tolerance, and the message says where. */
    qkv_arena *a = qkv_arena_new(1 << 16);
    double err = qkv_gradcheck(mixed, two_inputs(a, true), 2, (void *)&scaled_product_wrong_op);
    ck_assert_msg(err > 0.1, "error %g", err);
    ck_assert_msg(strstr(qkv_last_error(), "qkv_gradcheck: inputs[") != NULL, "%s",
                  qkv_last_error());
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_gradcheck_leaves_inputs_as_they_were)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor **in = two_inputs(a, true);
    qkv_real before[6], mark = 42;
    memcpy(before, in[0]->data, sizeof before);
    in[0]->grad = &mark; /* stands for a gradient the caller keeps */
    in[1]->grad = NULL;
    ck_assert(qkv_gradcheck(mixed, in, 2, (void *)&scaled_product_op) <= QKV_GRADCHECK_TOL);
    ck_assert(memcmp(before, in[0]->data, sizeof before) == 0);
    ck_assert_ptr_eq(in[0]->grad, &mark);
    ck_assert_ptr_null(in[1]->grad);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_custom_node_in_the_graph)
{
    /* Through qkv_backward: d/dx Σ 3·x·y = 3y, and y, not wanting a
     * gradient, gets none. */
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor **in = two_inputs(a, false);
    qkv_tensor *p = qkv_custom(a, &scaled_product_op, in, 2, QKV_SHAPE(2, 3), &three);
    ck_assert_qkv(p);
    ck_assert(p->requires_grad && p->node);
    scaled_product_backwards = 0;
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, p)), 0);
    ck_assert_int_eq(scaled_product_backwards, 1);
    for (int i = 0; i < 6; i++)
        ck_assert(fabs(in[0]->grad[i] - 3 * in[1]->data[i]) < 1e-12);
    ck_assert_ptr_null(in[1]->grad);
    /* Used up like any graph: the backward is not run again. */
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, p)), -1);
    ck_assert_int_eq(scaled_product_backwards, 1);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_custom_in_no_grad_mode)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor **in = two_inputs(a, true);
    bool was = qkv_set_grad_enabled(false);
    qkv_tensor *p = qkv_custom(a, &scaled_product_op, in, 2, QKV_SHAPE(2, 3), &three);
    qkv_set_grad_enabled(was);
    ck_assert_qkv(p);
    ck_assert(!p->requires_grad && !p->node);
    ck_assert(p->data[4] == 3 * in[0]->data[4] * in[1]->data[4]);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_custom_after_reset_and_failing_forward)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor **in = two_inputs(a, true);
    qkv_arena_reset(a);
    ck_assert_ptr_null(qkv_custom(a, &scaled_product_op, in, 2, QKV_SHAPE(2, 3), &three));
    ck_assert_msg(strstr(qkv_last_error(), "qkv_custom: input inputs[0] is from before") != NULL,
                  "%s", qkv_last_error());
    in = two_inputs(a, true);
    /* The forward refuses a result of another size; its message is kept. */
    ck_assert_ptr_null(qkv_custom(a, &scaled_product_op, in, 2, QKV_SHAPE(5), &three));
    ck_assert_str_eq(qkv_last_error(), "qkv_custom: op scaled_product: its forward failed: "
                                       "scaled_product: takes two inputs of the result's size");
    qkv_arena_free(&a);
}
END_TEST

static Suite *custom_suite(void)
{
    Suite *s = suite_create("custom");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_right_backward_passes);
    tcase_add_test(tc, test_wrong_backward_fails);
    tcase_add_test(tc, test_gradcheck_leaves_inputs_as_they_were);
    tcase_add_test(tc, test_custom_node_in_the_graph);
    tcase_add_test(tc, test_custom_in_no_grad_mode);
    tcase_add_test(tc, test_custom_after_reset_and_failing_forward);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(custom_suite)
