/* relu, gelu, silu and dropout (double build): values, gradients against
 * finite differences, and dropout's modes, statistics and errors. */
#include <omp.h>

#include "error_text.h"
#include "gradcheck.h"
#include "testing.h"

static qkv_tensor *param(qkv_arena *a, qkv_rng *rng, int ndim, const int *shape, qkv_real std)
{
    qkv_tensor *t = qkv_randn(a, ndim, shape, std, rng);
    qkv_set_requires_grad(t, true);
    return t;
}

static qkv_tensor *f_relu(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    return qkv_relu(a, in[0]);
}

static qkv_tensor *f_gelu(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    return qkv_gelu(a, in[0]);
}

static qkv_tensor *f_silu(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    return qkv_silu(a, in[0]);
}

/* Dropout with p = *ud, re-seeding its own rng so every gradcheck probe
 * draws the same mask (otherwise the loss would change between probes). */
static qkv_tensor *f_dropout(qkv_arena *a, qkv_tensor **in, void *ud)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 99);
    return qkv_dropout(a, in[0], *(qkv_real *)ud, &rng, true);
}

/* x used in every op: gelu(x)·relu(x) + dropout(x) + x. */
static qkv_tensor *f_reuse(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    qkv_tensor *x = in[0];
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    qkv_tensor *gr = qkv_mul(a, qkv_gelu(a, x), qkv_relu(a, x));
    return qkv_add(a, qkv_add(a, gr, qkv_dropout(a, x, 0.5, &rng, true)), x);
}

/* Move every value at least 0.1 away from 0 (keeping its sign). */
static void away_from_kink(qkv_tensor *x)
{
    for (size_t i = 0; i < x->size; i++)
        if (fabs(x->data[i]) < 0.1)
            x->data[i] += x->data[i] < 0 ? -0.1 : 0.1;
}

/* gradcheck f on four random 3-D inputs of N(0, std²) values, moved off the
 * kink at 0 when off_kink. */
static void check_random_inputs(gradcheck_fn f, uint64_t seed, qkv_real std, bool off_kink)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int trial = 0; trial < 4; trial++) {
        int shape[3];
        qkv_test_random_shape(&rng, 3, 5, shape);
        qkv_tensor *x = param(a, &rng, 3, shape, std);
        if (off_kink)
            away_from_kink(x);
        double err = gradcheck(f, 1, &x, NULL);
        ck_assert_msg(err <= GRADCHECK_TOL, "trial %d: error %g", trial, err);
    }
    qkv_arena_free(&a);
}

/* ---- relu ---- */

START_TEST(test_relu_values)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(5), (qkv_real[]){-2, -0.5, 0, 0.5, 3});
    qkv_tensor *y = qkv_relu(a, x);
    ck_assert_qkv(y);
    qkv_test_assert_close(y, (qkv_real[]){0, 0, 0, 0.5, 3}, 0);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_relu_grad_at_zero_is_zero)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(3), (qkv_real[]){-1, 0, 2});
    qkv_set_requires_grad(x, true);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_relu(a, x))), 0);
    ck_assert(x->grad[0] == 0 && x->grad[1] == 0 && x->grad[2] == 1);
    qkv_arena_free(&a);
}
END_TEST

/* Away from the kink: a central difference across x = 0 measures the average
 * of the two slopes (e.g. 0.5), not either one-sided derivative, so values
 * within h of 0 would fail for a correct op. The kink itself is checked above. */
START_TEST(test_relu_grad)
{
    check_random_inputs(f_relu, 20, 1, true);
}
END_TEST

/* ---- gelu ---- */

START_TEST(test_gelu_values)
{
    /* 0.5·x·(1 + tanh(sqrt(2/pi)·(x + 0.044715·x³))), computed independently in Python. */
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(7), (qkv_real[]){-3, -1, -0.5, 0, 0.5, 1, 2});
    qkv_tensor *y = qkv_gelu(a, x);
    ck_assert_qkv(y);
    qkv_test_assert_close(y,
                          (qkv_real[]){-0.0036373920817729943, -0.15880800939172324,
                                       -0.15428599017485606, 0, 0.34571400982514394,
                                       0.8411919906082768, 1.954597694087775},
                          1e-15);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_gelu_grad)
{
    check_random_inputs(f_gelu, 21, 2, false); /* std 2 reaches both tails */
}
END_TEST

/* ---- silu ---- */

/* x·σ(x) with σ(x) = 1/(1 + e^−x), and the slope σ(x)·(1 + x·(1 − σ(x))) as
 * the backward of a sum gives it: from the definition, not from the tanh
 * form the op computes with; through both tails, where σ is 0 or 1. */
START_TEST(test_silu_values_and_slope)
{
    enum { N = 9 };
    const qkv_real xs[N] = {-30, -4, -1, -0.25, 0, 0.25, 1, 4, 30};
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(N), xs);
    qkv_set_requires_grad(x, true);
    qkv_tensor *y = qkv_silu(a, x);
    ck_assert_qkv(y);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, y)), 0);
    for (int i = 0; i < N; i++) {
        double v = xs[i], s = 1 / (1 + exp(-v));
        ck_assert_msg(fabs(y->data[i] - v * s) <= 1e-13, "silu(%g) = %.17g, want %.17g", v,
                      (double)y->data[i], v * s);
        ck_assert_msg(fabs(x->grad[i] - s * (1 + v * (1 - s))) <= 1e-13,
                      "silu'(%g) = %.17g, want %.17g", v, (double)x->grad[i],
                      s * (1 + v * (1 - s)));
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_silu_grad)
{
    check_random_inputs(f_silu, 28, 2, false); /* std 2: both tails and the dip near -1.28 */
}
END_TEST

/* ---- dropout ---- */

START_TEST(test_dropout_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 22);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_real ps[] = {0.1, 0.5, 0.9};
    for (int k = 0; k < 3; k++) {
        int shape[2];
        qkv_test_random_shape(&rng, 2, 8, shape);
        qkv_tensor *x = param(a, &rng, 2, shape, 1);
        double err = gradcheck(f_dropout, 1, &x, &ps[k]);
        ck_assert_msg(err <= GRADCHECK_TOL, "p %g: error %g", ps[k], err);
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_dropout_eval_and_p0_return_x)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 23);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = param(a, &rng, QKV_SHAPE(4, 4), 1);
    qkv_rng before = rng;
    ck_assert_ptr_eq(qkv_dropout(a, x, 0.5, &rng, false), x);
    ck_assert_ptr_eq(qkv_dropout(a, x, 0, &rng, true), x);
    ck_assert_ptr_eq(qkv_dropout(a, x, 0.5, NULL, false), x); /* eval needs no rng */
    ck_assert(memcmp(&before, &rng, sizeof rng) == 0);       /* and draws nothing */
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_dropout_mask_statistics)
{
    /* 20000 values at p = 0.3: the dropped fraction is within 5 standard
     * deviations (5·sqrt(p(1-p)/n) ≈ 0.016) of p; survivors are x / (1 - p). */
    enum { N = 20000 };
    qkv_rng rng;
    qkv_rng_seed(&rng, 24);
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_tensor *x = qkv_rand_uniform(a, QKV_SHAPE(N), 1, 2, &rng);
    qkv_tensor *y = qkv_dropout(a, x, 0.3, &rng, true);
    ck_assert_qkv(y);
    size_t dropped = 0;
    for (size_t i = 0; i < N; i++) {
        if (y->data[i] == 0)
            dropped++;
        else
            ck_assert_msg(fabs(y->data[i] - x->data[i] / 0.7) < 1e-12, "value %zu", i);
    }
    ck_assert_msg(fabs((double)dropped / N - 0.3) < 0.016, "dropped %zu of %d", dropped, N);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_dropout_deterministic)
{
    /* The same seed gives the same mask at 1 and at 2 threads; the rng moves on,
     * so a second call draws a different mask. */
    enum { N = 4096 };
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_tensor *x = qkv_ones(a, QKV_SHAPE(N));
    qkv_tensor *y[2];
    int saved = omp_get_max_threads();
    for (int k = 0; k < 2; k++) {
        omp_set_num_threads(k + 1);
        qkv_rng rng;
        qkv_rng_seed(&rng, 25);
        y[k] = qkv_dropout(a, x, 0.5, &rng, true);
        ck_assert_qkv(y[k]);
        if (k == 1) {
            qkv_tensor *again = qkv_dropout(a, x, 0.5, &rng, true);
            ck_assert(memcmp(again->data, y[k]->data, N * sizeof(qkv_real)) != 0);
        }
    }
    omp_set_num_threads(saved);
    ck_assert(memcmp(y[0]->data, y[1]->data, N * sizeof(qkv_real)) == 0);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_dropout_errors)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 26);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_zeros(a, QKV_SHAPE(3));
    qkv_real bad[] = {-0.1, 1, 1.5, NAN};
    for (int k = 0; k < 4; k++) {
        qkv_clear_error();
        ck_assert_ptr_null(qkv_dropout(a, x, bad[k], &rng, true));
        ck_assert_error("dropout: p must be in [0, 1)");
    }
    ck_assert_ptr_null(qkv_dropout(a, x, 1, &rng, false)); /* a bad p is wrong in eval too */
    ck_assert_ptr_null(qkv_dropout(a, x, 0.5, NULL, true));
    ck_assert_error("dropout", "rng");
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_reused_tensor_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 27);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = param(a, &rng, QKV_SHAPE(4, 5), 1);
    away_from_kink(x);
    double err = gradcheck(f_reuse, 1, &x, NULL);
    ck_assert_msg(err <= GRADCHECK_TOL, "error %g", err);
    qkv_arena_free(&a);
}
END_TEST

static Suite *activation_suite(void)
{
    Suite *s = suite_create("grad_activation");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30); /* slow under the sanitizers on a busy machine */
    tcase_add_test(tc, test_relu_values);
    tcase_add_test(tc, test_relu_grad_at_zero_is_zero);
    tcase_add_test(tc, test_relu_grad);
    tcase_add_test(tc, test_gelu_values);
    tcase_add_test(tc, test_gelu_grad);
    tcase_add_test(tc, test_silu_values_and_slope);
    tcase_add_test(tc, test_silu_grad);
    tcase_add_test(tc, test_dropout_grad);
    tcase_add_test(tc, test_dropout_eval_and_p0_return_x);
    tcase_add_test(tc, test_dropout_mask_statistics);
    tcase_add_test(tc, test_dropout_deterministic);
    tcase_add_test(tc, test_dropout_errors);
    tcase_add_test(tc, test_reused_tensor_grad);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(activation_suite)
