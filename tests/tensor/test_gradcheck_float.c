/* qkv_gradcheck in the float build, where users run it too: with its float
 * step and tolerance (qkv/gradcheck.h) right backwards pass, built-in and
 * custom, and a wrong one is still caught. */
#include "custom_ops.h"
#include "testing.h"

static qkv_real two = 2;

static qkv_tensor *product(qkv_arena *a, qkv_tensor **in, void *op)
{
    return qkv_custom(a, op, in, 2, in[0]->ndim, in[0]->shape, &two);
}

static qkv_tensor *builtin(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    return qkv_softmax(a, qkv_gelu(a, qkv_mul(a, in[0], in[1])));
}

static void inputs(qkv_arena *a, qkv_tensor **in)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 3);
    for (int i = 0; i < 2; i++) {
        in[i] = qkv_randn(a, QKV_SHAPE(3, 4), 1, &rng);
        qkv_set_requires_grad(in[i], true);
    }
}

START_TEST(test_float_gradcheck_passes_right_backwards)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *in[2];
    inputs(a, in);
    double err = qkv_gradcheck(product, in, 2, (void *)&scaled_product_op);
    ck_assert_msg(err <= QKV_GRADCHECK_TOL, "custom: %g: %s", err, qkv_last_error());
    err = qkv_gradcheck(builtin, in, 2, NULL);
    ck_assert_msg(err <= QKV_GRADCHECK_TOL, "built-in: %g: %s", err, qkv_last_error());
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_float_gradcheck_catches_a_wrong_backward)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *in[2];
    inputs(a, in);
    double err = qkv_gradcheck(product, in, 2, (void *)&scaled_product_wrong_op);
    ck_assert_msg(err > 10 * QKV_GRADCHECK_TOL, "error %g", err);
    qkv_arena_free(&a);
}
END_TEST

static Suite *gradcheck_float_suite(void)
{
    Suite *s = suite_create("gradcheck_float");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_float_gradcheck_passes_right_backwards);
    tcase_add_test(tc, test_float_gradcheck_catches_a_wrong_backward);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(gradcheck_float_suite)
