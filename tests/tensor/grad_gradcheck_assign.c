/* qkv_gradcheck and a backward that assigns (=) instead of adding (+=), in
 * the double build: checked alone, the custom op is its inputs' only
 * consumer, where assigning and adding into a cleared gradient agree; the
 * check must still fail it, while the right backward passes. */
#include "custom_ops.h"
#include "testing.h"

static qkv_real three = 3;

/* The custom op alone on the two inputs. */
static qkv_tensor *alone(qkv_arena *a, qkv_tensor **in, void *op)
{
    return qkv_custom(a, op, in, 2, in[0]->ndim, in[0]->shape, &three);
}

START_TEST(test_assigning_backward_fails_alone)
{
    qkv_test_env f = qkv_test_env_new(201);
    qkv_tensor *in[2] = {qkv_randn(f.a, QKV_SHAPE(2, 3), 1, &f.rng),
                         qkv_randn(f.a, QKV_SHAPE(2, 3), 1, &f.rng)};
    for (int y_grad = 0; y_grad < 2; y_grad++) {
        qkv_set_requires_grad(in[0], true);
        qkv_set_requires_grad(in[1], y_grad);
        double right = qkv_gradcheck(alone, in, 2, (void *)&scaled_product_op);
        ck_assert_msg(right <= QKV_GRADCHECK_TOL, "the right backward: %g: %s", right,
                      qkv_last_error());
        double assigning = qkv_gradcheck(alone, in, 2, (void *)&scaled_product_assigning_op);
        ck_assert_msg(assigning > 0.1, "the assigning backward passed: error %g", assigning);
        ck_assert_msg(strstr(qkv_last_error(), "qkv_gradcheck: inputs[") != NULL, "%s",
                      qkv_last_error());
    }
    qkv_arena_free(&f.a);
}
END_TEST

/* The caller's gradients are untouched by the pre-filled ones. */
START_TEST(test_caller_gradient_kept)
{
    qkv_test_env f = qkv_test_env_new(202);
    qkv_tensor *in[2] = {qkv_randn(f.a, QKV_SHAPE(3), 1, &f.rng), qkv_randn(f.a, QKV_SHAPE(3), 1, &f.rng)};
    qkv_set_requires_grad(in[0], true);
    qkv_real mine[3] = {7, 8, 9};
    in[0]->grad = mine;
    ck_assert(qkv_gradcheck(alone, in, 2, (void *)&scaled_product_op) <= QKV_GRADCHECK_TOL);
    ck_assert_ptr_eq(in[0]->grad, mine);
    ck_assert(mine[0] == 7 && mine[1] == 8 && mine[2] == 9);
    qkv_arena_free(&f.a);
}
END_TEST

static Suite *gradcheck_assign_suite(void)
{
    Suite *s = suite_create("grad_gradcheck_assign");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_assigning_backward_fails_alone);
    tcase_add_test(tc, test_caller_gradient_kept);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(gradcheck_assign_suite)
