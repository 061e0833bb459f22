/* The classic mistakes of the modern options (RoPE, RMSNorm, ReLU², QK-norm,
 * the untied head), as test_attention_core.c has them for attention: each
 * test is one fact of the definition that a plausible wrong implementation
 * breaks, checked through the public API without a reference model. */
#include "testing.h"

#include <stdlib.h>

static double dot_head(const qkv_real *x, const qkv_real *y, int d)
{
    double s = 0;
    for (int c = 0; c < d; c++)
        s += (double)x[c] * y[c];
    return s;
}

/* ---- RoPE ---- */

/* The pairs are adjacent, (2i, 2i+1): a vector with only coordinates 2 and
 * 3 of a head set stays in them (a half-split rotation would move them to
 * d/2 + 1 and 1), turned by the angle pos·10000^(−2/d). */
START_TEST(test_rope_turns_adjacent_pairs)
{
    qkv_test_env f = qkv_test_env_new(1);
    enum { D = 8, POS = 5 };
    qkv_tensor *x = qkv_zeros(f.a, QKV_SHAPE(1, POS + 1, D));
    x->data[POS * D + 2] = 1, x->data[POS * D + 3] = 2;
    qkv_tensor *y = qkv_rope(f.a, x, 1, 0);
    ck_assert_qkv(y);
    const qkv_real *row = y->data + POS * D;
    double angle = POS * pow(10000.0, -2.0 / D);
    for (int c = 0; c < D; c++)
        if (c != 2 && c != 3)
            ck_assert_msg(row[c] == 0, "coordinate %d became %g: not a pair (2, 3) rotation", c,
                          (double)row[c]);
    ck_assert_double_eq_tol(row[2], cos(angle) - 2 * sin(angle), 1e-6);
    ck_assert_double_eq_tol(row[3], sin(angle) + 2 * cos(angle), 1e-6);
    qkv_arena_free(&f.a);
}
END_TEST

/* The angles' base is 10000: pair i of the last head's vector at position 1
 * turns by exactly 10000^(−2i/d); the base 1000 or 10^5 would turn it by
 * another angle. And position 0 is the identity. */
START_TEST(test_rope_frequencies)
{
    qkv_test_env f = qkv_test_env_new(2);
    enum { D = 16 };
    qkv_tensor *x = qkv_zeros(f.a, QKV_SHAPE(1, 2, D));
    for (int i = 0; i < D / 2; i++)
        x->data[i * 2] = x->data[D + i * 2] = 1; /* (1, 0) in every pair, positions 0 and 1 */
    qkv_tensor *y = qkv_rope(f.a, x, 1, 0);
    ck_assert_qkv(y);
    for (int i = 0; i < D / 2; i++) {
        ck_assert(y->data[2 * i] == 1 && y->data[2 * i + 1] == 0);
        double got = atan2(y->data[D + 2 * i + 1], y->data[D + 2 * i]);
        ck_assert_msg(fabs(got - pow(10000.0, -2.0 * i / D)) < 1e-6,
                      "pair %d at position 1 turned by %.9g, want 10000^(-%d/%d)", i, got, 2 * i, D);
    }
    qkv_arena_free(&f.a);
}
END_TEST

/* A query at p and a key at s meet as one rotation by p − s: moving both by
 * the same offset (pos0) leaves their dot product unchanged. */
START_TEST(test_rope_scores_depend_on_distance_only)
{
    qkv_test_env f = qkv_test_env_new(3);
    enum { T = 6, H = 2, D = 8, C = H * D };
    qkv_tensor *q = qkv_randn(f.a, QKV_SHAPE(1, T, C), 1, &f.rng);
    qkv_tensor *k = qkv_randn(f.a, QKV_SHAPE(1, T, C), 1, &f.rng);
    qkv_tensor *q0 = qkv_rope(f.a, q, H, 0), *k0 = qkv_rope(f.a, k, H, 0);
    qkv_tensor *q9 = qkv_rope(f.a, q, H, 9), *k9 = qkv_rope(f.a, k, H, 9);
    ck_assert(q0 && k0 && q9 && k9);
    double moved = 0;
    for (int t = 0; t < T; t++)
        for (int s = 0; s < T; s++)
            for (int h = 0; h < H; h++) {
                size_t at = (size_t)t * C + h * D, bs = (size_t)s * C + h * D;
                double d0 = dot_head(q0->data + at, k0->data + bs, D);
                double d9 = dot_head(q9->data + at, k9->data + bs, D);
                ck_assert_msg(fabs(d0 - d9) < 1e-4, "q%d·k%d head %d: %g at offset 0, %g at 9", t,
                              s, h, d0, d9);
                moved = fmax(moved, fabs(q0->data[at] - q9->data[at]));
            }
    ck_assert_double_gt(moved, 0.1); /* the vectors themselves did turn */
    qkv_arena_free(&f.a);
}
END_TEST

/* A self-attention module with rope and every position holding the same
 * input: its scores see only the distance t − s, so the log-ratio of the
 * weights of keys t − j and t is the same for every query t, and not 0 (the
 * distance matters). Rotating only the keys makes it depend on t; only the
 * queries, every key of a row weighs the same. And the values are not
 * turned: all equal, every output row is the same. */
START_TEST(test_rope_in_self_attention_rotates_q_and_k)
{
    qkv_test_env f = qkv_test_env_new(4);
    enum { T = 7, C = 8, H = 2 };
    qkv_block_config cfg = {.n_embd = C, .n_head = H, .opts.rope = true};
    qkv_params *p = qkv_params_new();
    qkv_self_attn m;
    ck_assert_int_eq(qkv_self_attn_init(&m, p, "attn", &cfg, true), 0);
    ck_assert_int_eq(qkv_params_alloc(p, &f.rng), 0);
    for (size_t i = 0; i < p->total; i++)
        p->data[i] = (qkv_real)qkv_rng_normal(&f.rng);
    qkv_tensor *x = qkv_tensor_new(f.a, QKV_SHAPE(1, T, C)), *w = NULL;
    for (int t = 0; t < T; t++)
        for (int c = 0; c < C; c++)
            x->data[t * C + c] = (qkv_real)(0.3 * (c + 1));
    qkv_ctx ctx = {.arena = f.a};
    qkv_tensor *y = qkv_self_attn_forward(&m, &ctx, x, NULL, &w);
    ck_assert_qkv(y);
    double distance_matters = 0;
    for (int h = 0; h < H; h++)
        for (int j = 1; j < T; j++) {
            const qkv_real *first = w->data + ((size_t)h * T + j) * T;
            double want = log(first[0] / first[j]);
            distance_matters = fmax(distance_matters, fabs(want));
            for (int t = j + 1; t < T; t++) {
                const qkv_real *row = w->data + ((size_t)h * T + t) * T;
                double got = log(row[t - j] / row[t]);
                ck_assert_msg(fabs(got - want) < 1e-3,
                              "head %d, distance %d: log-ratio %g at query %d, %g at query %d", h,
                              j, got, t, want, j);
            }
        }
    ck_assert_double_gt(distance_matters, 0.01);
    for (int t = 1; t < T; t++)
        for (int c = 0; c < C; c++)
            ck_assert_msg(fabs(y->data[t * C + c] - y->data[c]) < 1e-5,
                          "output %d differs from output 0 at %d: the values were turned", t, c);
    qkv_params_free(&p);
    qkv_arena_free(&f.a);
}
END_TEST

/* ---- RMSNorm ---- */

/* No mean is subtracted: a constant row c is c/sqrt(c² + eps), nearly 1
 * (LayerNorm would make it 0); and the eps is inside the root: a row of
 * 1e-3 becomes 1e-3/sqrt(1e-6 + 1e-5) = 0.3015, not 1. */
START_TEST(test_rmsnorm_keeps_the_mean_and_its_eps)
{
    qkv_test_env f = qkv_test_env_new(5);
    enum { C = 6 };
    qkv_tensor *x = qkv_tensor_new(f.a, QKV_SHAPE(2, C));
    for (int j = 0; j < C; j++)
        x->data[j] = 3, x->data[C + j] = (qkv_real)1e-3;
    qkv_tensor *y = qkv_rmsnorm(f.a, x, NULL, (qkv_real)1e-5);
    ck_assert_qkv(y);
    for (int j = 0; j < C; j++) {
        ck_assert_double_eq_tol(y->data[j], 3 / sqrt(9 + 1e-5), 1e-6);
        ck_assert_double_eq_tol(y->data[C + j], 1e-3 / sqrt(1e-6 + 1e-5), 1e-6);
    }
    qkv_arena_free(&f.a);
}
END_TEST

/* The root mean square, not the root of the sum: without a scale every row
 * comes out with mean(y²) = mean(x²)/(mean(x²) + eps), all but 1; with a
 * scale w, y is that times w. */
START_TEST(test_rmsnorm_unit_rms_then_scale)
{
    qkv_test_env f = qkv_test_env_new(6);
    enum { R = 5, C = 16 };
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(R, C), 3, &f.rng);
    qkv_tensor *w = qkv_randn(f.a, QKV_SHAPE(C), 1, &f.rng);
    qkv_tensor *y = qkv_rmsnorm(f.a, x, NULL, (qkv_real)1e-5);
    qkv_tensor *yw = qkv_rmsnorm(f.a, x, w, (qkv_real)1e-5);
    ck_assert(y && yw);
    for (int r = 0; r < R; r++) {
        double ms = 0;
        for (int j = 0; j < C; j++)
            ms += (double)y->data[r * C + j] * y->data[r * C + j] / C;
        ck_assert_msg(fabs(ms - 1) < 1e-4, "row %d: mean square %g after RMSNorm", r, ms);
        for (int j = 0; j < C; j++)
            ck_assert_double_eq_tol(yw->data[r * C + j], y->data[r * C + j] * w->data[j], 1e-5);
    }
    qkv_arena_free(&f.a);
}
END_TEST

/* ---- ReLU² ---- */

/* max(x, 0)², and its derivative 2·max(x, 0): at 3 the value 9 and the
 * slope 6 (a plain ReLU gives 3 and 1; forgetting the 2 gives slope 3). */
START_TEST(test_relu2_squares_and_doubles)
{
    qkv_test_env f = qkv_test_env_new(7);
    const qkv_real xs[4] = {3, -2, 0.5, 0};
    qkv_tensor *x = qkv_from_array(f.a, QKV_SHAPE(4), xs);
    qkv_set_requires_grad(x, true);
    qkv_tensor *y = qkv_relu2(f.a, x);
    ck_assert_qkv(y);
    const double value[4] = {9, 0, 0.25, 0}, slope[4] = {6, 0, 1, 0};
    ck_assert_int_eq(qkv_backward(f.a, qkv_sum(f.a, y)), 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_msg(y->data[i] == value[i], "relu2(%g) = %g, want %g", (double)xs[i],
                      (double)y->data[i], value[i]);
        ck_assert_msg(x->grad[i] == slope[i], "relu2'(%g) = %g, want %g", (double)xs[i],
                      (double)x->grad[i], slope[i]);
    }
    qkv_arena_free(&f.a);
}
END_TEST

/* ---- QK-norm ---- */

/* A self-attention with qk_norm, its weights for input x; q_norm and k_norm's
 * scales set to gq and gk (every coordinate). */
static qkv_tensor *qk_norm_weights(qkv_test_env *f, qkv_tensor *x, double gq, double gk, int head,
                                   double head_factor)
{
    enum { C = 8, H = 2, D = C / H };
    qkv_block_config cfg = {.n_embd = C, .n_head = H, .opts.qk_norm = true};
    qkv_params *p = qkv_params_new();
    qkv_self_attn m;
    ck_assert_int_eq(qkv_self_attn_init(&m, p, "attn", &cfg, false), 0);
    qkv_rng init;
    qkv_rng_seed(&init, 99); /* the same projections at every call */
    ck_assert_int_eq(qkv_params_alloc(p, &init), 0);
    for (int i = 0; i < 3 * C * C; i++)
        m.c_attn.weight->data[i] = (qkv_real)qkv_rng_normal(&init);
    for (int c = 0; c < D; c++)
        m.q_norm.weight->data[c] = (qkv_real)gq, m.k_norm.weight->data[c] = (qkv_real)gk;
    /* head_factor scales one head's query rows of W_Q: per-head RMS undoes it. */
    for (int r = head * D; r < (head + 1) * D; r++)
        for (int c = 0; c < C; c++)
            m.c_attn.weight->data[r * C + c] *= (qkv_real)head_factor;
    qkv_ctx ctx = {.arena = f->a};
    qkv_tensor *w = NULL;
    ck_assert_qkv(qkv_self_attn_forward(&m, &ctx, x, NULL, &w));
    qkv_params_free(&p);
    return w;
}

/* The scores are q̂·k̂/√d with q̂ = g_q ⊙ q/rms(q), k̂ = g_k ⊙ k/rms(k): with
 * uniform scales every log-ratio of weights scales by g_q·g_k. So q's scale
 * g and k's scale g each multiply them by g: a QK-norm without its scale,
 * or with k normalised by q's scale, changes nothing in one of the two. */
START_TEST(test_qk_norm_scales_q_and_k_each)
{
    qkv_test_env f = qkv_test_env_new(8);
    enum { T = 5, C = 8, H = 2 };
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(1, T, C), 1, &f.rng);
    qkv_tensor *base = qk_norm_weights(&f, x, 1, 1, 0, 1);
    qkv_tensor *by_q = qk_norm_weights(&f, x, 2.5, 1, 0, 1);
    qkv_tensor *by_k = qk_norm_weights(&f, x, 1, 2.5, 0, 1);
    for (int r = 0; r < H * T; r++)
        for (int j = 1; j < T; j++) {
            const qkv_real *b = base->data + r * T, *wq = by_q->data + r * T, *wk = by_k->data + r * T;
            double want = 2.5 * log(b[j] / b[0]);
            ck_assert_msg(fabs(log(wq[j] / wq[0]) - want) < 1e-3,
                          "row %d key %d: q's scale 2.5 gives log-ratio %g, want %g", r, j,
                          log(wq[j] / wq[0]), want);
            ck_assert_msg(fabs(log(wk[j] / wk[0]) - want) < 1e-3,
                          "row %d key %d: k's scale 2.5 gives log-ratio %g, want %g", r, j,
                          log(wk[j] / wk[0]), want);
        }
    qkv_arena_free(&f.a);
}
END_TEST

/* Each head's q is normalised on its own: multiplying head 1's query
 * projection by 10 leaves every weight as it was (normalising all C
 * coordinates together would shift weight between the heads). */
START_TEST(test_qk_norm_per_head)
{
    qkv_test_env f = qkv_test_env_new(9);
    enum { T = 5, C = 8 };
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(1, T, C), 1, &f.rng);
    qkv_tensor *base = qk_norm_weights(&f, x, 1.5, 0.7, 1, 1);
    qkv_tensor *loud = qk_norm_weights(&f, x, 1.5, 0.7, 1, 10);
    for (size_t i = 0; i < base->size; i++)
        ck_assert_double_eq_tol(loud->data[i], base->data[i], 1e-5);
    qkv_arena_free(&f.a);
}
END_TEST

/* ---- the untied head ---- */

/* With untied, the logits are ln_f(x)·lm_headᵀ: a zero lm_head gives logits
 * exactly 0 (no bias) whatever wte holds; tied, the same model's logits
 * come from wte and are not 0; and an untied head holding a copy of wte
 * gives the tied model's logits (lm_head is declared last, so the same seed
 * draws the same other parameters). */
START_TEST(test_untied_head_reads_lm_head)
{
    qkv_test_env f = qkv_test_env_new(10);
    qkv_gpt_config cfg = {.vocab_size = 11, .block_size = 8, .n_layer = 1, .n_head = 2,
                          .n_embd = 8, .opts.untied = true};
    qkv_gpt *m = qkv_gpt_new(&cfg, 3);
    ck_assert_qkv(m);
    qkv_gpt *untied = m;
    memset(m->lm_head.weight->data, 0, m->lm_head.weight->size * sizeof(qkv_real));
    const int32_t ids[4] = {1, 5, 2, 9};
    qkv_ctx ctx = {.arena = f.a};
    qkv_tensor *logits = qkv_gpt_logits(m, &ctx, ids, 1, 4, NULL);
    ck_assert_qkv(logits);
    for (size_t i = 0; i < logits->size; i++)
        ck_assert_msg(logits->data[i] == 0, "logit %zu is %g with a zero lm_head", i,
                      (double)logits->data[i]);
    /* A parameter of its own, which the tied model does not have. */
    ck_assert_ptr_nonnull(qkv_params_find(m->params, "lm_head.weight"));
    cfg.opts.untied = false;
    m = qkv_gpt_new(&cfg, 3);
    ck_assert_qkv(m);
    ck_assert_ptr_null(qkv_params_find(m->params, "lm_head.weight"));
    logits = qkv_gpt_logits(m, &ctx, ids, 1, 4, NULL);
    ck_assert_qkv(logits);
    double most = 0;
    for (size_t i = 0; i < logits->size; i++)
        most = fmax(most, fabs(logits->data[i]));
    ck_assert_double_gt(most, 1e-3);
    memcpy(untied->lm_head.weight->data, m->wte.weight->data,
           m->wte.weight->size * sizeof(qkv_real));
    qkv_tensor *copied = qkv_gpt_logits(untied, &ctx, ids, 1, 4, NULL);
    ck_assert_qkv(copied);
    for (size_t i = 0; i < logits->size; i++)
        ck_assert_msg(fabs(copied->data[i] - logits->data[i]) < 1e-5,
                      "logit %zu: %g untied with lm_head = wte, %g tied", i,
                      (double)copied->data[i], (double)logits->data[i]);
    qkv_gpt_free(untied);
    qkv_gpt_free(m);
    qkv_arena_free(&f.a);
}
END_TEST

static Suite *option_mistakes_suite(void)
{
    Suite *s = suite_create("option_mistakes");
    TCase *tc = tcase_create("options");
    tcase_add_test(tc, test_rope_turns_adjacent_pairs);
    tcase_add_test(tc, test_rope_frequencies);
    tcase_add_test(tc, test_rope_scores_depend_on_distance_only);
    tcase_add_test(tc, test_rope_in_self_attention_rotates_q_and_k);
    tcase_add_test(tc, test_rmsnorm_keeps_the_mean_and_its_eps);
    tcase_add_test(tc, test_rmsnorm_unit_rms_then_scale);
    tcase_add_test(tc, test_relu2_squares_and_doubles);
    tcase_add_test(tc, test_qk_norm_scales_q_and_k_each);
    tcase_add_test(tc, test_qk_norm_per_head);
    tcase_add_test(tc, test_untied_head_reads_lm_head);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(option_mistakes_suite)
