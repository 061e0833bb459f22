/* Tests that check definitions: every op of qkv/ops.h and every model
 * option, run on random inputs and compared with plain loops written from
 * the documented formula (tests/support/plain_reference.c: no qkv op in a
 * reference). The gradient checks compare a backward with its own forward;
 * these say the forward is the one the headers promise. One suite, built
 * twice: tests/tensor/test_definitions.c (float) and tests/tensor/grad_definitions.c
 * (double, tolerances near double rounding) each include it once. */
#ifndef QKV_DEFINITIONS_SUITE_H
#define QKV_DEFINITIONS_SUITE_H

#include "plain_reference.h"
#include "testing.h"

#include <stdlib.h>

/* How close a result must be to its reference, relative to max(1, |want|). */
static const double TOL = sizeof(qkv_real) == sizeof(double) ? 1e-12 : 1e-5;

static void expect_close(const qkv_tensor *t, const double *want, size_t n, double tol,
                         const char *what)
{
    ck_assert_msg(t != NULL, "%s: qkv: %s", what, qkv_last_error());
    ck_assert_msg(t->size == n, "%s: %zu values, want %zu", what, t->size, n);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs(t->data[i] - want[i]) <= tol * fmax(1, fabs(want[i])),
                      "%s value %zu: got %.15g, want %.15g", what, i, (double)t->data[i], want[i]);
}

/* t's values in double (malloc'd; free it). */
static double *doubles_of(const qkv_tensor *t)
{
    double *x = malloc(t->size * sizeof *x);
    ck_assert_ptr_nonnull(x);
    for (size_t i = 0; i < t->size; i++)
        x[i] = t->data[i];
    return x;
}

static double *want_n(size_t n)
{
    double *x = calloc(n, sizeof *x);
    ck_assert_ptr_nonnull(x);
    return x;
}

/* ---- elementwise ---- */

enum binop { ADD, SUB, MUL };

static double ref_binop(enum binop op, double x, double y)
{
    return op == ADD ? x + y : op == SUB ? x - y : x * y;
}

START_TEST(test_elementwise)
{
    qkv_test_env f = qkv_test_env_new(1);
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(2, 3, 5), 1, &f.rng);
    qkv_tensor *y = qkv_randn(f.a, QKV_SHAPE(2, 3, 5), 1, &f.rng);
    qkv_tensor *bias = qkv_randn(f.a, QKV_SHAPE(5), 1, &f.rng);
    double *want = want_n(x->size);
    for (int op = ADD; op <= MUL; op++)
        for (int broadcast = 0; broadcast < 2; broadcast++) {
            qkv_tensor *other = broadcast ? bias : y;
            qkv_tensor *(*fn)(qkv_arena *, qkv_tensor *, qkv_tensor *) =
                op == ADD ? qkv_add : op == SUB ? qkv_sub : qkv_mul;
            for (size_t i = 0; i < x->size; i++)
                want[i] = ref_binop(op, x->data[i], other->data[broadcast ? i % 5 : i]);
            expect_close(fn(f.a, x, other), want, x->size, TOL, broadcast ? "broadcast" : "binary");
        }
    for (size_t i = 0; i < x->size; i++)
        want[i] = -0.37 * x->data[i];
    expect_close(qkv_scale(f.a, x, (qkv_real)-0.37), want, x->size, TOL, "scale");
    free(want);
    qkv_arena_free(&f.a);
}
END_TEST

static double ref_relu(double v) { return v > 0 ? v : 0; }

START_TEST(test_activations)
{
    static const struct {
        const char *name;
        qkv_tensor *(*op)(qkv_arena *, qkv_tensor *);
        double (*ref)(double);
    } acts[] = {{"relu", qkv_relu, ref_relu},
                {"relu2", qkv_relu2, ref_relu2},
                {"gelu", qkv_gelu, ref_gelu},
                {"silu", qkv_silu, ref_silu}};
    qkv_test_env f = qkv_test_env_new(2);
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(4, 50), 2, &f.rng);
    x->data[0] = 0;
    double *want = want_n(x->size);
    for (size_t k = 0; k < sizeof acts / sizeof *acts; k++) {
        for (size_t i = 0; i < x->size; i++)
            want[i] = acts[k].ref(x->data[i]);
        /* The float GELU's and SiLU's tanh is a polynomial, ~1e-7 absolute
         * (kernels/vecmath.h). */
        expect_close(acts[k].op(f.a, x), want, x->size, TOL, acts[k].name);
    }
    free(want);
    qkv_arena_free(&f.a);
}
END_TEST

/* Inverted dropout: each value is 0 or x/(1-p), about a fraction p are 0;
 * not training, or p = 0, returns x itself. */
START_TEST(test_dropout)
{
    qkv_test_env f = qkv_test_env_new(3);
    enum { N = 20000 };
    const double p = 0.3;
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(N), 1, &f.rng);
    qkv_tensor *y = qkv_dropout(f.a, x, (qkv_real)p, &f.rng, true);
    ck_assert_qkv(y);
    int zeros = 0;
    for (size_t i = 0; i < N; i++) {
        double kept = x->data[i] / (1 - p);
        if (y->data[i] == 0)
            zeros++;
        else
            ck_assert_msg(fabs(y->data[i] - kept) <= TOL * fmax(1, fabs(kept)),
                          "value %zu: %g is neither 0 nor x/(1-p) = %g", i, (double)y->data[i],
                          kept);
    }
    /* 6 standard deviations of the zeros' fraction, sqrt(p(1-p)/N) = 0.0032. */
    ck_assert_msg(fabs((double)zeros / N - p) < 0.02, "%d of %d zeroed, p = %g", zeros, N, p);
    ck_assert_ptr_eq(qkv_dropout(f.a, x, (qkv_real)p, &f.rng, false), x);
    ck_assert_ptr_eq(qkv_dropout(f.a, x, 0, &f.rng, true), x);
    qkv_arena_free(&f.a);
}
END_TEST

/* ---- reductions and shapes ---- */

START_TEST(test_reductions)
{
    qkv_test_env f = qkv_test_env_new(4);
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(3, 13), 1, &f.rng);
    double s = 0;
    for (size_t i = 0; i < x->size; i++)
        s += x->data[i];
    double mean = s / (double)x->size;
    expect_close(qkv_sum(f.a, x), &s, 1, TOL, "sum");
    expect_close(qkv_mean(f.a, x), &mean, 1, TOL, "mean");
    qkv_arena_free(&f.a);
}
END_TEST

START_TEST(test_shapes)
{
    qkv_test_env f = qkv_test_env_new(5);
    enum { A = 2, B = 3, C = 4, D = 5 };
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(A, B, C, D), 1, &f.rng);
    double *want = want_n(x->size), *xs = doubles_of(x);

    qkv_tensor *r = qkv_reshape(f.a, x, QKV_SHAPE(A * B, C * D));
    expect_close(r, xs, x->size, 0, "reshape");
    ck_assert_int_eq(r->shape[0], A * B);

    /* transpose: y[a][b][d][c] = x[a][b][c][d]. */
    for (int i = 0; i < A * B; i++)
        for (int c = 0; c < C; c++)
            for (int d = 0; d < D; d++)
                want[(size_t)i * C * D + d * C + c] = xs[(size_t)i * C * D + c * D + d];
    expect_close(qkv_transpose(f.a, x), want, x->size, 0, "transpose");

    /* permute {2,0,3,1}: y[c][a][d][b] = x[a][b][c][d]. */
    const int perm[4] = {2, 0, 3, 1};
    for (int a = 0; a < A; a++)
        for (int b = 0; b < B; b++)
            for (int c = 0; c < C; c++)
                for (int d = 0; d < D; d++)
                    want[((size_t)(c * A + a) * D + d) * B + b] = xs[((size_t)(a * B + b) * C + c) * D + d];
    qkv_tensor *pm = qkv_permute(f.a, x, perm);
    expect_close(pm, want, x->size, 0, "permute");
    ck_assert(pm->shape[0] == C && pm->shape[1] == A && pm->shape[2] == D && pm->shape[3] == B);

    /* concat of widths 2, 3, 1 along the last dim, then slice [1, 4) of it. */
    qkv_tensor *parts[3] = {qkv_randn(f.a, QKV_SHAPE(A, B, 2), 1, &f.rng),
                            qkv_randn(f.a, QKV_SHAPE(A, B, 3), 1, &f.rng),
                            qkv_randn(f.a, QKV_SHAPE(A, B, 1), 1, &f.rng)};
    double cat[A * B * 6], sl[A * B * 3];
    for (int row = 0; row < A * B; row++) {
        int col = 0;
        for (int k = 0; k < 3; k++) {
            int w = parts[k]->shape[2];
            for (int j = 0; j < w; j++)
                cat[row * 6 + col++] = parts[k]->data[row * w + j];
        }
        for (int j = 0; j < 3; j++)
            sl[row * 3 + j] = cat[row * 6 + 1 + j];
    }
    qkv_tensor *joined = qkv_concat(f.a, 3, parts);
    expect_close(joined, cat, A * B * 6, 0, "concat");
    expect_close(qkv_slice(f.a, joined, 1, 3), sl, A * B * 3, 0, "slice");
    free(want);
    free(xs);
    qkv_arena_free(&f.a);
}
END_TEST

/* ---- linear algebra ---- */

/* op(X)[i][k] for X stored (rows, cols), transposed when t. */
static double at(const qkv_tensor *x, size_t base, bool t, int i, int k, int cols)
{
    return t ? x->data[base + (size_t)k * cols + i] : x->data[base + (size_t)i * cols + k];
}

START_TEST(test_matmul_and_affine)
{
    qkv_test_env f = qkv_test_env_new(6);
    enum { NB = 2, M = 3, K = 5, N = 4 };
    for (int shared = 0; shared < 2; shared++)
        for (int tx = 0; tx < 2; tx++)
            for (int tw = 0; tw < 2; tw++) {
                qkv_tensor *x = tx ? qkv_randn(f.a, QKV_SHAPE(NB, K, M), 1, &f.rng)
                                   : qkv_randn(f.a, QKV_SHAPE(NB, M, K), 1, &f.rng);
                qkv_tensor *w =
                    shared ? (tw ? qkv_randn(f.a, QKV_SHAPE(N, K), 1, &f.rng)
                                 : qkv_randn(f.a, QKV_SHAPE(K, N), 1, &f.rng))
                           : (tw ? qkv_randn(f.a, QKV_SHAPE(NB, N, K), 1, &f.rng)
                                 : qkv_randn(f.a, QKV_SHAPE(NB, K, N), 1, &f.rng));
                if (shared && tx) /* a shared weight folds x's batch into M: x not transposed */
                    continue;
                double want[NB * M * N];
                for (int b = 0; b < NB; b++)
                    for (int i = 0; i < M; i++)
                        for (int j = 0; j < N; j++) {
                            double s = 0;
                            for (int k = 0; k < K; k++)
                                s += at(x, (size_t)b * M * K, tx, i, k, tx ? M : K) *
                                     at(w, shared ? 0 : (size_t)b * K * N, tw, k, j, tw ? K : N);
                            want[(b * M + i) * N + j] = s;
                        }
                expect_close(qkv_matmul(f.a, x, w, tx, tw), want, NB * M * N, TOL, "matmul");
            }
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(NB, M, K), 1, &f.rng);
    qkv_tensor *W = qkv_randn(f.a, QKV_SHAPE(N, K), 1, &f.rng), *b = qkv_randn(f.a, QKV_SHAPE(N), 1, &f.rng);
    double *xs = doubles_of(x), want[NB * M * N];
    for (int with_bias = 0; with_bias < 2; with_bias++) {
        ref_linear(want, xs, W->data, with_bias ? b->data : NULL, NB * M, K, N);
        expect_close(qkv_affine(f.a, x, W, with_bias ? b : NULL), want, NB * M * N, TOL, "affine");
    }
    free(xs);
    qkv_arena_free(&f.a);
}
END_TEST

START_TEST(test_embedding)
{
    qkv_test_env f = qkv_test_env_new(7);
    enum { V = 9, C = 4 };
    qkv_tensor *table = qkv_randn(f.a, QKV_SHAPE(V, C), 1, &f.rng);
    const int32_t ids[6] = {3, 0, 8, 3, 5, 1};
    double want[6 * C];
    for (int r = 0; r < 6; r++)
        for (int j = 0; j < C; j++)
            want[r * C + j] = table->data[ids[r] * C + j];
    qkv_tensor *e = qkv_embedding(f.a, table, ids, QKV_SHAPE(2, 3));
    expect_close(e, want, 6 * C, 0, "embedding");
    ck_assert(e->ndim == 3 && e->shape[0] == 2 && e->shape[1] == 3 && e->shape[2] == C);
    qkv_arena_free(&f.a);
}
END_TEST

/* ---- the fused row-wise ops ---- */

START_TEST(test_norms)
{
    qkv_test_env f = qkv_test_env_new(8);
    enum { R = 12, C = 70 }; /* rows wider than a vector and the 32-column blocks */
    const double eps = 1e-5;
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(3, 4, C), 2, &f.rng);
    qkv_tensor *w = qkv_randn(f.a, QKV_SHAPE(C), 1, &f.rng), *b = qkv_randn(f.a, QKV_SHAPE(C), 1, &f.rng);
    double *xs = doubles_of(x), want[R * C];
    /* LayerNorm with scale and shift, either, or neither. */
    for (int v = 0; v < 4; v++) {
        qkv_tensor *wv = v & 1 ? w : NULL, *bv = v & 2 ? b : NULL;
        for (int r = 0; r < R; r++)
            ref_layernorm_row(want + r * C, xs + r * C, wv ? wv->data : NULL, bv ? bv->data : NULL,
                              C, eps);
        expect_close(qkv_layernorm(f.a, x, wv, bv, (qkv_real)eps), want, R * C, TOL, "layernorm");
    }
    /* RMSNorm with and without its scale, and with an eps that matters. */
    for (int v = 0; v < 3; v++) {
        qkv_tensor *wv = v == 1 ? w : NULL;
        double e = v == 2 ? 0.5 : eps;
        for (int r = 0; r < R; r++)
            ref_rmsnorm_row(want + r * C, xs + r * C, wv ? wv->data : NULL, C, e);
        expect_close(qkv_rmsnorm(f.a, x, wv, (qkv_real)e), want, R * C, TOL, "rmsnorm");
    }
    free(xs);
    qkv_arena_free(&f.a);
}
END_TEST

START_TEST(test_softmax)
{
    qkv_test_env f = qkv_test_env_new(9);
    enum { B = 2, H = 2, TQ = 3, TK = 5 };
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(B, H, TQ, TK), 2, &f.rng);
    double want[B * H * TQ * TK];
    for (int r = 0; r < B * H * TQ; r++) {
        const qkv_real *xr = x->data + r * TK;
        double max = -INFINITY, s = 0;
        for (int j = 0; j < TK; j++)
            max = fmax(max, xr[j]);
        for (int j = 0; j < TK; j++)
            s += exp(xr[j] - max);
        for (int j = 0; j < TK; j++)
            want[r * TK + j] = exp(xr[j] - max) / s;
    }
    expect_close(qkv_softmax(f.a, x), want, x->size, TOL, "softmax over the last dim");

    /* softmax(scale·x + mask): causal (query i sees keys j <= i + TK − TQ)
     * and padding; entry 1 pads all but key 4, which row 0 may not see
     * (causal): that row has no key and is all zeros. */
    static const uint8_t valid[B * TK] = {1, 0, 1, 1, 1, 0, 0, 0, 0, 1};
    const double scale = 0.7;
    for (int r = 0; r < B * H * TQ; r++) {
        int b = r / (H * TQ), i = r % TQ;
        const qkv_real *xr = x->data + r * TK;
        double max = -INFINITY, s = 0, e[TK];
        for (int j = 0; j < TK; j++) {
            bool seen = j <= i + TK - TQ && valid[b * TK + j];
            e[j] = seen ? scale * xr[j] : -INFINITY;
            max = fmax(max, e[j]);
        }
        for (int j = 0; j < TK; j++)
            s += e[j] = max == -INFINITY ? 0 : exp(e[j] - max);
        for (int j = 0; j < TK; j++)
            want[r * TK + j] = s > 0 ? e[j] / s : 0;
    }
    qkv_mask m = {.causal = true, .key_valid = valid};
    expect_close(qkv_softmax_masked(f.a, x, &m, (qkv_real)scale), want, x->size, TOL,
                 "masked softmax");
    qkv_arena_free(&f.a);
}
END_TEST

START_TEST(test_cross_entropy)
{
    qkv_test_env f = qkv_test_env_new(10);
    enum { ROWS = 6, V = 7 };
    qkv_tensor *logits = qkv_randn(f.a, QKV_SHAPE(2, 3, V), 2, &f.rng);
    const int32_t targets[ROWS] = {3, -1, 0, 6, -1, 2}, none[ROWS] = {-1, -1, -1, -1, -1, -1};
    double loss = 0;
    int counted = 0;
    for (int r = 0; r < ROWS; r++) {
        if (targets[r] == -1)
            continue;
        const qkv_real *z = logits->data + r * V;
        double max = -INFINITY, s = 0;
        for (int j = 0; j < V; j++)
            max = fmax(max, z[j]);
        for (int j = 0; j < V; j++)
            s += exp(z[j] - max);
        loss += max + log(s) - z[targets[r]];
        counted++;
    }
    loss /= counted;
    expect_close(qkv_cross_entropy(f.a, logits, targets, -1), &loss, 1, TOL,
                 "cross-entropy, ignore index -1");
    double zero = 0;
    expect_close(qkv_cross_entropy(f.a, logits, none, -1), &zero, 1, 0, "every row ignored");
    qkv_arena_free(&f.a);
}
END_TEST

/* ---- attention and RoPE ---- */

START_TEST(test_attention)
{
    qkv_test_env f = qkv_test_env_new(11);
    enum { B = 2, H = 3, TQ = 4, TK = 6, D = 4, C = H * D };
    static const uint8_t valid[B * TK] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0};
    const qkv_mask masks[3] = {{0}, {.causal = true}, {.causal = true, .key_valid = valid}};
    double o[B * H * TQ * D], w[B * H * TQ * TK];
    for (int mi = 0; mi < 3; mi++) {
        const qkv_mask *m = &masks[mi];
        /* (B, H, T, d), one head after the other. */
        qkv_tensor *q = qkv_randn(f.a, QKV_SHAPE(B, H, TQ, D), 1.5, &f.rng);
        qkv_tensor *k = qkv_randn(f.a, QKV_SHAPE(B, H, TK, D), 1.5, &f.rng);
        qkv_tensor *v = qkv_randn(f.a, QKV_SHAPE(B, H, TK, D), 1.5, &f.rng);
        double *qs = doubles_of(q), *ks = doubles_of(k), *vs = doubles_of(v);
        for (int bh = 0; bh < B * H; bh++)
            ref_attention_head(o + bh * TQ * D, D, w + bh * TQ * TK, qs + bh * TQ * D, D,
                               ks + bh * TK * D, vs + bh * TK * D, D, TQ, TK, D, m->causal,
                               m->key_valid ? m->key_valid + bh / H * TK : NULL);
        qkv_tensor *weights = NULL, *out = qkv_attention(f.a, q, k, v, m, 0, NULL, &weights);
        expect_close(out, o, sizeof o / sizeof *o, TOL, "attention");
        expect_close(weights, w, sizeof w / sizeof *w, TOL, "attention weights");
        free(qs), free(ks), free(vs);

        /* (B, T, H·d), the heads side by side: head h in columns [h·d, (h+1)·d). */
        q = qkv_randn(f.a, QKV_SHAPE(B, TQ, C), 1.5, &f.rng);
        k = qkv_randn(f.a, QKV_SHAPE(B, TK, C), 1.5, &f.rng);
        v = qkv_randn(f.a, QKV_SHAPE(B, TK, C), 1.5, &f.rng);
        qs = doubles_of(q), ks = doubles_of(k), vs = doubles_of(v);
        for (int b = 0; b < B; b++)
            for (int h = 0; h < H; h++)
                ref_attention_head(o + b * TQ * C + h * D, C, w + (b * H + h) * TQ * TK,
                                   qs + b * TQ * C + h * D, C, ks + b * TK * C + h * D,
                                   vs + b * TK * C + h * D, C, TQ, TK, D, m->causal,
                                   m->key_valid ? m->key_valid + b * TK : NULL);
        out = qkv_attention_heads(f.a, q, k, v, H, m, 0, NULL, &weights);
        expect_close(out, o, sizeof o / sizeof *o, TOL, "attention, heads side by side");
        expect_close(weights, w, sizeof w / sizeof *w, TOL, "attention_heads weights");
        /* Query rows 1 and 2 alone: those rows of each head's weights. */
        double rows[B * H * 2 * TK];
        for (int bh = 0; bh < B * H; bh++)
            memcpy(rows + bh * 2 * TK, w + (bh * TQ + 1) * TK, 2 * TK * sizeof *rows);
        expect_close(qkv_attention_weights(f.a, q, k, H, m, 1, 2), rows, sizeof rows / sizeof *rows,
                     TOL, "attention_weights, rows 1 and 2");
        free(qs), free(ks), free(vs);
    }
    qkv_arena_free(&f.a);
}
END_TEST

/* Dropout of the attention weights, inverted: with v the identity (Tk = d)
 * the output rows are the dropped-out weights themselves, each 0 or
 * w/(1 − p), about a fraction p of them 0; w is the weights before dropout. */
START_TEST(test_attention_dropout)
{
    qkv_test_env f = qkv_test_env_new(14);
    enum { BH = 64, T = 8 };
    const double p = 0.25;
    qkv_tensor *q = qkv_randn(f.a, QKV_SHAPE(BH, T, T), 1, &f.rng);
    qkv_tensor *k = qkv_randn(f.a, QKV_SHAPE(BH, T, T), 1, &f.rng);
    qkv_tensor *v = qkv_zeros(f.a, QKV_SHAPE(BH, T, T)), *w = NULL;
    for (int h = 0; h < BH; h++)
        for (int j = 0; j < T; j++)
            v->data[(h * T + j) * T + j] = 1;
    qkv_tensor *out = qkv_attention(f.a, q, k, v, NULL, (qkv_real)p, &f.rng, &w);
    ck_assert_qkv(out);
    int zeros = 0;
    for (size_t i = 0; i < out->size; i++) {
        double kept = w->data[i] / (1 - p);
        if (out->data[i] == 0)
            zeros++;
        else
            ck_assert_msg(fabs(out->data[i] - kept) <= TOL * fmax(1, kept),
                          "weight %zu: %.9g after dropout is neither 0 nor w/(1-p) = %.9g", i,
                          (double)out->data[i], kept);
    }
    /* 6 standard deviations of the zeros' fraction over 4096 weights. */
    ck_assert_msg(fabs((double)zeros / out->size - p) < 0.04, "%d of %zu weights dropped, p = %g",
                  zeros, out->size, p);
    qkv_arena_free(&f.a);
}
END_TEST

START_TEST(test_rope)
{
    qkv_test_env f = qkv_test_env_new(12);
    enum { B = 2, T = 5, H = 2, D = 6, C = H * D, POS0 = 3 };
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(B, T, C), 1, &f.rng);
    double *want = doubles_of(x);
    for (int r = 0; r < B * T; r++)
        for (int h = 0; h < H; h++)
            ref_rope_head(want + r * C + h * D, D, POS0 + r % T);
    expect_close(qkv_rope(f.a, x, H, POS0), want, x->size, TOL, "rope");
    free(want);
    qkv_arena_free(&f.a);
}
END_TEST

/* ---- the 1.2 ops ---- */

static double ref_abs(double v) { return fabs(v); }

START_TEST(test_more_pointwise)
{
    qkv_test_env f = qkv_test_env_new(60);
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(3, 17), 2, &f.rng);
    x->data[0] = 0;
    x->data[1] = 100, x->data[2] = -100; /* e^100 overflows a float */
    double *want = want_n(x->size), *xs = doubles_of(x);
    for (size_t i = 0; i < x->size; i++)
        want[i] = ref_softplus(xs[i]);
    expect_close(qkv_softplus(f.a, x), want, x->size, TOL, "softplus");
    for (size_t i = 0; i < x->size; i++)
        want[i] = ref_abs(xs[i]);
    expect_close(qkv_abs(f.a, x), want, x->size, 0, "abs");
    for (size_t i = 0; i < x->size; i++)
        want[i] = xs[i] < -0.5 ? -0.5 : xs[i] > 0.75 ? 0.75 : xs[i];
    expect_close(qkv_clamp(f.a, x, -0.5, 0.75), want, x->size, 0, "clamp");
    for (size_t i = 0; i < x->size; i++)
        want[i] = xs[i] * xs[i] * xs[i];
    expect_close(qkv_pow(f.a, x, 3), want, x->size, TOL, "pow 3");
    qkv_tensor *ax = qkv_abs(f.a, x);
    for (size_t i = 0; i < x->size; i++)
        want[i] = sqrt(fabs(xs[i]));
    expect_close(qkv_sqrt(f.a, ax), want, x->size, TOL, "sqrt");
    for (size_t i = 0; i < x->size; i++)
        want[i] = exp(-1.5 * log(fabs(xs[i]) + 0.25));
    expect_close(qkv_pow(f.a, qkv_add(f.a, ax, qkv_from_array(f.a, QKV_SHAPE(1), (qkv_real[]){0.25})), -1.5), want,
                 x->size, TOL, "pow -1.5");
    /* where: x where the mask is set, else y. */
    qkv_tensor *y = qkv_randn(f.a, QKV_SHAPE(3, 17), 1, &f.rng);
    uint8_t cond[3 * 17];
    for (size_t i = 0; i < x->size; i++) {
        cond[i] = qkv_rng_uniform(&f.rng) < 0.5;
        want[i] = cond[i] ? xs[i] : y->data[i];
    }
    expect_close(qkv_where(f.a, cond, x, y), want, x->size, 0, "where");
    /* mse: the mean of the squared differences. */
    double mse = 0;
    for (size_t i = 0; i < x->size; i++)
        mse += (xs[i] - y->data[i]) * (xs[i] - y->data[i]) / (double)x->size;
    expect_close(qkv_mse_loss(f.a, x, y), &mse, 1, TOL, "mse_loss");
    free(want);
    free(xs);
    qkv_arena_free(&f.a);
}
END_TEST

/* min, var and cumsum over each axis of (A, N, I), the plain (outer, n, inner) walk. */
START_TEST(test_more_axis)
{
    qkv_test_env f = qkv_test_env_new(61);
    enum { D0 = 3, D1 = 4, D2 = 5 };
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(D0, D1, D2), 1, &f.rng);
    double *xs = doubles_of(x), *want = want_n(x->size);
    const int dims[3] = {D0, D1, D2};
    for (int axis = 0; axis < 3; axis++) {
        size_t n = (size_t)dims[axis], inner = 1, outer = 1;
        for (int d = axis + 1; d < 3; d++)
            inner *= (size_t)dims[d];
        for (int d = 0; d < axis; d++)
            outer *= (size_t)dims[d];
        double mins[D0 * D1 * D2], vars[D0 * D1 * D2];
        for (size_t o = 0; o < outer; o++)
            for (size_t i = 0; i < inner; i++) {
                const double *line = xs + o * n * inner + i;
                double m = line[0], run = 0;
                for (size_t k = 0; k < n; k++) {
                    m = fmin(m, line[k * inner]);
                    run += line[k * inner];
                    want[(o * n + k) * inner + i] = run;
                }
                mins[o * inner + i] = m;
                vars[o * inner + i] = ref_variance(line, n, inner, 1);
            }
        expect_close(qkv_min_axis(f.a, x, axis, false), mins, outer * inner, 0, "min_axis");
        expect_close(qkv_var_axis(f.a, x, axis, true, 1), vars, outer * inner, TOL, "var_axis");
        expect_close(qkv_cumsum(f.a, x, axis), want, x->size, TOL, "cumsum");
    }
    free(want);
    free(xs);
    qkv_arena_free(&f.a);
}
END_TEST

/* index_select, gather, topk and sort, their picks written out. */
START_TEST(test_picks)
{
    qkv_test_env f = qkv_test_env_new(62);
    enum { R = 3, C = 6 };
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(R, C), 1, &f.rng);
    const int32_t cols[4] = {5, 0, 5, 2}, rows[2] = {2, 0};
    double want[R * C];
    for (int r = 0; r < R; r++)
        for (int j = 0; j < 4; j++)
            want[r * 4 + j] = x->data[r * C + cols[j]];
    expect_close(qkv_index_select(f.a, x, 1, 4, cols), want, R * 4, 0, "index_select columns");
    for (int j = 0; j < 2; j++)
        for (int c = 0; c < C; c++)
            want[j * C + c] = x->data[rows[j] * C + c];
    expect_close(qkv_index_select(f.a, x, 0, 2, rows), want, 2 * C, 0, "index_select rows");
    const int32_t per_row[R * 2] = {1, 4, 0, 0, 5, 3};
    for (int r = 0; r < R; r++)
        for (int j = 0; j < 2; j++)
            want[r * 2 + j] = x->data[r * C + per_row[r * 2 + j]];
    expect_close(qkv_gather(f.a, x, 1, 2, per_row), want, R * 2, 0, "gather");
    /* sort by selection: each next value the largest (smallest) not yet taken, ties by index. */
    x->data[3] = x->data[1]; /* a tie in row 0 */
    for (int desc = 0; desc < 2; desc++) {
        int32_t *idx = NULL, expect_idx[R * C];
        for (int r = 0; r < R; r++) {
            bool taken[C] = {false};
            for (int j = 0; j < C; j++) {
                int best = -1;
                for (int c = 0; c < C; c++)
                    if (!taken[c] && (best < 0 || (desc ? x->data[r * C + c] > x->data[r * C + best]
                                                        : x->data[r * C + c] < x->data[r * C + best])))
                        best = c;
                taken[best] = true;
                expect_idx[r * C + j] = best;
                want[r * C + j] = x->data[r * C + best];
            }
        }
        expect_close(qkv_sort(f.a, x, desc, &idx), want, R * C, 0, desc ? "sort descending" : "sort");
        for (int q = 0; q < R * C; q++)
            ck_assert_int_eq(idx[q], expect_idx[q]);
        if (desc) { /* topk 2: the first two of the descending order */
            double top[R * 2];
            for (int r = 0; r < R; r++)
                top[r * 2] = want[r * C], top[r * 2 + 1] = want[r * C + 1];
            expect_close(qkv_topk(f.a, x, 2, &idx), top, R * 2, 0, "topk");
            for (int r = 0; r < R; r++)
                ck_assert(idx[r * 2] == expect_idx[r * C] && idx[r * 2 + 1] == expect_idx[r * C + 1]);
        }
    }
    qkv_arena_free(&f.a);
}
END_TEST

/* log_softmax as written; and of logits 1000 above those (ln softmax does not
 * change when a row is shifted), where e^x overflows both precisions: a
 * log_softmax that does not take the row's max out first gives NaN there. The
 * values are quarters, exact at 1000 + v in float too. */
START_TEST(test_log_softmax)
{
    qkv_test_env f = qkv_test_env_new(63);
    enum { R = 4, C = 9 };
    qkv_tensor *x = qkv_tensor_new(f.a, QKV_SHAPE(R, C)), *shifted = qkv_tensor_new(f.a, QKV_SHAPE(R, C));
    for (size_t i = 0; i < x->size; i++) {
        x->data[i] = (qkv_real)(floor(8 * qkv_rng_normal(&f.rng)) / 4);
        shifted->data[i] = x->data[i] + 1000;
    }
    double *xs = doubles_of(x), want[R * C];
    for (int r = 0; r < R; r++)
        ref_log_softmax_row(want + r * C, xs + r * C, C);
    expect_close(qkv_log_softmax(f.a, x), want, R * C, TOL, "log_softmax");
    expect_close(qkv_log_softmax(f.a, shifted), want, R * C, TOL, "log_softmax of logits near 1000");
    free(xs);
    qkv_arena_free(&f.a);
}
END_TEST

/* ---- the modules and the model, through their public API ---- */

/* Every parameter of p drawn anew, N(0, std²): norm scales and biases too,
 * so a scale or a bias left out shows (their initial 1 and 0 would hide it). */
static void randomize(qkv_params *p, qkv_rng *rng, double std)
{
    for (size_t i = 0; i < p->total; i++)
        p->data[i] = (qkv_real)(std * qkv_rng_normal(rng));
}

START_TEST(test_self_attention_options)
{
    enum { B = 2, T = 5, C = 8, H = 2 };
    static const uint8_t valid[B * T] = {1, 1, 1, 1, 1, 1, 1, 0, 1, 0};
    for (int opt = 0; opt < 8; opt++) {
        bool rope = opt & 1, qk_norm = opt & 2, causal = !(opt & 4);
        qkv_test_env f = qkv_test_env_new(13 + opt);
        qkv_block_config cfg = {.n_embd = C, .n_head = H,
                                .opts = {.rope = rope, .qk_norm = qk_norm}};
        qkv_params *p = qkv_params_new();
        qkv_self_attn m;
        ck_assert_int_eq(qkv_self_attn_init(&m, p, "attn", &cfg, causal), 0);
        ck_assert_int_eq(qkv_params_alloc(p, &f.rng), 0);
        randomize(p, &f.rng, 0.5);
        qkv_ctx ctx = {.arena = f.a};
        qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(B, T, C), 1, &f.rng), *w = NULL;
        const uint8_t *kv = causal ? NULL : valid; /* an encoder's padding */
        qkv_tensor *y = qkv_self_attn_forward(&m, &ctx, x, kv, &w);
        double *xs = doubles_of(x), want_y[B * T * C], want_w[B * H * T * T];
        ref_self_attn(want_y, want_w, p, "attn", xs, B, T, C, H, causal, rope, qk_norm, kv);
        char what[80];
        snprintf(what, sizeof what, "self-attention, rope %d qk_norm %d causal %d", rope,
                 qk_norm, causal);
        expect_close(y, want_y, B * T * C, TOL, what);
        expect_close(w, want_w, B * H * T * T, TOL, what);
        free(xs);
        qkv_params_free(&p);
        qkv_arena_free(&f.a);
    }
}
END_TEST

START_TEST(test_cross_attention_key_padding)
{
    qkv_test_env f = qkv_test_env_new(30);
    enum { B = 2, TQ = 3, TK = 5, C = 8, CM = 6, H = 2, D = C / H };
    static const uint8_t valid[B * TK] = {1, 1, 1, 0, 0, 1, 0, 1, 1, 1};
    qkv_block_config cfg = {.n_embd = C, .n_head = H};
    qkv_params *p = qkv_params_new();
    qkv_cross_attn m;
    ck_assert_int_eq(qkv_cross_attn_init(&m, p, "cross", &cfg, CM), 0);
    ck_assert_int_eq(qkv_params_alloc(p, &f.rng), 0);
    randomize(p, &f.rng, 0.5);
    qkv_ctx ctx = {.arena = f.a};
    qkv_tensor *x = qkv_randn(f.a, QKV_SHAPE(B, TQ, C), 1, &f.rng);
    qkv_tensor *mem = qkv_randn(f.a, QKV_SHAPE(B, TK, CM), 1, &f.rng), *w = NULL;
    qkv_tensor *y = qkv_cross_attn_forward(&m, &ctx, x, mem, valid, &w);
    /* q = x·W_qᵀ + b_q; [k | v] = memory·W_kvᵀ + b_kv (k the first C columns). */
    double *xs = doubles_of(x), *ms = doubles_of(mem), q[B * TQ * C], kv[B * TK * 2 * C];
    double att[B * TQ * C], want_y[B * TQ * C], want_w[B * H * TQ * TK];
    ref_linear(q, xs, ref_param(p, "cross.c_q.weight"), ref_param(p, "cross.c_q.bias"), B * TQ, C, C);
    ref_linear(kv, ms, ref_param(p, "cross.c_kv.weight"), ref_param(p, "cross.c_kv.bias"), B * TK,
               CM, 2 * C);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            const double *kb = kv + b * TK * 2 * C + h * D;
            ref_attention_head(att + b * TQ * C + h * D, C, want_w + (b * H + h) * TQ * TK,
                               q + b * TQ * C + h * D, C, kb, kb + C, 2 * C, TQ, TK, D, false,
                               valid + b * TK);
        }
    ref_linear(want_y, att, ref_param(p, "cross.c_proj.weight"), ref_param(p, "cross.c_proj.bias"),
               B * TQ, C, C);
    expect_close(y, want_y, B * TQ * C, TOL, "cross-attention");
    expect_close(w, want_w, B * H * TQ * TK, TOL, "cross-attention weights");
    free(xs);
    free(ms);
    qkv_params_free(&p);
    qkv_arena_free(&f.a);
}
END_TEST

/* A GPT's logits against nanoGPT's forward as loops over its parameters,
 * read by name: GPT-2's layout, the modern recipe (every option), and
 * each option alone. */
START_TEST(test_gpt_logits_every_option)
{
    enum { B = 2, T = 6, V = 11 };
    struct { const char *what; qkv_model_options opts; } cases[] = {
        {"GPT-2", {.no_bias = false}},
        {"modern", {.rope = true, .rmsnorm = true, .relu2 = true, .qk_norm = true, .untied = true,
                    .no_bias = true}},
        {"rope", {.rope = true}},
        {"rmsnorm", {.rmsnorm = true}},
        {"relu2", {.relu2 = true}},
        {"silu", {.activation = QKV_ACTIVATION_SILU}},
        {"qk_norm", {.qk_norm = true}},
        {"untied", {.untied = true}},
        {"no_bias", {.no_bias = true}},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        qkv_gpt_config cfg = {.opts = cases[c].opts};
        cfg.vocab_size = V, cfg.block_size = 8, cfg.n_layer = 2, cfg.n_head = 2, cfg.n_embd = 8;
        qkv_test_env f = qkv_test_env_new(40 + c);
        qkv_gpt *m = qkv_gpt_new(&cfg, 7);
        ck_assert_qkv(m);
        /* no_bias: no Linear and no norm has a bias; else every Linear and
         * (LayerNorm) norm has one, which the reference then adds. */
        int biases = 0;
        for (int i = 0; i < m->params->count; i++)
            biases += strstr(m->params->items[i].name, ".bias") != NULL;
        int per_block = 4 + (cfg.opts.rmsnorm ? 0 : 2); /* c_attn, c_proj, c_fc, mlp.c_proj, ln_1, ln_2 */
        ck_assert_int_eq(biases, cfg.opts.no_bias ? 0 : 2 * per_block + !cfg.opts.rmsnorm);
        randomize(m->params, &f.rng, 0.4);
        int32_t ids[B * T];
        for (int i = 0; i < B * T; i++)
            ids[i] = (int32_t)(qkv_rng_uniform(&f.rng) * V);
        qkv_ctx ctx = {.arena = f.a};
        qkv_tensor *logits = qkv_gpt_logits(m, &ctx, ids, B, T, NULL);
        double want[B * T * V];
        ref_gpt_logits(want, m, ids, B, T);
        expect_close(logits, want, B * T * V, 2 * TOL, cases[c].what);
        qkv_gpt_free(m);
        qkv_arena_free(&f.a);
    }
}
END_TEST

/* ---- the learning-rate schedule, as qkv/optim.h writes it ---- */

static double documented_lr(const qkv_lr_schedule *s, int64_t it)
{
    const double pi = 3.14159265358979323846;
    double lr = s->lr, lo = s->min_lr;
    int64_t w = s->warmup_iters, d = s->decay_iters;
    if (it < w)
        return lr * (it + 1) / (w + 1);
    if (d == 0)
        return lr;
    if (it > d || d <= w)
        return lo;
    if (s->wsd_decay == 0)
        return lo + 0.5 * (1 + cos(pi * (it - w) / (d - w))) * (lr - lo);
    /* round(), halves away from 0: the decay spans a whole number of steps. */
    int64_t start = d - (int64_t)floor(s->wsd_decay * d + 0.5);
    if (start < w)
        start = w;
    return it < start ? lr : lr + (lo - lr) * (it - start) / (d - start);
}

START_TEST(test_lr_schedule)
{
    const qkv_lr_schedule cases[] = {
        {.lr = 1e-3, .min_lr = 1e-4, .warmup_iters = 3, .decay_iters = 20},
        {.lr = 1e-3, .min_lr = 1e-4, .warmup_iters = 0, .decay_iters = 10, .wsd_decay = 0.25},
        {.lr = 6e-4, .min_lr = 0, .warmup_iters = 2, .decay_iters = 10, .wsd_decay = 0.25},
        {.lr = 6e-4, .min_lr = 6e-5, .warmup_iters = 4, .decay_iters = 13, .wsd_decay = 0.5},
        {.lr = 6e-4, .min_lr = 6e-5, .warmup_iters = 4, .decay_iters = 13, .wsd_decay = 1},
        {.lr = 2e-3, .min_lr = 0, .warmup_iters = 5, .decay_iters = 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++)
        for (int64_t it = 0; it < 25; it++) {
            double got = qkv_lr_at(&cases[c], it), want = documented_lr(&cases[c], it);
            ck_assert_msg(fabs(got - want) <= 1e-12 * want,
                          "schedule %zu, step %lld: %.12g, documented %.12g", c, (long long)it,
                          got, want);
        }
}
END_TEST

static Suite *definitions_suite(void)
{
    Suite *s = suite_create("definitions");
    TCase *tc = tcase_create("definitions");
    tcase_add_test(tc, test_elementwise);
    tcase_add_test(tc, test_activations);
    tcase_add_test(tc, test_dropout);
    tcase_add_test(tc, test_reductions);
    tcase_add_test(tc, test_shapes);
    tcase_add_test(tc, test_matmul_and_affine);
    tcase_add_test(tc, test_embedding);
    tcase_add_test(tc, test_norms);
    tcase_add_test(tc, test_softmax);
    tcase_add_test(tc, test_cross_entropy);
    tcase_add_test(tc, test_attention);
    tcase_add_test(tc, test_attention_dropout);
    tcase_add_test(tc, test_rope);
    tcase_add_test(tc, test_self_attention_options);
    tcase_add_test(tc, test_cross_attention_key_padding);
    tcase_add_test(tc, test_gpt_logits_every_option);
    tcase_add_test(tc, test_lr_schedule);
    tcase_add_test(tc, test_more_pointwise);
    tcase_add_test(tc, test_more_axis);
    tcase_add_test(tc, test_picks);
    tcase_add_test(tc, test_log_softmax);
    suite_add_tcase(s, tc);
    return s;
}

#endif
