/* Gradient checks (double build) of add, sub, mul, scale, sum, mean, matmul. */
#include "gradcheck.h"
#include "testing.h"

static qkv_tensor *f_add(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_add(a, in[0], in[1]); }
static qkv_tensor *f_sub(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_sub(a, in[0], in[1]); }
static qkv_tensor *f_mul(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_mul(a, in[0], in[1]); }
static qkv_tensor *f_scale(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_scale(a, in[0], -1.7); }
static qkv_tensor *f_sum(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_sum(a, in[0]); }
static qkv_tensor *f_mean(qkv_arena *a, qkv_tensor **in, void *ud) { (void)ud; return qkv_mean(a, in[0]); }

/* x used twice: d(x*x + x)/dx = 2x + 1 needs both contributions accumulated. */
static qkv_tensor *f_reuse(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    return qkv_add(a, qkv_mul(a, in[0], in[0]), in[0]);
}

typedef struct { bool tx, tw; } mm_flags;

static qkv_tensor *f_matmul(qkv_arena *a, qkv_tensor **in, void *ud)
{
    mm_flags *f = ud;
    return qkv_matmul(a, in[0], in[1], f->tx, f->tw);
}

static qkv_tensor *f_affine(qkv_arena *a, qkv_tensor **in, void *ud)
{
    return qkv_affine(a, in[0], in[1], ud ? in[2] : NULL);
}

static qkv_tensor *param(qkv_arena *a, qkv_rng *rng, int ndim, const int *shape)
{
    qkv_tensor *t = qkv_randn(a, ndim, shape, 1, rng);
    qkv_set_requires_grad(t, true);
    return t;
}

START_TEST(test_binary_ops_broadcast)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    qkv_arena *a = qkv_arena_new(1 << 16);
    gradcheck_fn fs[] = {f_add, f_sub, f_mul};
    for (int trial = 0; trial < 6; trial++) {
        int shape[3];
        qkv_test_random_shape(&rng, 3, 5, shape);
        int tail = (int)qkv_rng_below(&rng, 4); /* 0..3 trailing dims for y */
        qkv_tensor *in[2] = {param(a, &rng, 3, shape),
                             tail ? param(a, &rng, tail, shape + 3 - tail) : param(a, &rng, 3, shape)};
        for (int k = 0; k < 3; k++) {
            double err = gradcheck(fs[k], 2, in, NULL);
            ck_assert_msg(err <= GRADCHECK_TOL, "op %d trial %d: error %g", k, trial, err);
        }
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_unary_and_reductions)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 2);
    qkv_arena *a = qkv_arena_new(1 << 16);
    gradcheck_fn fs[] = {f_scale, f_sum, f_mean, f_reuse};
    for (int k = 0; k < 4; k++) {
        int shape[2];
        qkv_test_random_shape(&rng, 2, 6, shape);
        qkv_tensor *x = param(a, &rng, 2, shape);
        double err = gradcheck(fs[k], 1, &x, NULL);
        ck_assert_msg(err <= GRADCHECK_TOL, "op %d: error %g", k, err);
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_matmul_all_forms)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 3);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int form = 0; form < 4; form++)
        for (int batched = 0; batched < 3; batched++) { /* 2-D, batched pair, shared weight */
            mm_flags f = {form & 1, form >> 1};
            int M = 1 + (int)qkv_rng_below(&rng, 5), K = 1 + (int)qkv_rng_below(&rng, 5);
            int N = 1 + (int)qkv_rng_below(&rng, 5), B = 2 + (int)qkv_rng_below(&rng, 2);
            int xs[3] = {B, f.tx ? K : M, f.tx ? M : K}, ws[3] = {B, f.tw ? N : K, f.tw ? K : N};
            qkv_tensor *in[2];
            in[0] = batched ? param(a, &rng, 3, xs) : param(a, &rng, 2, xs + 1);
            in[1] = batched == 1 ? param(a, &rng, 3, ws) : param(a, &rng, 2, ws + 1);
            double err = gradcheck(f_matmul, 2, in, &f);
            ck_assert_msg(err <= GRADCHECK_TOL, "tx %d tw %d batched %d: error %g", f.tx, f.tw,
                          batched, err);
        }
    qkv_arena_free(&a);
}
END_TEST

/* Large operands are split into chunks shared among threads (with a shorter
 * last chunk): every value and gradient must still pair up correctly. */
START_TEST(test_large_operands_match_plain_loops)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 4);
    qkv_arena *a = qkv_arena_new(1 << 22);
    const int rows = 101, n = rows * 123; /* 3·4096 + 135: a short last chunk */
    for (int op = 0; op < 3; op++)
        for (int bcast = 0; bcast < 2; bcast++) {
            qkv_tensor *x = param(a, &rng, 2, (const int[]){rows, 123});
            qkv_tensor *y = bcast ? param(a, &rng, 1, (const int[]){123})
                                  : param(a, &rng, 2, (const int[]){rows, 123});
            qkv_tensor *out = op == 0 ? qkv_add(a, x, y) : op == 1 ? qkv_sub(a, x, y) : qkv_mul(a, x, y);
            qkv_tensor *w = qkv_randn(a, 2, x->shape, 1, &rng);
            ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, out, w))), 0);
            double gy[4096 * 4] = {0};
            for (int i = 0; i < n; i++) {
                int j = bcast ? i % 123 : i;
                double xv = x->data[i], yv = y->data[j], g = w->data[i];
                double want = op == 0 ? xv + yv : op == 1 ? xv - yv : xv * yv;
                double gx = op == 2 ? g * yv : g;
                gy[j] += op == 0 ? g : op == 1 ? -g : g * xv;
                ck_assert_msg(fabs(out->data[i] - want) < 1e-12, "op %d value %d", op, i);
                ck_assert_msg(fabs(x->grad[i] - gx) < 1e-12, "op %d dx %d", op, i);
            }
            for (size_t j = 0; j < y->size; j++)
                ck_assert_msg(fabs(y->grad[j] - gy[j]) < 1e-9, "op %d dy %zu", op, j);
            qkv_arena_reset(a);
        }
    qkv_arena_free(&a);
}
END_TEST

/* affine = matmul with a transposed weight, plus a bias: one node. */
START_TEST(test_affine)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 5);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int trial = 0; trial < 6; trial++) {
        int B = 1 + (int)qkv_rng_below(&rng, 3), T = 1 + (int)qkv_rng_below(&rng, 4);
        int in = 1 + (int)qkv_rng_below(&rng, 5), out = 1 + (int)qkv_rng_below(&rng, 5);
        qkv_tensor *ins[3] = {trial % 2 ? param(a, &rng, 3, (const int[]){B, T, in})
                                        : param(a, &rng, 2, (const int[]){T, in}),
                              param(a, &rng, 2, (const int[]){out, in}),
                              param(a, &rng, 1, (const int[]){out})};
        double err = gradcheck(f_affine, 3, ins, trial < 3 ? ins : NULL);
        ck_assert_msg(err <= GRADCHECK_TOL, "trial %d: error %g", trial, err);
    }
    qkv_tensor *x = param(a, &rng, 2, (const int[]){2, 3}), *w = param(a, &rng, 2, (const int[]){4, 5});
    ck_assert_ptr_null(qkv_affine(a, x, w, NULL));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "(2,3) and (4,5)"));
    qkv_arena_free(&a);
}
END_TEST

static Suite *elementwise_suite(void)
{
    Suite *s = suite_create("grad_elementwise");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_binary_ops_broadcast);
    tcase_add_test(tc, test_unary_and_reductions);
    tcase_add_test(tc, test_matmul_all_forms);
    tcase_add_test(tc, test_large_operands_match_plain_loops);
    tcase_add_test(tc, test_affine);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(elementwise_suite)
