/* The attention core, softmax(Q·Kᵀ/√d + mask)·V (float build), forward: a
 * worked example, causality, tests that catch the classic mistakes (no 1/√d,
 * keys and values swapped, softmax over the wrong axis, the mask after the
 * softmax), heads and their masks, dropout, and the weights of chosen rows.
 * The reference is tensor/attention_plain.c, the formula as plain loops (sums
 * in double), in the same precision as the fast core, so the comparisons
 * need only float tolerances. The gradients, tiles and threads are in
 * test_attention_backward.c. */
#include <omp.h>

#include "attention_tiles.h"
#include "tensor/attention_plain.h"
#include "testing.h"

/* The reference, qkv__attention_plain, over bh heads packed one after the
 * other: w (bh,tq,tk) and out (bh,tq,d) from q (bh,tq,d), k and v (bh,tk,d);
 * valid is (B, tk) with heads_per_batch heads per batch entry. */
static void reference(qkv_real *out, qkv_real *w, const qkv_real *q, const qkv_real *k,
                      const qkv_real *v, int bh, int tq, int tk, int d, bool causal,
                      const uint8_t *valid, int heads_per_batch)
{
    for (int h = 0; h < bh; h++)
        qkv__attention_plain(out + (size_t)h * tq * d, w + (size_t)h * tq * tk,
                             q + (size_t)h * tq * d, k + (size_t)h * tk * d, v + (size_t)h * tk * d,
                             tq, tk, d, causal, valid ? valid + (h / heads_per_batch) * tk : NULL);
}

static void assert_close(const qkv_tensor *t, const qkv_real *want, double tol, const char *what)
{
    for (size_t i = 0; i < t->size; i++)
        ck_assert_msg(fabs(t->data[i] - want[i]) <= tol, "%s value %zu: got %.9g, want %.9g", what,
                      i, (double)t->data[i], (double)want[i]);
}

static double max_abs_diff(const qkv_real *x, const qkv_real *y, size_t n)
{
    double m = 0;
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)x[i] - y[i]);
        if (e > m) /* not fmax: the aarch64 gcc 12 vectorizer crashes on fmax of floats here */
            m = e;
    }
    return m;
}

/* Weights w (B, ..., tq, tk): every row sums to 1 over the keys, the keys the
 * mask hides have weight exactly +0.0 (bits), and the others a positive weight. */
static void assert_weights_valid(const qkv_tensor *w, const qkv_mask *m, int tq, int tk)
{
    const qkv_real zero = 0;
    size_t rows = w->size / (size_t)tk, per_batch = rows / (size_t)w->shape[0];
    for (size_t r = 0; r < rows; r++) {
        int b = (int)(r / per_batch), i = (int)(r % (size_t)tq);
        double s = 0;
        for (int j = 0; j < tk; j++) {
            qkv_real wij = w->data[r * tk + j];
            bool hidden = (m && m->causal && j > i + tk - tq) ||
                          (m && m->key_valid && !m->key_valid[b * tk + j]);
            if (hidden)
                ck_assert_msg(memcmp(&wij, &zero, sizeof zero) == 0,
                              "row %zu: hidden key %d has weight %g", r, j, wij);
            else
                ck_assert_msg(wij > 0, "row %zu: visible key %d has weight %g", r, j, wij);
            s += wij;
        }
        ck_assert_msg(fabs(s - 1) <= 1e-6, "row %zu: weights sum to %.9g", r, s);
    }
}

/* Q = K = [[1,0],[0,1],[1,1]], V = [[1,2],[3,4],[5,6]], d = 2, no mask: a
 * batch of one sequence, (1, T, d). */
START_TEST(test_worked_example)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    const qkv_real qk[] = {1, 0, 0, 1, 1, 1}, vv[] = {1, 2, 3, 4, 5, 6};
    qkv_tensor *q = qkv_from_array(a, QKV_SHAPE(1, 3, 2), qk);
    qkv_tensor *k = qkv_from_array(a, QKV_SHAPE(1, 3, 2), qk);
    qkv_tensor *v = qkv_from_array(a, QKV_SHAPE(1, 3, 2), vv), *w = NULL;
    qkv_tensor *out = qkv_attention(a, q, k, v, NULL, 0, NULL, &w);
    ck_assert_qkv(out);
    ck_assert_ptr_nonnull(w);
    ck_assert_int_eq(w->ndim, 3);
    ck_assert_int_eq(w->shape[0], 1);
    ck_assert_int_eq(w->shape[1], 3);
    ck_assert_int_eq(w->shape[2], 3);
    qkv_real want_w[9], want_out[6];
    reference(want_out, want_w, qk, qk, vv, 1, 3, 3, 2, false, NULL, 1);
    assert_close(w, want_w, 1e-5, "weights");
    assert_close(out, want_out, 1e-5, "output");
    /* The same, as rounded by hand. */
    const qkv_real rounded_w[9] = {0.40, 0.20, 0.40, 0.20, 0.40, 0.40, 0.25, 0.25, 0.50};
    const qkv_real rounded_out[6] = {3.0, 4.0, 3.41, 4.41, 3.51, 4.51};
    assert_close(w, rounded_w, 1e-2, "rounded weights");
    assert_close(out, rounded_out, 1e-2, "rounded output");
    ck_assert(!w->requires_grad && w->node == NULL);
    qkv_arena_free(&a);
}
END_TEST

/* Random q (bh,tq,d), k and v (bh,tk,d) with a spread that makes the
 * softmax far from uniform, so every mistake below shows. */
typedef struct { qkv_tensor *q, *k, *v; } qkv3;

static qkv3 random_qkv(qkv_arena *a, qkv_rng *rng, int ndim, const int *lead, int tq, int tk, int d)
{
    int qs[4], ks[4];
    for (int i = 0; i < ndim - 2; i++)
        qs[i] = ks[i] = lead[i];
    qs[ndim - 2] = tq, ks[ndim - 2] = tk, qs[ndim - 1] = ks[ndim - 1] = d;
    return (qkv3){qkv_randn(a, ndim, qs, 1.5, rng), qkv_randn(a, ndim, ks, 1.5, rng),
                  qkv_randn(a, ndim, ks, 1.5, rng)};
}

/* Compare qkv_attention on random inputs with the reference; return the
 * reference's output, and the weights qkv_attention gave when asked. */
static qkv_real *check_against_reference(qkv_arena *a, qkv3 x, const qkv_mask *m,
                                       int heads_per_batch, const char *what, qkv_tensor **weights)
{
    int nd = x.q->ndim, tq = x.q->shape[nd - 2], tk = x.k->shape[nd - 2], d = x.q->shape[nd - 1];
    int bh = (int)(x.q->size / ((size_t)tq * d));
    qkv_tensor *w = NULL, *out = qkv_attention(a, x.q, x.k, x.v, m, 0, NULL, &w);
    ck_assert_qkv(out);
    qkv_real *want_w = qkv_arena_alloc(a, (size_t)bh * tq * tk * sizeof(qkv_real));
    qkv_real *want = qkv_arena_alloc(a, x.q->size * sizeof(qkv_real));
    reference(want, want_w, x.q->data, x.k->data, x.v->data, bh, tq, tk, d, m && m->causal,
              m ? m->key_valid : NULL, heads_per_batch);
    assert_close(w, want_w, 1e-5, what);
    assert_close(out, want, 1e-5, what);
    if (weights)
        *weights = w;
    return want;
}

START_TEST(test_causal_weights_lower_triangular)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    qkv_arena *a = qkv_arena_new(1 << 16);
    enum { B = 2, T = 5, D = 3 };
    qkv3 x = random_qkv(a, &rng, 3, (int[]){B}, T, T, D);
    qkv_mask causal = {.causal = true};
    qkv_tensor *w;
    check_against_reference(a, x, &causal, 1, "causal", &w);
    assert_weights_valid(w, &causal, T, T);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_causal_long_sequences_in_blocks)
{
    /* Longer than one block of queries (the core skips the masked triangle
     * block by block): Tq == Tk, and Tq < Tk (an earlier context), against
     * the reference. */
    static const int sizes[][2] = {{70, 70}, {40, 75}, {33, 33}, {32, 32}, {1, 33}};
    qkv_rng rng;
    qkv_rng_seed(&rng, 9);
    qkv_mask causal = {.causal = true};
    for (int i = 0; i < 5; i++) {
        qkv_arena *a = qkv_arena_new(1 << 20);
        int tq = sizes[i][0], tk = sizes[i][1];
        qkv3 x = random_qkv(a, &rng, 3, (int[]){2}, tq, tk, 4);
        qkv_tensor *w;
        check_against_reference(a, x, &causal, 1, "causal, long", &w);
        assert_weights_valid(w, &causal, tq, tk);
        qkv_arena_free(&a);
    }
}
END_TEST

/* Changing any key or value after position t leaves outputs 0..t bit-identical. */
START_TEST(test_causal_no_information_from_the_future)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 2);
    qkv_arena *a = qkv_arena_new(1 << 18);
    enum { B = 2, H = 2, T = 6, D = 4 };
    qkv3 x = random_qkv(a, &rng, 4, (int[]){B, H}, T, T, D);
    qkv_mask causal = {.causal = true};
    qkv_tensor *base = qkv_attention(a, x.q, x.k, x.v, &causal, 0, NULL, NULL);
    ck_assert_qkv(base);
    for (int t = 0; t < T - 1; t++) {
        qkv_tensor *k2 = qkv_from_array(a, 4, x.k->shape, x.k->data);
        qkv_tensor *v2 = qkv_from_array(a, 4, x.v->shape, x.v->data);
        for (int h = 0; h < B * H; h++)
            for (int j = t + 1; j < T; j++)
                for (int c = 0; c < D; c++) {
                    k2->data[(h * T + j) * D + c] = (qkv_real)(10 * qkv_rng_normal(&rng));
                    v2->data[(h * T + j) * D + c] = (qkv_real)(10 * qkv_rng_normal(&rng));
                }
        qkv_tensor *out = qkv_attention(a, x.q, k2, v2, &causal, 0, NULL, NULL);
        ck_assert_qkv(out);
        for (int h = 0; h < B * H; h++) {
            size_t first = (size_t)h * T * D, n = (size_t)(t + 1) * D;
            ck_assert_msg(memcmp(out->data + first, base->data + first, n * sizeof(qkv_real)) == 0,
                          "head %d: outputs 0..%d changed when later keys/values changed", h, t);
            /* ...and the later outputs do change, so the comparison has teeth. */
            ck_assert(memcmp(out->data + first + n, base->data + first + n, D * sizeof(qkv_real)));
        }
    }
    qkv_arena_free(&a);
}
END_TEST

/* Scores must be divided by √d: with d = 16 the unscaled softmax is far sharper. */
START_TEST(test_scores_scaled_by_sqrt_d)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 3);
    qkv_arena *a = qkv_arena_new(1 << 18);
    enum { T = 4, D = 16 };
    qkv3 x = random_qkv(a, &rng, 3, (const int[]){1}, T, T, D);
    qkv_real *want = check_against_reference(a, x, NULL, 1, "1/sqrt(d)", NULL);
    /* Without the 1/√d: the scores of queries √d times larger. */
    qkv_real unscaled[T * D], w[T * T], q_times_sqrt_d[T * D];
    for (int i = 0; i < T * D; i++)
        q_times_sqrt_d[i] = x.q->data[i] * (qkv_real)sqrt((double)D);
    reference(unscaled, w, q_times_sqrt_d, x.k->data, x.v->data, 1, T, T, D, false, NULL, 1);
    ck_assert_double_gt(max_abs_diff(want, unscaled, T * D), 0.1); /* the test can tell */
    qkv_arena_free(&a);
}
END_TEST

/* Keys are matched with queries and values are averaged, not the other way. */
START_TEST(test_keys_and_values_not_swapped)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 4);
    qkv_arena *a = qkv_arena_new(1 << 18);
    enum { TQ = 3, TK = 5, D = 4 };
    qkv3 x = random_qkv(a, &rng, 3, (const int[]){1}, TQ, TK, D);
    qkv_real *want = check_against_reference(a, x, NULL, 1, "keys vs values", NULL);
    qkv_real swapped[TQ * D], w[TQ * TK];
    reference(swapped, w, x.q->data, x.v->data, x.k->data, 1, TQ, TK, D, false, NULL, 1);
    ck_assert_double_gt(max_abs_diff(want, swapped, TQ * D), 0.1);
    qkv_arena_free(&a);
}
END_TEST

/* Each query's weights sum to 1 over the keys (Tq != Tk), not over the queries. */
START_TEST(test_softmax_over_keys)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 5);
    qkv_arena *a = qkv_arena_new(1 << 18);
    enum { B = 2, TQ = 3, TK = 5, D = 2 };
    qkv3 x = random_qkv(a, &rng, 3, (int[]){B}, TQ, TK, D);
    qkv_tensor *w;
    check_against_reference(a, x, NULL, 1, "softmax axis", &w);
    assert_weights_valid(w, NULL, TQ, TK);
    double worst_column = 0;
    for (int b = 0; b < B; b++)
        for (int j = 0; j < TK; j++) {
            double s = 0;
            for (int i = 0; i < TQ; i++)
                s += w->data[(b * TQ + i) * TK + j];
            worst_column = fmax(worst_column, fabs(s - 1));
        }
    ck_assert_double_gt(worst_column, 0.1);
    qkv_arena_free(&a);
}
END_TEST

/* A padding mask acts before the softmax: padded keys get weight exactly 0,
 * the real keys' weights still sum to 1 and equal softmax over real keys. */
START_TEST(test_mask_before_softmax)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 6);
    qkv_arena *a = qkv_arena_new(1 << 18);
    enum { B = 2, TQ = 3, TK = 5, D = 3 };
    static const uint8_t valid[B * TK] = {1, 1, 1, 0, 0, 1, 0, 1, 1, 1};
    qkv_mask m = {.key_valid = valid};
    qkv3 x = random_qkv(a, &rng, 3, (int[]){B}, TQ, TK, D);
    qkv_tensor *w;
    check_against_reference(a, x, &m, 1, "padding mask", &w);
    assert_weights_valid(w, &m, TQ, TK);
    qkv_arena_free(&a);
}
END_TEST

/* (B,H,T,d): every head of batch entry b uses key_valid row b. */
START_TEST(test_heads_share_their_batch_mask)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    qkv_arena *a = qkv_arena_new(1 << 18);
    enum { B = 2, H = 3, T = 4, D = 2 };
    static const uint8_t valid[B * T] = {1, 1, 1, 0, 1, 0, 1, 1};
    qkv_mask m = {true, valid};
    check_against_reference(a, random_qkv(a, &rng, 4, (int[]){B, H}, T, T, D), &m, H,
                            "(B,H,T,d) causal + padding", NULL);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_dropout_is_seeded_and_inverted)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 8);
    qkv_arena *a = qkv_arena_new(1 << 20);
    enum { BH = 4, T = 32, D = 4 };
    qkv3 x = random_qkv(a, &rng, 3, (int[]){BH}, T, T, D);
    qkv_rng r1, r2;
    qkv_rng_seed(&r1, 5);
    qkv_rng_seed(&r2, 5);
    qkv_tensor *w = NULL, *o1 = qkv_attention(a, x.q, x.k, x.v, NULL, 0.25f, &r1, &w);
    qkv_tensor *o2 = qkv_attention(a, x.q, x.k, x.v, NULL, 0.25f, &r2, NULL);
    qkv_tensor *plain = qkv_attention(a, x.q, x.k, x.v, NULL, 0, NULL, NULL);
    ck_assert_qkv(o1);
    ck_assert_qkv(o2);
    ck_assert_qkv(plain);
    ck_assert(memcmp(o1->data, o2->data, o1->size * sizeof(qkv_real)) == 0);
    ck_assert(memcmp(o1->data, plain->data, o1->size * sizeof(qkv_real)) != 0);
    /* Inverted dropout keeps the expectation: the mean output is close to the plain one. */
    double m1 = 0, mp = 0;
    for (size_t i = 0; i < o1->size; i++)
        m1 += o1->data[i], mp += plain->data[i];
    ck_assert_double_eq_tol(m1 / o1->size, mp / o1->size, 0.1);
    /* The returned weights are before dropout: rows sum to 1, none is zero. */
    assert_weights_valid(w, NULL, T, T);
    qkv_arena_free(&a);
}
END_TEST

/* (B,T,H·D) -> (B,H,T,D), the heads split out the textbook way. */
static qkv_tensor *split(qkv_arena *a, qkv_tensor *x, int H)
{
    int B = x->shape[0], T = x->shape[1], D = x->shape[2] / H;
    return qkv_permute(a, qkv_reshape(a, x, QKV_SHAPE(B, T, H, D)), (const int[]){0, 2, 1, 3});
}

START_TEST(test_heads_side_by_side_match_split_heads)
{
    /* qkv_attention_heads on (B,T,H·D) must give what splitting the heads,
     * qkv_attention and merging them back give: outputs, weights, and the
     * gradients of q, k and v, with a causal and a padding mask and dropout. */
    enum { B = 2, TQ = 5, TK = 7, H = 3, D = 4, C = H * D };
    static const uint8_t valid[B * TK] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0};
    qkv_mask m = {.causal = true, .key_valid = valid};
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_rng rng;
    qkv_rng_seed(&rng, 31);
    qkv_tensor *x[3] = {qkv_randn(a, QKV_SHAPE(B, TQ, C), 1.5, &rng),
                        qkv_randn(a, QKV_SHAPE(B, TK, C), 1.5, &rng),
                        qkv_randn(a, QKV_SHAPE(B, TK, C), 1.5, &rng)};
    qkv_tensor *r = qkv_randn(a, QKV_SHAPE(B, TQ, C), 1, &rng);
    qkv_real *grads[2][3];
    qkv_tensor *out[2], *w[2];
    for (int way = 0; way < 2; way++) {
        for (int i = 0; i < 3; i++) {
            x[i]->grad = NULL;
            qkv_set_requires_grad(x[i], true);
        }
        qkv_rng drop;
        qkv_rng_seed(&drop, 5);
        if (way == 0) {
            out[0] = qkv_attention_heads(a, x[0], x[1], x[2], H, &m, 0.2f, &drop, &w[0]);
        } else {
            qkv_tensor *o = qkv_attention(a, split(a, x[0], H), split(a, x[1], H),
                                          split(a, x[2], H), &m, 0.2f, &drop, &w[1]);
            out[1] = qkv_reshape(a, qkv_permute(a, o, (const int[]){0, 2, 1, 3}),
                                 QKV_SHAPE(B, TQ, C));
        }
        ck_assert_qkv(out[way]);
        ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, out[way], r))), 0);
        for (int i = 0; i < 3; i++)
            grads[way][i] = x[i]->grad;
    }
    ck_assert_int_eq(w[0]->ndim, 4);
    ck_assert(qkv_same_shape(w[0], w[1]) && qkv_same_shape(out[0], out[1]));
    for (size_t i = 0; i < w[0]->size; i++)
        ck_assert_float_eq_tol(w[0]->data[i], w[1]->data[i], 1e-6);
    for (size_t i = 0; i < out[0]->size; i++)
        ck_assert_float_eq_tol(out[0]->data[i], out[1]->data[i], 1e-5);
    for (int k = 0; k < 3; k++)
        for (size_t i = 0; i < x[k]->size; i++)
            ck_assert_float_eq_tol(grads[0][k][i], grads[1][k][i], 1e-5);
    qkv_arena_free(&a);
}
END_TEST

/* qkv_attention_weights for a window of query rows is the formula for those
 * rows, head by head (the plain loops on each head's packed q and k), with
 * the causal rule counted from the window's absolute row, at every place a
 * window can fall against the 32-query tiles; and the very numbers of those
 * rows of the weights the core gives when asked for them all. */
START_TEST(test_weights_of_chosen_rows_are_the_formula)
{
    enum { B = 2, TQ = 70, TK = 80, H = 3, D = 5, C = H * D };
    uint8_t valid[B * TK];
    for (int j = 0; j < B * TK; j++)
        valid[j] = j < TK || j % TK < 61; /* entry 1's last 19 keys are padding */
    qkv_mask m = {.causal = true, .key_valid = valid};
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_rng rng;
    qkv_rng_seed(&rng, 41);
    qkv_tensor *q = qkv_randn(a, QKV_SHAPE(B, TQ, C), 1.5, &rng);
    qkv_tensor *k = qkv_randn(a, QKV_SHAPE(B, TK, C), 1.5, &rng);
    qkv_tensor *v = qkv_randn(a, QKV_SHAPE(B, TK, C), 1.5, &rng), *all = NULL;
    ck_assert_qkv(qkv_attention_heads(a, q, k, v, H, &m, 0, NULL, &all));
    static qkv_real want[TQ * TK], out[TQ * D], qh[TQ * D], kh[TK * D], vh[TK * D];
    const int windows[][2] = {{0, TQ}, {0, 1}, {31, 2}, {30, 40}, {69, 1}, {5, 59}};
    for (int w = 0; w < 6; w++) {
        int row0 = windows[w][0], n = windows[w][1];
        qkv_tensor *p = qkv_attention_weights(a, q, k, H, &m, row0, n);
        ck_assert_qkv(p);
        ck_assert(p->ndim == 4 && p->shape[0] == B && p->shape[1] == H && p->shape[2] == n &&
                  p->shape[3] == TK);
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++) {
                attention_gather(qh, q->data + (size_t)b * TQ * C + h * D, TQ, D, C);
                attention_gather(kh, k->data + (size_t)b * TK * C + h * D, TK, D, C);
                attention_gather(vh, v->data + (size_t)b * TK * C + h * D, TK, D, C);
                qkv__attention_plain(out, want, qh, kh, vh, TQ, TK, D, true, valid + b * TK);
                const qkv_real *got = p->data + ((size_t)b * H + h) * n * TK;
                const qkv_real *full = all->data + (((size_t)b * H + h) * TQ + row0) * TK;
                for (int i = 0; i < n * TK; i++) {
                    qkv_real wij = want[(size_t)row0 * TK + i];
                    ck_assert_msg(fabs(got[i] - wij) <= 1e-5, "rows %d+%d, b %d h %d, value %d: "
                                  "%.9g, the formula %.9g", row0, n, b, h, i, got[i], wij);
                    if (wij == 0) /* hidden: exactly +0.0, as the formula says */
                        ck_assert_msg(got[i] == 0 && !signbit(got[i]), "value %d not +0", i);
                    ck_assert_msg(memcmp(&got[i], &full[i], sizeof got[i]) == 0,
                                  "rows %d+%d: value %d is not the core's", row0, n, i);
                }
            }
    }
    qkv_arena_free(&a);
}
END_TEST

static Suite *attention_core_suite(void)
{
    Suite *s = suite_create("attention_core");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_worked_example);
    tcase_add_test(tc, test_causal_weights_lower_triangular);
    tcase_add_test(tc, test_causal_long_sequences_in_blocks);
    tcase_add_test(tc, test_causal_no_information_from_the_future);
    tcase_add_test(tc, test_scores_scaled_by_sqrt_d);
    tcase_add_test(tc, test_keys_and_values_not_swapped);
    tcase_add_test(tc, test_softmax_over_keys);
    tcase_add_test(tc, test_mask_before_softmax);
    tcase_add_test(tc, test_heads_share_their_batch_mask);
    tcase_add_test(tc, test_dropout_is_seeded_and_inverted);
    tcase_add_test(tc, test_heads_side_by_side_match_split_heads);
    tcase_add_test(tc, test_weights_of_chosen_rows_are_the_formula);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(attention_core_suite)
