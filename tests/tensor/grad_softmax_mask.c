/* The softmax and its masks (double build): what attention relies on.
 *
 * "Exactly zero" below means the bit pattern of +0.0 (compared with memcmp):
 * masked weights are written as 0, and their gradient is y·(…) = ±0 added
 * into a zeroed buffer, which gives +0. A -0.0 or a denormal would fail. */
#include "gradcheck.h"
#include "testing.h"

static bool is_plus_zero(qkv_real v)
{
    const qkv_real zero = 0;
    return memcmp(&v, &zero, sizeof v) == 0;
}

static size_t rows_of(const qkv_tensor *t) { return t->size / (size_t)t->shape[t->ndim - 1]; }

static qkv_tensor *copy_of(qkv_arena *a, const qkv_tensor *t)
{
    return qkv_from_array(a, t->ndim, t->shape, t->data);
}

/* May query i of tq (batch entry b) use key j of tk? Written out from the
 * mask's definition, independently of the library. */
static bool visible(const qkv_mask *m, int b, int i, int j, int tq, int tk)
{
    if (m && m->causal && j > i + (tk - tq))
        return false;
    return !(m && m->key_valid && !m->key_valid[b * tk + j]);
}

/* Scores x (B, ..., Tq, Tk) as rows: batch entry, query index and key count of row r. */
typedef struct { int batch, per_batch, tq, tk; size_t rows; } geometry;

static geometry geometry_of(const qkv_tensor *x)
{
    geometry g = {x->shape[0], 0, x->ndim >= 2 ? x->shape[x->ndim - 2] : 1, x->shape[x->ndim - 1],
                  x->size / (size_t)x->shape[x->ndim - 1]};
    g.per_batch = (int)(g.rows / (size_t)g.batch);
    return g;
}

/* The worst |y - softmax(scale·x + mask)| over all values, the reference
 * computed directly from the formula in each row. */
static double worst_error(const qkv_tensor *y, const qkv_tensor *x, const qkv_mask *m, double scale)
{
    geometry g = geometry_of(x);
    double worst = 0;
    for (size_t r = 0; r < g.rows; r++) {
        int b = (int)(r / (size_t)g.per_batch), i = (int)(r % (size_t)g.tq);
        const qkv_real *xr = x->data + r * g.tk;
        double max = -INFINITY, sum = 0;
        for (int j = 0; j < g.tk; j++)
            if (visible(m, b, i, j, g.tq, g.tk))
                max = fmax(max, scale * xr[j]);
        for (int j = 0; j < g.tk; j++)
            if (visible(m, b, i, j, g.tq, g.tk))
                sum += exp(scale * xr[j] - max);
        for (int j = 0; j < g.tk; j++) {
            double want = visible(m, b, i, j, g.tq, g.tk) && sum > 0 ? exp(scale * xr[j] - max) / sum : 0;
            worst = fmax(worst, fabs(y->data[r * g.tk + j] - want));
        }
    }
    return worst;
}

/* y = softmax_masked(x), then backward of Σ y ⊙ R for random R: x->grad is set. */
static qkv_tensor *forward_backward(qkv_arena *a, qkv_tensor *x, const qkv_mask *m, qkv_real scale)
{
    qkv_set_requires_grad(x, true);
    qkv_tensor *y = qkv_softmax_masked(a, x, m, scale);
    ck_assert_qkv(y);
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    qkv_tensor *r = qkv_randn(a, y->ndim, y->shape, 1, &rng);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, y, r))), 0);
    return y;
}

/* Padding masks for B = 2 batch entries of Tk = 6 keys: entry 0 pads its
 * last two keys, entry 1 pads keys 1 and 4. Key 0 is always real. */
static const uint8_t valid_b2_t6[2 * 6] = {1, 1, 1, 1, 0, 0, 1, 0, 1, 1, 0, 1};

START_TEST(test_rows_sum_to_one)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_mask masks[4] = {{false, NULL}, {true, NULL}, {false, valid_b2_t6}, {true, valid_b2_t6}};
    for (int k = 0; k < 4; k++) {
        qkv_tensor *x = qkv_randn(a, QKV_SHAPE(2, 3, 4, 6), 3, &rng); /* (B,H,Tq,Tk) */
        qkv_tensor *y = qkv_softmax_masked(a, x, &masks[k], 0.7);
        ck_assert_qkv(y);
        for (size_t r = 0; r < rows_of(y); r++) {
            double s = 0;
            for (int j = 0; j < 6; j++)
                s += y->data[r * 6 + j];
            ck_assert_msg(fabs(s - 1) <= 1e-6, "mask %d row %zu sums to %.17g", k, r, s);
        }
        ck_assert_double_le(worst_error(y, x, &masks[k], 0.7), 1e-12);
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_masked_weights_and_grads_exactly_zero)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 2);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_mask m = {true, valid_b2_t6};
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(2, 2, 4, 6), 2, &rng);
    geometry g = geometry_of(x);
    int masked = 0;
    for (size_t r = 0; r < g.rows; r++) /* masked scores huge: they must still be ignored */
        for (int j = 0; j < g.tk; j++)
            if (!visible(&m, (int)(r / (size_t)g.per_batch), (int)(r % (size_t)g.tq), j, g.tq, g.tk))
                x->data[r * g.tk + j] = 1e4 * (j % 2 ? 1 : -1);
    qkv_tensor *y = forward_backward(a, x, &m, 0.5);
    for (size_t r = 0; r < g.rows; r++)
        for (int j = 0; j < g.tk; j++) {
            if (visible(&m, (int)(r / (size_t)g.per_batch), (int)(r % (size_t)g.tq), j, g.tq, g.tk))
                continue;
            masked++;
            size_t at = r * g.tk + j;
            ck_assert_msg(is_plus_zero(y->data[at]), "weight row %zu key %d = %g", r, j, y->data[at]);
            ck_assert_msg(is_plus_zero(x->grad[at]), "grad row %zu key %d = %g", r, j, x->grad[at]);
        }
    ck_assert_int_gt(masked, 0);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_adding_a_constant_to_a_row_changes_nothing)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 3);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_mask m = {true, valid_b2_t6};
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(2, 5, 6), 2, &rng), *shifted = copy_of(a, x);
    for (size_t r = 0; r < rows_of(x); r++)
        for (int j = 0; j < 6; j++)
            shifted->data[r * 6 + j] += (r % 2 ? -1000.0 : 37.5) * (double)(r + 1);
    qkv_tensor *y = qkv_softmax_masked(a, x, &m, 1), *ys = qkv_softmax_masked(a, shifted, &m, 1);
    ck_assert_qkv(y);
    ck_assert_qkv(ys);
    qkv_test_assert_close(ys, y->data, 1e-10);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_extreme_scores_stay_finite)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    const qkv_real inf = INFINITY;
    /* (2 batch, 3 queries, 4 keys): huge, tiny and -inf scores, one row all -inf */
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(2, 3, 4),
                                   (qkv_real[]){1e4, -1e4, 0, 1e4,     -inf, 1e4, -1e4, -inf,
                                                -1e4, -1e4, -1e4, -1e4, 1e4, 1e4, 1e4, -inf,
                                                -inf, -inf, -inf, -inf, 5, -inf, -1e4, 1e4});
    static const uint8_t valid[2 * 4] = {1, 1, 1, 1, 1, 1, 1, 0};
    qkv_mask masks[3] = {{false, NULL}, {true, NULL}, {true, valid}};
    for (int k = 0; k < 3; k++) {
        qkv_tensor *xk = copy_of(a, x);
        qkv_tensor *y = forward_backward(a, xk, &masks[k], 1);
        for (size_t i = 0; i < y->size; i++) {
            ck_assert_msg(isfinite(y->data[i]), "mask %d: weight %zu = %g", k, i, y->data[i]);
            ck_assert_msg(isfinite(xk->grad[i]), "mask %d: grad %zu = %g", k, i, xk->grad[i]);
        }
        ck_assert_double_le(worst_error(y, xk, &masks[k], 1), 1e-12);
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_fully_masked_row_gives_zeros)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 5);
    qkv_arena *a = qkv_arena_new(1 << 16);
    /* Batch entry 1 has no real key at all. (A causal mask with Tq 4 > Tk 3
     * would leave query 0 with no key too: that is refused as a misuse.) */
    static const uint8_t valid[2 * 3] = {1, 1, 1, 0, 0, 0};
    qkv_mask m = {true, valid};
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(2, 4, 3), 1, &rng);
    ck_assert_ptr_null(qkv_softmax_masked(a, x, &m, 1));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "Tq 4 queries and Tk 3 keys"));
    m.causal = false;
    qkv_tensor *y = forward_backward(a, x, &m, 1);
    for (size_t r = 0; r < 8; r++) {
        bool empty = r >= 4;
        for (int j = 0; j < 3; j++) {
            size_t at = r * 3 + j;
            if (empty) {
                ck_assert_msg(is_plus_zero(y->data[at]), "row %zu: weight %g", r, y->data[at]);
                ck_assert_msg(is_plus_zero(x->grad[at]), "row %zu: grad %g", r, x->grad[at]);
            }
            ck_assert(isfinite(y->data[at]) && isfinite(x->grad[at]));
        }
    }
    qkv_arena_free(&a);
}
END_TEST

typedef struct { qkv_mask mask; qkv_real scale; } masked_case;

static qkv_tensor *f_masked(qkv_arena *a, qkv_tensor **in, void *ud)
{
    masked_case *c = ud;
    return qkv_softmax_masked(a, in[0], &c->mask, c->scale);
}

static void gradcheck_masked(int ndim, const int *shape, masked_case *c, const char *what)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 6);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_randn(a, ndim, shape, 1, &rng);
    qkv_set_requires_grad(x, true);
    double err = gradcheck(f_masked, 1, &x, c);
    ck_assert_msg(err <= GRADCHECK_TOL, "%s: error %g", what, err);
    qkv_arena_free(&a);
}

START_TEST(test_gradcheck_causal)
{
    masked_case c = {{true, NULL}, 0.5};
    gradcheck_masked(3, (int[]){2, 4, 4}, &c, "causal Tq == Tk");
    gradcheck_masked(4, (int[]){2, 2, 3, 5}, &c, "causal Tq < Tk");
}
END_TEST

START_TEST(test_gradcheck_padding)
{
    masked_case c = {{false, valid_b2_t6}, 1.3};
    gradcheck_masked(3, (int[]){2, 3, 6}, &c, "padding (B,Tq,Tk)");
    gradcheck_masked(4, (int[]){2, 3, 2, 6}, &c, "padding (B,H,Tq,Tk)");
    c.mask.causal = true;
    gradcheck_masked(4, (int[]){2, 2, 4, 6}, &c, "padding and causal");
}
END_TEST

/* On a non-square input the rows sum to 1 and the columns do not: a softmax
 * taken down the columns would do the opposite. */
START_TEST(test_softmax_is_over_the_last_axis)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 8);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(3, 5), 2, &rng);
    qkv_tensor *ys[2] = {qkv_softmax(a, x), qkv_softmax_masked(a, x, NULL, 1)};
    for (int k = 0; k < 2; k++) {
        qkv_tensor *y = ys[k];
        ck_assert_qkv(y);
        ck_assert_double_le(worst_error(y, x, NULL, 1), 1e-12);
        for (int i = 0; i < 3; i++) {
            double s = 0;
            for (int j = 0; j < 5; j++)
                s += y->data[i * 5 + j];
            ck_assert_double_eq_tol(s, 1, 1e-12);
        }
        double worst_column = 0;
        for (int j = 0; j < 5; j++) {
            double s = 0;
            for (int i = 0; i < 3; i++)
                s += y->data[i * 5 + j];
            worst_column = fmax(worst_column, fabs(s - 1));
        }
        ck_assert_double_gt(worst_column, 0.1);
    }
    qkv_arena_free(&a);
}
END_TEST

/* With Tk > Tq the extra keys are earlier context: query i sees keys
 * j <= i + (Tk - Tq), so the last query sees every key. */
START_TEST(test_causal_with_more_keys_than_queries)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_zeros(a, QKV_SHAPE(1, 2, 5));
    qkv_mask m = {.causal = true};
    qkv_tensor *y = qkv_softmax_masked(a, x, &m, 1);
    ck_assert_qkv(y);
    qkv_real want[10] = {0.25, 0.25, 0.25, 0.25, 0, 0.2, 0.2, 0.2, 0.2, 0.2};
    qkv_test_assert_close(y, want, 1e-15);
    ck_assert(is_plus_zero(y->data[4]));
    qkv_arena_free(&a);
}
END_TEST

/* scale multiplies the scores before the softmax: softmax_masked(x, s) = softmax(s·x). */
START_TEST(test_scale_multiplies_scores)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 9);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(4, 7), 1, &rng);
    qkv_tensor *y = qkv_softmax_masked(a, x, NULL, 2.5), *z = qkv_softmax(a, qkv_scale(a, x, 2.5));
    ck_assert_qkv(y);
    ck_assert_qkv(z);
    qkv_test_assert_close(y, z->data, 1e-15);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_mask_needs_matching_dims)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_mask padding = {false, valid_b2_t6}, causal = {true, NULL};
    ck_assert_ptr_null(qkv_softmax_masked(a, qkv_zeros(a, QKV_SHAPE(2, 6)), &padding, 1));
    const char *msg = qkv_last_error();
    ck_assert_msg(strstr(msg, "softmax_masked") && strstr(msg, "(2,6)"), "message: %s", msg);
    ck_assert_ptr_null(qkv_softmax_masked(a, qkv_zeros(a, QKV_SHAPE(6)), &causal, 1));
    msg = qkv_last_error();
    ck_assert_msg(strstr(msg, "causal") && strstr(msg, "(6)"), "message: %s", msg);
    qkv_arena_free(&a);
}
END_TEST

static Suite *softmax_mask_suite(void)
{
    Suite *s = suite_create("grad_softmax_mask");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60); /* gradchecks on a shared, loaded machine */
    tcase_add_test(tc, test_rows_sum_to_one);
    tcase_add_test(tc, test_masked_weights_and_grads_exactly_zero);
    tcase_add_test(tc, test_adding_a_constant_to_a_row_changes_nothing);
    tcase_add_test(tc, test_extreme_scores_stay_finite);
    tcase_add_test(tc, test_fully_masked_row_gives_zeros);
    tcase_add_test(tc, test_gradcheck_causal);
    tcase_add_test(tc, test_gradcheck_padding);
    tcase_add_test(tc, test_softmax_is_over_the_last_axis);
    tcase_add_test(tc, test_causal_with_more_keys_than_queries);
    tcase_add_test(tc, test_scale_multiplies_scores);
    tcase_add_test(tc, test_mask_needs_matching_dims);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(softmax_mask_suite)
