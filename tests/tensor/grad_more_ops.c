/* The 1.2 ops (softplus, sqrt, abs, pow, clamp, where, min_axis, var_axis,
 * cumsum, index_select, gather, topk, sort, log_softmax, mse_loss) in the
 * double build: every backward against finite differences, away from the
 * kinks where an op has them, and the gradients at the kinks as documented. */
#include "gradcheck.h"
#include "testing.h"

/* A leaf of N(0, std²) values that wants a gradient. */
static qkv_tensor *param(qkv_arena *a, qkv_rng *rng, int ndim, const int *shape, qkv_real std)
{
    qkv_tensor *t = qkv_randn(a, ndim, shape, std, rng);
    qkv_set_requires_grad(t, true);
    return t;
}

/* Every value at least gap away from each of the points (|x - p| >= gap), keeping its side. */
static void away_from(qkv_tensor *x, const double *points, int n, double gap)
{
    for (size_t i = 0; i < x->size; i++)
        for (int k = 0; k < n; k++) {
            double d = x->data[i] - points[k];
            if (fabs(d) < gap)
                x->data[i] = (qkv_real)(points[k] + (d < 0 ? -gap : gap));
        }
}

static void expect_gradcheck(gradcheck_fn f, int n, qkv_tensor **in, void *ud, const char *what)
{
    double err = gradcheck(f, n, in, ud);
    ck_assert_msg(err <= GRADCHECK_TOL, "%s: relative error %g", what, err);
}

static qkv_tensor *f_softplus(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_softplus(a, in[0]); }
static qkv_tensor *f_sqrt(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_sqrt(a, in[0]); }
static qkv_tensor *f_abs(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_abs(a, in[0]); }
static qkv_tensor *f_pow(qkv_arena *a, qkv_tensor **in, void *ud) { return qkv_pow(a, in[0], *(qkv_real *)ud); }
static qkv_tensor *f_clamp(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_clamp(a, in[0], -0.5, 0.7); }

START_TEST(test_pointwise_grads)
{
    qkv_test_env f = qkv_test_env_new(101);
    qkv_tensor *x = param(f.a, &f.rng, QKV_SHAPE(3, 7), 2);
    expect_gradcheck(f_softplus, 1, &x, NULL, "softplus");
    qkv_tensor *big = param(f.a, &f.rng, QKV_SHAPE(6), 1);
    for (int i = 0; i < 6; i++) /* far out: no overflow in either direction */
        big->data[i] = (qkv_real)((i % 2 ? -1 : 1) * (30 + 40 * i));
    expect_gradcheck(f_softplus, 1, &big, NULL, "softplus of large |x|");

    expect_gradcheck(f_abs, 1, &x, NULL, "abs"); /* N(0, 4): none within a step of 0 */
    const double bounds[2] = {-0.5, 0.7};
    away_from(x, bounds, 2, 0.01);
    expect_gradcheck(f_clamp, 1, &x, NULL, "clamp, values on both sides of both bounds");

    qkv_tensor *pos = param(f.a, &f.rng, QKV_SHAPE(4, 5), 1);
    for (size_t i = 0; i < pos->size; i++)
        pos->data[i] = fabs(pos->data[i]) + (qkv_real)0.2;
    expect_gradcheck(f_sqrt, 1, &pos, NULL, "sqrt");
    const qkv_real exps[] = {2.5, -1.5, 0.5, 0};
    for (int k = 0; k < 4; k++)
        expect_gradcheck(f_pow, 1, &pos, (void *)&exps[k], "pow, positive x");
    const qkv_real ints[] = {2, 3, -2};
    for (int k = 0; k < 3; k++) /* whole exponents take negative x too */
        expect_gradcheck(f_pow, 1, &x, (void *)&ints[k], "pow, whole exponent");
    qkv_arena_free(&f.a);
}
END_TEST

/* The kinks: |x|' at 0 is 0; clamp passes gradient at a bound, none outside it. */
START_TEST(test_kink_gradients)
{
    qkv_test_env f = qkv_test_env_new(102);
    qkv_tensor *x = qkv_tensor_new(f.a, QKV_SHAPE(5));
    const qkv_real v[5] = {-2, -0.5, 0, 0.7, 3};
    memcpy(x->data, v, sizeof v);
    qkv_set_requires_grad(x, true);
    ck_assert_int_eq(qkv_backward(f.a, qkv_sum(f.a, qkv_abs(f.a, x))), 0);
    const qkv_real abs_want[5] = {-1, -1, 0, 1, 1};
    for (int i = 0; i < 5; i++)
        ck_assert_msg(x->grad[i] == abs_want[i], "abs' at %g: %g", (double)v[i], (double)x->grad[i]);
    x->grad = NULL;
    ck_assert_int_eq(qkv_backward(f.a, qkv_sum(f.a, qkv_clamp(f.a, x, -0.5, 0.7))), 0);
    const qkv_real clamp_want[5] = {0, 1, 1, 1, 0};
    for (int i = 0; i < 5; i++)
        ck_assert_msg(x->grad[i] == clamp_want[i], "clamp' at %g: %g", (double)v[i],
                      (double)x->grad[i]);
    qkv_arena_free(&f.a);
}
END_TEST

static const uint8_t cond12[12] = {1, 0, 0, 1, 1, 1, 0, 1, 0, 0, 1, 0};

static qkv_tensor *f_where(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud; /* x·y and x + y: each gradient depends on the other operand */
    return qkv_where(a, cond12, qkv_mul(a, in[0], in[1]), qkv_add(a, in[0], in[1]));
}

static qkv_tensor *f_mse(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_mse_loss(a, in[0], in[1]); }

START_TEST(test_where_and_mse_grads)
{
    qkv_test_env f = qkv_test_env_new(103);
    qkv_tensor *in[2] = {param(f.a, &f.rng, QKV_SHAPE(3, 4), 1), param(f.a, &f.rng, QKV_SHAPE(3, 4), 1)};
    expect_gradcheck(f_where, 2, in, NULL, "where");
    expect_gradcheck(f_mse, 2, in, NULL, "mse_loss");
    qkv_set_requires_grad(in[1], false); /* a fixed target */
    expect_gradcheck(f_mse, 2, in, NULL, "mse_loss, target without gradient");
    qkv_arena_free(&f.a);
}
END_TEST

/* The axis each reduction or scan takes, from the user data. */
static qkv_tensor *f_min(qkv_arena *a, qkv_tensor **in, void *ud) { return qkv_min_axis(a, in[0], *(int *)ud, false); }
static qkv_tensor *f_var(qkv_arena *a, qkv_tensor **in, void *ud) { return qkv_var_axis(a, in[0], *(int *)ud, true, 1); }
static qkv_tensor *f_var0(qkv_arena *a, qkv_tensor **in, void *ud) { return qkv_var_axis(a, in[0], *(int *)ud, false, 0); }
static qkv_tensor *f_cumsum(qkv_arena *a, qkv_tensor **in, void *ud) { return qkv_cumsum(a, in[0], *(int *)ud); }

START_TEST(test_axis_grads)
{
    qkv_test_env f = qkv_test_env_new(104);
    for (int axis = -3; axis < 3; axis++) {
        int shape[3];
        qkv_test_random_shape(&f.rng, 3, 5, shape);
        shape[(axis + 3) % 3] += 1; /* at least 2 values, for the sample variance */
        qkv_tensor *x = param(f.a, &f.rng, 3, shape, 1);
        expect_gradcheck(f_min, 1, &x, &axis, "min_axis");
        expect_gradcheck(f_var, 1, &x, &axis, "var_axis, correction 1, keepdim");
        expect_gradcheck(f_var0, 1, &x, &axis, "var_axis, correction 0");
        expect_gradcheck(f_cumsum, 1, &x, &axis, "cumsum");
    }
    qkv_arena_free(&f.a);
}
END_TEST

static const int32_t pick[4] = {2, 0, 2, 3}; /* 2 twice: both gradients must arrive */

static qkv_tensor *f_index_select(qkv_arena *a, qkv_tensor **in, void *ud)
{
    return qkv_index_select(a, in[0], *(int *)ud, 4, pick);
}

/* gather on axis 1 of (2, 4, 3), two picks per row: ids (2, 2, 3). */
static qkv_tensor *f_gather(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    static const int32_t ids[12] = {0, 3, 3, 3, 1, 3, 2, 2, 0, 1, 1, 2};
    return qkv_gather(a, in[0], 1, 2, ids);
}

static qkv_tensor *f_topk(qkv_arena *a, qkv_tensor **in, void *ud) { return qkv_topk(a, in[0], *(int *)ud, NULL); }
static qkv_tensor *f_sort(qkv_arena *a, qkv_tensor **in, void *ud) { return qkv_sort(a, in[0], *(int *)ud, NULL); }

START_TEST(test_pick_grads)
{
    qkv_test_env f = qkv_test_env_new(105);
    qkv_tensor *x = param(f.a, &f.rng, QKV_SHAPE(4, 4, 4), 1);
    for (int axis = 0; axis < 3; axis++)
        expect_gradcheck(f_index_select, 1, &x, &axis, "index_select");
    qkv_tensor *g = param(f.a, &f.rng, QKV_SHAPE(2, 4, 3), 1);
    expect_gradcheck(f_gather, 1, &g, NULL, "gather");
    qkv_tensor *r = param(f.a, &f.rng, QKV_SHAPE(3, 7), 1);
    for (int k = 1; k <= 7; k += 3)
        expect_gradcheck(f_topk, 1, &r, &k, "topk");
    for (int desc = 0; desc < 2; desc++)
        expect_gradcheck(f_sort, 1, &r, &desc, "sort");
    qkv_arena_free(&f.a);
}
END_TEST

static qkv_tensor *f_log_softmax(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_log_softmax(a, in[0]); }

START_TEST(test_log_softmax_grad)
{
    qkv_test_env f = qkv_test_env_new(106);
    qkv_tensor *x = param(f.a, &f.rng, QKV_SHAPE(2, 3, 6), 2);
    expect_gradcheck(f_log_softmax, 1, &x, NULL, "log_softmax");
    for (size_t i = 0; i < x->size; i += 3) /* rows with one sharp peak (the overflow of */
        x->data[i] += 30;                     /* far larger logits: the definitions suite) */
    expect_gradcheck(f_log_softmax, 1, &x, NULL, "log_softmax of peaked rows");
    qkv_arena_free(&f.a);
}
END_TEST

static Suite *more_ops_suite(void)
{
    Suite *s = suite_create("grad_more_ops");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_pointwise_grads);
    tcase_add_test(tc, test_kink_gradients);
    tcase_add_test(tc, test_where_and_mse_grads);
    tcase_add_test(tc, test_axis_grads);
    tcase_add_test(tc, test_pick_grads);
    tcase_add_test(tc, test_log_softmax_grad);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(more_ops_suite)
