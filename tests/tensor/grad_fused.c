/* Gradient checks (double build) of the fused ops: layernorm, softmax,
 * cross-entropy and the attention core, plus their forward values and the
 * thread-count independence of their reductions. */
#include <omp.h>

#include "gradcheck.h"
#include "testing.h"

static qkv_tensor *param(qkv_arena *a, qkv_rng *rng, int ndim, const int *shape)
{
    qkv_tensor *t = qkv_randn(a, ndim, shape, 1, rng);
    qkv_set_requires_grad(t, true);
    return t;
}

/* ---- layernorm ---- */

typedef struct { bool w, b; } ln_parts; /* which of w, b the call passes */

static qkv_tensor *f_layernorm(qkv_arena *a, qkv_tensor **in, void *ud)
{
    ln_parts *p = ud;
    return qkv_layernorm(a, in[0], p->w ? in[1] : NULL, p->b ? in[2] : NULL, 1e-5);
}

START_TEST(test_layernorm_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 11);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int trial = 0; trial < 10; trial++) {
        /* none, w, b, both; twice; then both, on rows wider than the backward's
         * blocks of 32 columns (op_layernorm.c): a block and a part, two and a part */
        ln_parts parts = {trial & 1 || trial >= 8, trial & 2 || trial >= 8};
        int ndim = 1 + (int)qkv_rng_below(&rng, 3), shape[3];
        qkv_test_random_shape(&rng, ndim, 4, shape);
        shape[ndim - 1] = 2 + (int)qkv_rng_below(&rng, 6); /* C >= 2: C = 1 has no variance */
        if (trial >= 8)
            shape[ndim - 1] = trial == 8 ? 37 : 70;
        int C = shape[ndim - 1];
        qkv_tensor *in[3] = {param(a, &rng, ndim, shape), param(a, &rng, QKV_SHAPE(C)),
                             param(a, &rng, QKV_SHAPE(C))};
        double err = gradcheck(f_layernorm, 3, in, &parts);
        ck_assert_msg(err <= GRADCHECK_TOL, "w %d b %d C %d: error %g", parts.w, parts.b, C, err);
    }
    qkv_arena_free(&a);
}
END_TEST

/* Without w and b each row of the output has mean 0 and variance 1 (up to
 * eps); with them it is that, scaled and shifted per column. */
START_TEST(test_layernorm_forward_values)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 12);
    qkv_arena *a = qkv_arena_new(1 << 16);
    int N = 5, C = 7;
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(N, C), 3, &rng);
    for (size_t i = 0; i < x->size; i++)
        x->data[i] += 100; /* a large mean: a one-pass variance would lose digits */
    qkv_tensor *w = qkv_randn(a, QKV_SHAPE(C), 1, &rng), *b = qkv_randn(a, QKV_SHAPE(C), 1, &rng);
    qkv_tensor *y = qkv_layernorm(a, x, NULL, NULL, 0), *z = qkv_layernorm(a, x, w, b, 0);
    ck_assert_qkv(y);
    ck_assert_qkv(z);
    for (int i = 0; i < N; i++) {
        double m = 0, v = 0;
        for (int j = 0; j < C; j++)
            m += y->data[i * C + j] / C;
        for (int j = 0; j < C; j++)
            v += (y->data[i * C + j] - m) * (y->data[i * C + j] - m) / C;
        ck_assert_msg(fabs(m) < 1e-12 && fabs(v - 1) < 1e-12, "row %d: mean %g var %g", i, m, v);
        for (int j = 0; j < C; j++)
            ck_assert_double_eq_tol(z->data[i * C + j], y->data[i * C + j] * w->data[j] + b->data[j],
                                    1e-12);
    }
    qkv_arena_free(&a);
}
END_TEST

/* Gradients of x, w, b after one backward with the given number of threads. */
static void layernorm_grads(int threads, qkv_real *out, size_t n_out)
{
    omp_set_num_threads(threads);
    qkv_rng rng;
    qkv_rng_seed(&rng, 13);
    qkv_arena *a = qkv_arena_new(1 << 20);
    int N = 301, C = 67; /* odd sizes: uneven chunks and a partial column block */
    qkv_tensor *x = param(a, &rng, QKV_SHAPE(N, C)), *w = param(a, &rng, QKV_SHAPE(C));
    qkv_tensor *b = param(a, &rng, QKV_SHAPE(C));
    qkv_tensor *r = qkv_randn(a, QKV_SHAPE(N, C), 1, &rng);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, qkv_layernorm(a, x, w, b, 1e-5), r))), 0);
    ck_assert_uint_eq(n_out, x->size + 2 * (size_t)C);
    memcpy(out, x->grad, x->size * sizeof *out);
    memcpy(out + x->size, w->grad, (size_t)C * sizeof *out);
    memcpy(out + x->size + C, b->grad, (size_t)C * sizeof *out);
    qkv_arena_free(&a);
}

START_TEST(test_layernorm_grads_same_at_any_thread_count)
{
    enum { SIZE = 301 * 67 + 2 * 67 };
    static qkv_real one[SIZE], three[SIZE];
    int saved = omp_get_max_threads();
    layernorm_grads(1, one, SIZE);
    layernorm_grads(3, three, SIZE);
    omp_set_num_threads(saved);
    ck_assert_msg(memcmp(one, three, sizeof one) == 0, "gradients differ between 1 and 3 threads");
}
END_TEST

/* ---- softmax ---- */

static qkv_tensor *f_softmax(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    return qkv_softmax(a, in[0]);
}

START_TEST(test_softmax_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 21);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int ndim = 1; ndim <= 4; ndim++) {
        int shape[4];
        qkv_test_random_shape(&rng, ndim, 4, shape);
        qkv_tensor *x = param(a, &rng, ndim, shape);
        double err = gradcheck(f_softmax, 1, &x, NULL);
        ck_assert_msg(err <= GRADCHECK_TOL, "ndim %d: error %g", ndim, err);
    }
    qkv_arena_free(&a);
}
END_TEST

/* ---- cross-entropy ---- */

enum { IGNORE = -1 };

static qkv_tensor *f_cross_entropy(qkv_arena *a, qkv_tensor **in, void *ud)
{
    return qkv_cross_entropy(a, in[0], ud, IGNORE);
}

START_TEST(test_cross_entropy_grad_with_ignored_rows)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 31);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int trial = 0; trial < 4; trial++) {
        int shape[3];
        qkv_test_random_shape(&rng, 3, 4, shape);
        shape[2] += 1; /* V >= 2 */
        qkv_tensor *x = param(a, &rng, 3, shape);
        int32_t targets[16];
        int rows = shape[0] * shape[1];
        for (int i = 0; i < rows; i++) /* about one row in four ignored, the first always */
            targets[i] = i == 0 || qkv_rng_below(&rng, 4) == 0 ? IGNORE
                                                                : (int32_t)qkv_rng_below(&rng, (uint64_t)shape[2]);
        double err = gradcheck(f_cross_entropy, 1, &x, targets);
        ck_assert_msg(err <= GRADCHECK_TOL, "trial %d: error %g", trial, err);
    }
    qkv_arena_free(&a);
}
END_TEST

/* The loss is the mean of −log softmax(x)_target over the counted rows. */
START_TEST(test_cross_entropy_value)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(3, 3), (qkv_real[]){1, 2, 3, 0, 0, 0, 5, -5, 900});
    int32_t targets[3] = {2, IGNORE, 0};
    qkv_tensor *loss = qkv_cross_entropy(a, x, targets, IGNORE);
    ck_assert_qkv(loss);
    ck_assert_int_eq(loss->ndim, 1);
    ck_assert_int_eq(loss->shape[0], 1);
    double row0 = log(exp(1.0) + exp(2.0) + exp(3.0)) - 3, row2 = 900 - 5; /* exp(900) overflows */
    ck_assert_double_eq_tol(loss->data[0], (row0 + row2) / 2, 1e-12);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_cross_entropy_all_ignored_is_zero)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 32);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = param(a, &rng, QKV_SHAPE(4, 5));
    int32_t targets[4] = {IGNORE, IGNORE, IGNORE, IGNORE};
    qkv_tensor *loss = qkv_cross_entropy(a, x, targets, IGNORE);
    ck_assert_qkv(loss);
    ck_assert(loss->data[0] == 0 && !signbit(loss->data[0]));
    ck_assert_int_eq(qkv_backward(a, loss), 0);
    for (size_t i = 0; i < x->size; i++)
        ck_assert_msg(x->grad[i] == 0 && !signbit(x->grad[i]), "grad %zu = %g", i, x->grad[i]);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_cross_entropy_bad_target_names_it)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_zeros(a, QKV_SHAPE(3, 5));
    int32_t targets[3] = {1, IGNORE, 5};
    ck_assert_ptr_null(qkv_cross_entropy(a, x, targets, IGNORE));
    const char *msg = qkv_last_error();
    ck_assert_msg(strstr(msg, "cross_entropy") && strstr(msg, "target 5") && strstr(msg, "row 2") &&
                      strstr(msg, "[0, 5)"),
                  "message: %s", msg);
    qkv_arena_free(&a);
}
END_TEST

/* Summing per-row losses in row order: bit-identical at any thread count. */
START_TEST(test_cross_entropy_same_at_any_thread_count)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 33);
    qkv_arena *a = qkv_arena_new(1 << 20);
    enum { N = 257, V = 33 };
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(N, V), 4, &rng);
    int32_t targets[N];
    for (int i = 0; i < N; i++)
        targets[i] = (int32_t)qkv_rng_below(&rng, V);
    int saved = omp_get_max_threads();
    omp_set_num_threads(1);
    qkv_tensor *l1 = qkv_cross_entropy(a, x, targets, IGNORE);
    omp_set_num_threads(3);
    qkv_tensor *l3 = qkv_cross_entropy(a, x, targets, IGNORE);
    omp_set_num_threads(saved);
    ck_assert_qkv(l1);
    ck_assert_qkv(l3);
    ck_assert(memcmp(l1->data, l3->data, sizeof(qkv_real)) == 0);
    qkv_arena_free(&a);
}
END_TEST

/* ---- attention ---- */

typedef struct attn_case {
    bool causal;
    const uint8_t *key_valid; /* (B, Tk) or NULL */
    qkv_real dropout;
} attn_case;

static qkv_tensor *f_attention(qkv_arena *a, qkv_tensor **in, void *ud)
{
    attn_case *c = ud;
    qkv_mask mask = {c->causal, c->key_valid};
    qkv_rng rng; /* the same dropout mask at every call */
    qkv_rng_seed(&rng, 99);
    return qkv_attention(a, in[0], in[1], in[2], c->causal || c->key_valid ? &mask : NULL,
                         c->dropout, &rng, NULL);
}

/* Gradcheck attention on random q (B,...,Tq,d), k and v (B,...,Tk,d). */
static void check_attention(qkv_rng *rng, int ndim, const int *lead, int tq, int tk, int d,
                            attn_case *c, const char *what)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    int qs[4], ks[4];
    for (int i = 0; i < ndim - 2; i++)
        qs[i] = ks[i] = lead[i];
    qs[ndim - 2] = tq, ks[ndim - 2] = tk, qs[ndim - 1] = ks[ndim - 1] = d;
    qkv_tensor *in[3] = {param(a, rng, ndim, qs), param(a, rng, ndim, ks), param(a, rng, ndim, ks)};
    double err = gradcheck(f_attention, 3, in, c);
    ck_assert_msg(err <= GRADCHECK_TOL, "%s: error %g", what, err);
    qkv_arena_free(&a);
}

START_TEST(test_attention_grad_no_mask)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 41);
    for (int trial = 0; trial < 3; trial++) {
        int lead[1] = {1 + (int)qkv_rng_below(&rng, 2)};
        int tq = 1 + (int)qkv_rng_below(&rng, 4), tk = 1 + (int)qkv_rng_below(&rng, 4);
        int d = 1 + (int)qkv_rng_below(&rng, 4);
        attn_case c = {0};
        check_attention(&rng, 3, lead, tq, tk, d, &c, "no mask");
    }
}
END_TEST

START_TEST(test_attention_grad_causal)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 42);
    attn_case c = {.causal = true};
    check_attention(&rng, 3, (int[]){2}, 4, 4, 3, &c, "causal Tq == Tk");
    check_attention(&rng, 3, (int[]){2}, 2, 5, 3, &c, "causal Tq < Tk (earlier context)");
    /* More queries than one block of the causal core. */
    check_attention(&rng, 3, (int[]){1}, 37, 37, 2, &c, "causal, two query blocks");
    check_attention(&rng, 3, (int[]){1}, 35, 40, 2, &c, "causal, two blocks, Tq < Tk");
}
END_TEST

START_TEST(test_attention_grad_key_padding_cross)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 43);
    /* Batch entry 1 pads its last two keys; Tq != Tk as in cross-attention. */
    static const uint8_t valid[2 * 5] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
    attn_case c = {.key_valid = valid};
    check_attention(&rng, 3, (int[]){2}, 3, 5, 2, &c, "key padding, Tq 3, Tk 5");
    c.causal = true;
    check_attention(&rng, 3, (int[]){2}, 3, 5, 2, &c, "key padding and causal");
}
END_TEST

START_TEST(test_attention_grad_heads)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 44);
    static const uint8_t valid[2 * 4] = {1, 1, 0, 1, 1, 1, 1, 0};
    attn_case c = {.causal = true, .key_valid = valid};
    check_attention(&rng, 4, (int[]){2, 3}, 4, 4, 2, &c, "(B,H,T,d) causal + padding");
}
END_TEST

START_TEST(test_attention_grad_dropout)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 45);
    attn_case c = {.causal = true, .dropout = 0.3};
    check_attention(&rng, 4, (int[]){2, 2}, 4, 4, 3, &c, "dropout 0.3");
}
END_TEST

/* One tensor as query, key, value and residual: every gradient term must
 * add into the same buffer, none overwrite it. */
static qkv_tensor *f_self_attention_residual(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    qkv_mask causal = {.causal = true};
    return qkv_add(a, qkv_attention(a, in[0], in[0], in[0], &causal, 0, NULL, NULL), in[0]);
}

START_TEST(test_attention_grad_accumulates)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 46);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = param(a, &rng, QKV_SHAPE(2, 4, 3));
    double err = gradcheck(f_self_attention_residual, 1, &x, NULL);
    ck_assert_msg(err <= GRADCHECK_TOL, "error %g", err);
    qkv_arena_free(&a);
}
END_TEST

/* Heads side by side: q (B,Tq,H·d), k and v (B,Tk,H·d); the case's mask and dropout. */
static qkv_tensor *f_attention_heads(qkv_arena *a, qkv_tensor **in, void *ud)
{
    attn_case *c = ud;
    qkv_mask mask = {c->causal, c->key_valid};
    qkv_rng rng;
    qkv_rng_seed(&rng, 99);
    return qkv_attention_heads(a, in[0], in[1], in[2], 3, &mask, c->dropout, &rng, NULL);
}

START_TEST(test_attention_heads_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 47);
    static const uint8_t valid[2 * 5] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0};
    attn_case cases[] = {{.causal = true}, {.causal = true, .key_valid = valid, .dropout = 0.3}};
    for (int i = 0; i < 2; i++) {
        qkv_arena *a = qkv_arena_new(1 << 16);
        /* 3 heads of size 2; Tq 4 < Tk 5 (a causal query sees an earlier context). */
        qkv_tensor *in[3] = {param(a, &rng, QKV_SHAPE(2, 4, 6)), param(a, &rng, QKV_SHAPE(2, 5, 6)),
                             param(a, &rng, QKV_SHAPE(2, 5, 6))};
        double err = gradcheck(f_attention_heads, 3, in, &cases[i]);
        ck_assert_msg(err <= GRADCHECK_TOL, "case %d: error %g", i, err);
        qkv_arena_free(&a);
    }
}
END_TEST

static Suite *fused_suite(void)
{
    Suite *s = suite_create("grad_fused");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_layernorm_grad);
    tcase_add_test(tc, test_layernorm_forward_values);
    tcase_add_test(tc, test_layernorm_grads_same_at_any_thread_count);
    tcase_add_test(tc, test_softmax_grad);
    tcase_add_test(tc, test_cross_entropy_grad_with_ignored_rows);
    tcase_add_test(tc, test_cross_entropy_value);
    tcase_add_test(tc, test_cross_entropy_all_ignored_is_zero);
    tcase_add_test(tc, test_cross_entropy_bad_target_names_it);
    tcase_add_test(tc, test_cross_entropy_same_at_any_thread_count);
    tcase_add_test(tc, test_attention_grad_no_mask);
    tcase_add_test(tc, test_attention_grad_causal);
    tcase_add_test(tc, test_attention_grad_key_padding_cross);
    tcase_add_test(tc, test_attention_grad_heads);
    tcase_add_test(tc, test_attention_grad_dropout);
    tcase_add_test(tc, test_attention_grad_accumulates);
    tcase_add_test(tc, test_attention_heads_grad);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(fused_suite)
