/* Gradient checks (double build) of broadcasting add/sub/mul/div, exp, log,
 * tanh, sigmoid, sum/mean/max over an axis, the masked mean and
 * concat/slice/transpose on any axis, against finite differences; and their
 * values against plain loops (tests/support/axis_ops_check.c) at double's
 * precision. */
#include "axis_ops_check.h"
#include "gradcheck.h"
#include "testing.h"

static qkv_tensor *param(qkv_arena *a, qkv_rng *rng, int ndim, const int *shape)
{
    qkv_tensor *t = qkv_randn(a, ndim, shape, 1, rng);
    qkv_set_requires_grad(t, true);
    return t;
}

/* A random shape of 1..4 dims with extents 1..max. */
static int random_shape(qkv_rng *rng, int max, int *shape)
{
    int ndim = 1 + (int)qkv_rng_below(rng, QKV_MAX_DIMS);
    qkv_test_random_shape(rng, ndim, max, shape);
    return ndim;
}

START_TEST(test_forward_matches_the_formulas)
{
    ck_assert_int_eq(axis_ops_forward_check(1e-12), 0);
}
END_TEST

/* ---- broadcasting ---- */

typedef struct {
    int op;      /* 0 add, 1 sub, 2 mul, 3 div */
    bool scaled; /* the operands are results of an op (scale), not leaves: their
                    gradient buffers come fresh from the backward pass */
} binary_arg;

static qkv_tensor *f_binary(qkv_arena *a, qkv_tensor **in, void *ud)
{
    const binary_arg *b = ud;
    qkv_tensor *x = b->scaled ? qkv_scale(a, in[0], 1.5) : in[0];
    qkv_tensor *y = b->scaled ? qkv_scale(a, in[1], -0.5) : in[1];
    return b->op == 0 ? qkv_add(a, x, y) : b->op == 1 ? qkv_sub(a, x, y)
         : b->op == 2 ? qkv_mul(a, x, y) : qkv_div(a, x, y);
}

/* Both operands stretched: some leading dims missing, some extents 1. */
static int stretched(qkv_rng *rng, int ndim, const int *out, int *shape)
{
    int n = 1 + (int)qkv_rng_below(rng, (uint64_t)ndim);
    for (int d = 0; d < n; d++)
        shape[d] = qkv_rng_below(rng, 3) == 0 ? 1 : out[ndim - n + d];
    return n;
}

START_TEST(test_broadcasting_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 31);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int trial = 0; trial < 24; trial++) {
        int out[QKV_MAX_DIMS], xs[QKV_MAX_DIMS], ys[QKV_MAX_DIMS];
        int ndim = random_shape(&rng, 3, out);
        int xn = stretched(&rng, ndim, out, xs), yn = stretched(&rng, ndim, out, ys);
        qkv_tensor *in[2] = {param(a, &rng, xn, xs), param(a, &rng, yn, ys)};
        for (size_t i = 0; i < in[1]->size; i++) /* keep the divisor away from 0 */
            in[1]->data[i] += in[1]->data[i] < 0 ? -0.5 : 0.5;
        for (int op = 0; op < 4; op++) {
            binary_arg b = {op, trial % 2};
            double err = gradcheck(f_binary, 2, in, &b);
            ck_assert_msg(err <= GRADCHECK_TOL, "op %d trial %d (%d and %d dims): error %g", op,
                          trial, xn, yn, err);
        }
    }
    qkv_arena_free(&a);
}
END_TEST

/* div on today's shapes (the fast rows): the same shape, and y of x's trailing dims. */
START_TEST(test_div_fast_path_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 32);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int trial = 0; trial < 8; trial++) {
        int shape[3];
        qkv_test_random_shape(&rng, 3, 4, shape);
        int tail = trial % 4;
        qkv_tensor *in[2] = {param(a, &rng, 3, shape),
                             tail ? param(a, &rng, tail, shape + 3 - tail) : param(a, &rng, 3, shape)};
        for (size_t i = 0; i < in[1]->size; i++)
            in[1]->data[i] += in[1]->data[i] < 0 ? -0.5 : 0.5;
        binary_arg b = {3, trial >= 4};
        double err = gradcheck(f_binary, 2, in, &b);
        ck_assert_msg(err <= GRADCHECK_TOL, "trial %d: error %g", trial, err);
    }
    qkv_arena_free(&a);
}
END_TEST

/* ---- exp, log, tanh, sigmoid ---- */

static qkv_tensor *f_exp(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_exp(a, in[0]); }
static qkv_tensor *f_log(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_log(a, in[0]); }
static qkv_tensor *f_tanh(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_tanh(a, in[0]); }
static qkv_tensor *f_sigmoid(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_sigmoid(a, in[0]); }

START_TEST(test_unary_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 33);
    qkv_arena *a = qkv_arena_new(1 << 16);
    gradcheck_fn fs[] = {f_exp, f_log, f_tanh, f_sigmoid};
    for (int f = 0; f < 4; f++) {
        int shape[QKV_MAX_DIMS];
        int ndim = random_shape(&rng, 4, shape);
        qkv_tensor *x = param(a, &rng, ndim, shape);
        for (size_t i = 0; i < x->size; i++)
            x->data[i] = f == 1 ? fabs(x->data[i]) + 0.2 : 3 * x->data[i]; /* log: x > 0 */
        double err = gradcheck(fs[f], 1, &x, NULL);
        ck_assert_msg(err <= GRADCHECK_TOL, "function %d: error %g", f, err);
    }
    qkv_arena_free(&a);
}
END_TEST

/* ---- reductions over an axis ---- */

typedef struct {
    int kind, axis; /* 0 sum, 1 mean, 2 max */
    bool keepdim;
} reduce_arg;

static qkv_tensor *f_reduce(qkv_arena *a, qkv_tensor **in, void *ud)
{
    const reduce_arg *r = ud;
    return r->kind == 0 ? qkv_sum_axis(a, in[0], r->axis, r->keepdim)
         : r->kind == 1 ? qkv_mean_axis(a, in[0], r->axis, r->keepdim)
                        : qkv_max_axis(a, in[0], r->axis, r->keepdim);
}

START_TEST(test_reductions_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 34);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int ndim = 1; ndim <= QKV_MAX_DIMS; ndim++)
        for (int axis = -ndim; axis < ndim; axis++)
            for (int kind = 0; kind < 3; kind++) {
                int shape[QKV_MAX_DIMS];
                qkv_test_random_shape(&rng, ndim, 4, shape);
                qkv_tensor *x = param(a, &rng, ndim, shape);
                reduce_arg r = {kind, axis, (axis + kind) % 2 == 0};
                double err = gradcheck(f_reduce, 1, &x, &r);
                ck_assert_msg(err <= GRADCHECK_TOL, "kind %d ndim %d axis %d: error %g", kind,
                              ndim, axis, err);
            }
    qkv_arena_free(&a);
}
END_TEST

/* ---- the masked mean ---- */

typedef struct {
    int axis;
    const uint8_t *mask;
} masked_arg;

static qkv_tensor *f_masked(qkv_arena *a, qkv_tensor **in, void *ud)
{
    const masked_arg *m = ud;
    return qkv_masked_mean(a, in[0], m->axis, m->mask);
}

START_TEST(test_masked_mean_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 35);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int ndim = 1; ndim <= QKV_MAX_DIMS; ndim++)
        for (int axis = 0; axis < ndim; axis++) {
            int shape[QKV_MAX_DIMS];
            qkv_test_random_shape(&rng, ndim, 4, shape);
            qkv_tensor *x = param(a, &rng, ndim, shape);
            uint8_t mask[256];
            for (int i = 0; i < 256; i++)
                mask[i] = (uint8_t)(qkv_rng_below(&rng, 3) != 0);
            masked_arg m = {axis, mask};
            double err = gradcheck(f_masked, 1, &x, &m);
            ck_assert_msg(err <= GRADCHECK_TOL, "ndim %d axis %d: error %g", ndim, axis, err);
        }
    qkv_arena_free(&a);
}
END_TEST

/* ---- concat, slice, transpose on any axis ---- */

typedef struct {
    int axis, start, len, other;
} shape_arg;

static qkv_tensor *f_concat(qkv_arena *a, qkv_tensor **in, void *ud)
{
    return qkv_concat_axis(a, 3, in, ((const shape_arg *)ud)->axis);
}

static qkv_tensor *f_slice(qkv_arena *a, qkv_tensor **in, void *ud)
{
    const shape_arg *s = ud;
    return qkv_slice_axis(a, in[0], s->axis, s->start, s->len);
}

static qkv_tensor *f_transpose(qkv_arena *a, qkv_tensor **in, void *ud)
{
    const shape_arg *s = ud;
    return qkv_transpose_axes(a, in[0], s->axis, s->other);
}

START_TEST(test_shape_ops_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 36);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int ndim = 1; ndim <= QKV_MAX_DIMS; ndim++)
        for (int axis = 0; axis < ndim; axis++) {
            int shape[QKV_MAX_DIMS];
            qkv_test_random_shape(&rng, ndim, 3, shape);
            qkv_tensor *parts[3];
            for (int i = 0; i < 3; i++) {
                shape[axis] = 1 + (int)qkv_rng_below(&rng, 3);
                parts[i] = param(a, &rng, ndim, shape);
            }
            shape_arg s = {axis, 0, 0, (int)qkv_rng_below(&rng, (uint64_t)ndim)};
            double err = gradcheck(f_concat, 3, parts, &s);
            ck_assert_msg(err <= GRADCHECK_TOL, "concat ndim %d axis %d: error %g", ndim, axis, err);
            qkv_tensor *x = parts[0];
            s.start = (int)qkv_rng_below(&rng, (uint64_t)x->shape[axis]);
            s.len = 1 + (int)qkv_rng_below(&rng, (uint64_t)(x->shape[axis] - s.start));
            err = gradcheck(f_slice, 1, &x, &s);
            ck_assert_msg(err <= GRADCHECK_TOL, "slice ndim %d axis %d: error %g", ndim, axis, err);
            err = gradcheck(f_transpose, 1, &x, &s);
            ck_assert_msg(err <= GRADCHECK_TOL, "transpose ndim %d axes %d %d: error %g", ndim,
                          axis, s.other, err);
        }
    qkv_arena_free(&a);
}
END_TEST

static Suite *axis_ops_suite(void)
{
    Suite *s = suite_create("grad_axis_ops");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30); /* slow under the sanitizers on a busy machine */
    tcase_add_test(tc, test_forward_matches_the_formulas);
    tcase_add_test(tc, test_broadcasting_grad);
    tcase_add_test(tc, test_div_fast_path_grad);
    tcase_add_test(tc, test_unary_grad);
    tcase_add_test(tc, test_reductions_grad);
    tcase_add_test(tc, test_masked_mean_grad);
    tcase_add_test(tc, test_shape_ops_grad);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(axis_ops_suite)
