/* The attention modules (float build): a worked example, the properties
 * attention must have (causality, one head equal to single-head attention,
 * q, k and v side by side equal to apart, permutation symmetry, padding that changes nothing, gradients that reach
 * the memory), the key/value cache, and the weights that whole blocks record.
 * Gradients are checked in grad_nn.c. */
#include <stdlib.h>

#include "qkv/nn.h"
#include "error_text.h"
#include "nn_fixture.h"
#include "testing.h"

START_TEST(test_single_head_worked_example)
{
    fixture f;
    fx_open(&f, 1);
    qkv_attn_head head;
    ck_assert_int_eq(qkv_attn_head_init(&head, f.p, "head", 2, 2, false), 0);
    ck_assert_int_eq(qkv_params_alloc(f.p, &f.rng), 0);
    set_identity(head.query.weight->data, 2);
    set_identity(head.key.weight->data, 2);
    set_identity(head.value.weight->data, 2);
    const qkv_real xs[3][2] = {{1, 0}, {0, 1}, {1, 1}};
    qkv_tensor *x = qkv_from_array(f.ctx.arena, QKV_SHAPE(1, 3, 2), &xs[0][0]);
    qkv_tensor *w = NULL;
    qkv_tensor *y = qkv_attn_head_forward(&head, &f.ctx, x, &w);
    ck_assert_qkv(y);
    ck_assert_qkv(w);
    ck_assert_int_eq(w->ndim, 3);
    const qkv_real approx[9] = {0.40, 0.20, 0.40, 0.20, 0.40, 0.40, 0.25, 0.25, 0.50};
    qkv_test_assert_close(w, approx, 0.005);
    /* q = k = v = x: weights softmax_j(x_i·x_j/√2), output Σ_j w_ij x_j. */
    for (int i = 0; i < 3; i++) {
        double s[3], sum = 0;
        for (int j = 0; j < 3; j++) {
            s[j] = exp((xs[i][0] * xs[j][0] + xs[i][1] * xs[j][1]) / sqrt(2.0));
            sum += s[j];
        }
        for (int c = 0; c < 2; c++) {
            double out = 0;
            for (int j = 0; j < 3; j++) {
                ck_assert_double_eq_tol(w->data[i * 3 + j], s[j] / sum, 1e-6);
                out += s[j] / sum * xs[j][c];
            }
            ck_assert_double_eq_tol(y->data[i * 2 + c], out, 1e-6);
        }
    }
    fx_close(&f);
}
END_TEST

/* Above the diagonal exactly 0, each row sums to 1. w is (..., T, T). */
static void assert_causal_weights(const qkv_tensor *w)
{
    int T = w->shape[w->ndim - 1];
    for (size_t m = 0; m < w->size / ((size_t)T * T); m++)
        for (int i = 0; i < T; i++) {
            const qkv_real *row = w->data + (m * T + i) * T;
            double sum = 0;
            for (int j = 0; j < T; j++) {
                if (j > i)
                    ck_assert_msg(row[j] == 0, "matrix %zu: weight (%d,%d) = %g above the diagonal",
                                  m, i, j, (double)row[j]);
                sum += row[j];
            }
            ck_assert_double_eq_tol(sum, 1, 1e-5);
        }
}

START_TEST(test_causal_weights_lower_triangular)
{
    fixture f;
    fx_open(&f, 2);
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1};
    qkv_attn_head head;
    qkv_self_attn attn;
    ck_assert_int_eq(qkv_attn_head_init(&head, f.p, "head", 8, 4, true), 0);
    ck_assert_int_eq(qkv_self_attn_init(&attn, f.p, "attn", &cfg, true), 0);
    fx_alloc_random(&f, 0.5);
    qkv_tensor *x = randn3(&f, 2, 5, 8), *w1 = NULL, *w2 = NULL;
    ck_assert_qkv(qkv_attn_head_forward(&head, &f.ctx, x, &w1));
    ck_assert_qkv(qkv_self_attn_forward(&attn, &f.ctx, x, NULL, &w2));
    ck_assert_int_eq(w1->ndim, 3);
    ck_assert(w2->ndim == 4 && w2->shape[0] == 2 && w2->shape[1] == 2 && w2->shape[2] == 5 &&
              w2->shape[3] == 5);
    assert_causal_weights(w1);
    assert_causal_weights(w2);
    fx_close(&f);
}
END_TEST

typedef qkv_tensor *(*seq_fn)(void *module, const qkv_ctx *ctx, qkv_tensor *x);

static qkv_tensor *run_self_attn(void *m, const qkv_ctx *ctx, qkv_tensor *x)
{
    return qkv_self_attn_forward(m, ctx, x, NULL, NULL);
}

static qkv_tensor *run_block(void *m, const qkv_ctx *ctx, qkv_tensor *x)
{
    return qkv_block_forward(m, ctx, x, NULL, NULL);
}

/* Changing the tokens after position t must leave outputs 0..t bit-identical. */
static void assert_no_future_leak(fixture *f, seq_fn fn, void *module, int C)
{
    int B = 2, T = 6;
    qkv_tensor *x = randn3(f, B, T, C);
    qkv_tensor *y = fn(module, &f->ctx, x);
    ck_assert_qkv(y);
    for (int t = 0; t < T - 1; t++) {
        qkv_tensor *x2 = copy_of(f, x);
        for (int b = 0; b < B; b++)
            for (size_t i = ((size_t)b * T + t + 1) * C; i < (size_t)(b + 1) * T * C; i++)
                x2->data[i] = (qkv_real)qkv_rng_normal(&f->rng);
        qkv_tensor *y2 = fn(module, &f->ctx, x2);
        ck_assert_qkv(y2);
        for (int s = 0; s <= t; s++)
            ck_assert_msg(same_position(y, y2, s), "output %d changed when tokens after %d did", s,
                          t);
        ck_assert_msg(!same_position(y, y2, t + 1), "output %d did not depend on its own token",
                      t + 1);
    }
}

START_TEST(test_causal_no_future_leak)
{
    fixture f;
    fx_open(&f, 3);
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 2};
    qkv_self_attn attn;
    qkv_block block;
    ck_assert_int_eq(qkv_self_attn_init(&attn, f.p, "attn", &cfg, true), 0);
    ck_assert_int_eq(qkv_block_init(&block, f.p, "h.0", &cfg, true), 0);
    fx_alloc_random(&f, 0.5);
    assert_no_future_leak(&f, run_self_attn, &attn, 8);
    assert_no_future_leak(&f, run_block, &block, 8);
    fx_close(&f);
}
END_TEST

START_TEST(test_one_head_equals_single_head)
{
    fixture f;
    fx_open(&f, 4);
    const int C = 4, T = 5;
    qkv_block_config cfg = {.n_embd = C, .n_head = 1, .n_layer = 1};
    qkv_attn_head head;
    qkv_self_attn attn;
    ck_assert_int_eq(qkv_attn_head_init(&head, f.p, "head", C, C, true), 0);
    ck_assert_int_eq(qkv_self_attn_init(&attn, f.p, "attn", &cfg, true), 0);
    fx_alloc_random(&f, 0.5);
    /* c_attn's rows are the queries', then the keys', then the values' weights. */
    size_t n = (size_t)C * C;
    memcpy(attn.c_attn.weight->data, head.query.weight->data, n * sizeof(qkv_real));
    memcpy(attn.c_attn.weight->data + n, head.key.weight->data, n * sizeof(qkv_real));
    memcpy(attn.c_attn.weight->data + 2 * n, head.value.weight->data, n * sizeof(qkv_real));
    memset(attn.c_attn.bias->data, 0, 3 * C * sizeof(qkv_real));
    set_identity(attn.c_proj.weight->data, C);
    memset(attn.c_proj.bias->data, 0, C * sizeof(qkv_real));
    qkv_tensor *x = randn3(&f, 2, T, C), *w1 = NULL, *w2 = NULL;
    qkv_tensor *y1 = qkv_attn_head_forward(&head, &f.ctx, x, &w1);
    qkv_tensor *y2 = qkv_self_attn_forward(&attn, &f.ctx, x, NULL, &w2);
    ck_assert_qkv(y1);
    ck_assert_qkv(y2);
    ck_assert(qkv_same_shape(y1, y2) && w1->size == w2->size);
    ck_assert_double_le(max_abs_diff(y1->data, y2->data, y1->size), 1e-6);
    ck_assert_double_le(max_abs_diff(w1->data, w2->data, w1->size), 1e-6);
    fx_close(&f);
}
END_TEST

/* The loss Σ y ⊙ r's gradients: every parameter's, then x's, into g. */
static void gradients(fixture *f, qkv_tensor *x, qkv_tensor *y, qkv_tensor *r, qkv_real *g)
{
    qkv_params_zero_grad(f->p);
    ck_assert_qkv(y);
    ck_assert_int_eq(qkv_backward(f->ctx.arena, qkv_sum(f->ctx.arena, qkv_mul(f->ctx.arena, y, r))),
                     0);
    memcpy(g, f->p->grad, f->p->total * sizeof *g);
    memcpy(g + f->p->total, x->grad, x->size * sizeof *g);
}

/* Without weights asked for, q, k and v come from one product and stay side
 * by side; asked for, from three. The outputs must be the same bits (each
 * value is the same sum, and in training the same dropout from the same
 * rng), the gradients the same up to the order in which x's three gradients
 * are summed. C = 48: a width that cuts the product's column tiles
 * differently at N = C and N = 3C. */
static void packed_against_apart(bool train)
{
    fixture f;
    fx_open(&f, 21);
    enum { B = 2, T = 40, C = 48 };
    qkv_block_config cfg = {.n_embd = C, .n_head = 3, .n_layer = 1, .dropout = train ? 0.25 : 0};
    qkv_self_attn attn;
    ck_assert_int_eq(qkv_self_attn_init(&attn, f.p, "attn", &cfg, true), 0);
    fx_alloc_random(&f, 0.3);
    f.ctx.train = train;
    qkv_tensor *x1 = randn3(&f, B, T, C), *r = randn3(&f, B, T, C), *w = NULL;
    qkv_tensor *x2 = copy_of(&f, x1);
    qkv_set_requires_grad(x1, true);
    qkv_set_requires_grad(x2, true);
    qkv_rng_seed(f.ctx.rng, 5);
    qkv_tensor *packed = qkv_self_attn_forward(&attn, &f.ctx, x1, NULL, NULL);
    qkv_rng_seed(f.ctx.rng, 5);
    qkv_tensor *apart = qkv_self_attn_forward(&attn, &f.ctx, x2, NULL, &w);
    ck_assert_qkv(packed);
    ck_assert_qkv(apart);
    ck_assert(w && qkv_same_shape(packed, apart));
    ck_assert_msg(memcmp(packed->data, apart->data, packed->size * sizeof *packed->data) == 0,
                  "packed and apart outputs differ (%s)", train ? "training" : "eval");
    size_t n = f.p->total + x1->size;
    qkv_real *g1 = malloc(2 * n * sizeof *g1), *g2 = g1 + n;
    ck_assert(g1);
    gradients(&f, x1, packed, r, g1);
    gradients(&f, x2, apart, r, g2);
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs(g1[i] - g2[i]) <= 1e-5 * fmax(1, fabs(g2[i])),
                      "gradient %zu of %zu: packed %.9g, apart %.9g", i, n, g1[i], g2[i]);
    free(g1);
    fx_close(&f);
}

START_TEST(test_packed_same_as_apart)
{
    packed_against_apart(false);
    packed_against_apart(true);
}
END_TEST

/* y[b, t] = x[b, perm[t]] for (B,T,C) tensors. */
static qkv_tensor *permute_positions(fixture *f, const qkv_tensor *x, const int *perm)
{
    int B = x->shape[0], T = x->shape[1], C = x->shape[2];
    qkv_tensor *y = copy_of(f, x);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            memcpy(y->data + ((size_t)b * T + t) * C, x->data + ((size_t)b * T + perm[t]) * C,
                   (size_t)C * sizeof(qkv_real));
    return y;
}

START_TEST(test_self_attention_permutation_equivariant)
{
    fixture f;
    fx_open(&f, 5);
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1};
    qkv_self_attn attn;
    ck_assert_int_eq(qkv_self_attn_init(&attn, f.p, "attn", &cfg, false), 0);
    fx_alloc_random(&f, 0.5);
    int perm[7];
    qkv_test_random_perm(&f.rng, 7, perm);
    qkv_tensor *x = randn3(&f, 2, 7, 8);
    qkv_tensor *y = qkv_self_attn_forward(&attn, &f.ctx, x, NULL, NULL);
    qkv_tensor *xp = permute_positions(&f, x, perm);
    qkv_tensor *yp = qkv_self_attn_forward(&attn, &f.ctx, xp, NULL, NULL);
    ck_assert_qkv(y);
    ck_assert_qkv(yp);
    qkv_tensor *py = permute_positions(&f, y, perm);
    ck_assert_double_le(max_abs_diff(py->data, yp->data, y->size), 1e-5);
    fx_close(&f);
}
END_TEST

START_TEST(test_cross_attention_memory_permutation_invariant)
{
    fixture f;
    fx_open(&f, 6);
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1};
    qkv_cross_attn cross;
    ck_assert_int_eq(qkv_cross_attn_init(&cross, f.p, "cross", &cfg, 6), 0);
    fx_alloc_random(&f, 0.5);
    const int Tk = 5;
    int perm[5];
    qkv_test_random_perm(&f.rng, Tk, perm);
    uint8_t valid[2][5] = {{1, 1, 1, 0, 0}, {1, 1, 1, 1, 1}}, valid_p[2][5];
    for (int b = 0; b < 2; b++)
        for (int j = 0; j < Tk; j++)
            valid_p[b][j] = valid[b][perm[j]];
    qkv_tensor *x = randn3(&f, 2, 3, 8), *mem = randn3(&f, 2, Tk, 6);
    qkv_tensor *y = qkv_cross_attn_forward(&cross, &f.ctx, x, mem, &valid[0][0], NULL);
    qkv_tensor *yp = qkv_cross_attn_forward(&cross, &f.ctx, x, permute_positions(&f, mem, perm),
                                            &valid_p[0][0], NULL);
    ck_assert_qkv(y);
    ck_assert_qkv(yp);
    ck_assert_double_le(max_abs_diff(y->data, yp->data, y->size), 1e-5);
    fx_close(&f);
}
END_TEST

/* Overwrite the positions of x (B,T,C) where valid (B,T) is 0 with new random values. */
static qkv_tensor *scramble_padding(fixture *f, const qkv_tensor *x, const uint8_t *valid)
{
    int B = x->shape[0], T = x->shape[1], C = x->shape[2];
    qkv_tensor *y = copy_of(f, x);
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            if (!valid[b * T + t])
                for (int c = 0; c < C; c++)
                    y->data[((size_t)b * T + t) * C + c] = (qkv_real)(10 * qkv_rng_normal(&f->rng));
    return y;
}

START_TEST(test_padding_changes_nothing)
{
    fixture f;
    fx_open(&f, 7);
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 2};
    qkv_cross_attn cross;
    qkv_cross_block dec;
    qkv_block enc;
    ck_assert_int_eq(qkv_cross_attn_init(&cross, f.p, "cross", &cfg, 8), 0);
    ck_assert_int_eq(qkv_cross_block_init(&dec, f.p, "dec", &cfg, 8), 0);
    ck_assert_int_eq(qkv_block_init(&enc, f.p, "enc", &cfg, false), 0);
    fx_alloc_random(&f, 0.5);
    const uint8_t valid[2][5] = {{1, 1, 1, 0, 0}, {0, 1, 1, 1, 1}};
    qkv_tensor *x = randn3(&f, 2, 4, 8), *mem = randn3(&f, 2, 5, 8);
    qkv_tensor *mem2 = scramble_padding(&f, mem, &valid[0][0]);

    qkv_tensor *y = qkv_cross_attn_forward(&cross, &f.ctx, x, mem, &valid[0][0], NULL);
    qkv_tensor *y2 = qkv_cross_attn_forward(&cross, &f.ctx, x, mem2, &valid[0][0], NULL);
    ck_assert(y && y2 && memcmp(y->data, y2->data, y->size * sizeof(qkv_real)) == 0);

    y = qkv_cross_block_forward(&dec, &f.ctx, x, mem, &valid[0][0], NULL, NULL);
    y2 = qkv_cross_block_forward(&dec, &f.ctx, x, mem2, &valid[0][0], NULL, NULL);
    ck_assert(y && y2 && memcmp(y->data, y2->data, y->size * sizeof(qkv_real)) == 0);

    /* In the encoder, padding must not change any real position's output. */
    y = qkv_block_forward(&enc, &f.ctx, mem, &valid[0][0], NULL);
    y2 = qkv_block_forward(&enc, &f.ctx, mem2, &valid[0][0], NULL);
    ck_assert(y && y2);
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 5; t++)
            if (valid[b][t])
                ck_assert_msg(memcmp(y->data + (b * 5 + t) * 8, y2->data + (b * 5 + t) * 8,
                                     8 * sizeof(qkv_real)) == 0,
                              "encoder output (%d,%d) changed with the padding", b, t);
    fx_close(&f);
}
END_TEST

START_TEST(test_gradients_reach_memory)
{
    fixture f;
    fx_open(&f, 8);
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1};
    qkv_cross_block dec;
    ck_assert_int_eq(qkv_cross_block_init(&dec, f.p, "dec", &cfg, 6), 0);
    fx_alloc_random(&f, 0.5);
    const uint8_t valid[2][4] = {{1, 1, 0, 0}, {1, 1, 1, 1}};
    qkv_tensor *x = randn3(&f, 2, 3, 8), *mem = randn3(&f, 2, 4, 6);
    qkv_set_requires_grad(mem, true);
    qkv_tensor *y = qkv_cross_block_forward(&dec, &f.ctx, x, mem, &valid[0][0], NULL, NULL);
    ck_assert_qkv(y);
    qkv_tensor *r = qkv_randn(f.ctx.arena, y->ndim, y->shape, 1, &f.rng);
    qkv_tensor *loss = qkv_sum(f.ctx.arena, qkv_mul(f.ctx.arena, y, r));
    ck_assert_int_eq(qkv_backward(f.ctx.arena, loss), 0);
    ck_assert_ptr_nonnull(mem->grad);
    for (int b = 0; b < 2; b++)
        for (int t = 0; t < 4; t++) {
            double norm = 0;
            for (int c = 0; c < 6; c++)
                norm += fabs((double)mem->grad[(b * 4 + t) * 6 + c]);
            if (valid[b][t])
                ck_assert_msg(norm > 1e-4, "memory position (%d,%d) got no gradient", b, t);
            else
                ck_assert_msg(norm == 0, "padded memory position (%d,%d) got gradient %g", b, t,
                              norm);
        }
    fx_close(&f);
}
END_TEST

START_TEST(test_kv_cache_matches_uncached)
{
    fixture f;
    fx_open(&f, 9);
    enum { L = 2, B = 2, T = 7, Tk = 5 };
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = L};
    qkv_block gpt[L];
    qkv_cross_block dec[L];
    char name[16];
    for (int l = 0; l < L; l++) {
        snprintf(name, sizeof name, "h.%d", l);
        ck_assert_int_eq(qkv_block_init(&gpt[l], f.p, name, &cfg, true), 0);
        snprintf(name, sizeof name, "dec.%d", l);
        ck_assert_int_eq(qkv_cross_block_init(&dec[l], f.p, name, &cfg, 6), 0);
    }
    fx_alloc_random(&f, 0.3);
    bool was = qkv_set_grad_enabled(false);
    const uint8_t valid[B][Tk] = {{1, 1, 1, 1, 0}, {1, 1, 1, 1, 1}};
    qkv_tensor *x = randn3(&f, B, T, 8), *mem = randn3(&f, B, Tk, 6);
    qkv_tensor *full = x, *full_dec = x, *mk[L], *mv[L];
    for (int l = 0; l < L; l++) {
        full = qkv_block_forward(&gpt[l], &f.ctx, full, NULL, NULL);
        full_dec =
            qkv_cross_block_forward(&dec[l], &f.ctx, full_dec, mem, &valid[0][0], NULL, NULL);
        ck_assert_int_eq(qkv_cross_attn_memory(&dec[l].cross, &f.ctx, mem, &mk[l], &mv[l]), 0);
    }
    ck_assert_qkv(full);
    ck_assert_qkv(full_dec);

    qkv_kv_cache *cache = qkv_kv_cache_new(&cfg, B, T), *cache_dec = qkv_kv_cache_new(&cfg, B, T);
    ck_assert_qkv(cache);
    ck_assert_qkv(cache_dec);
    /* A prompt of 3 positions at once, then one position at a time. */
    for (int t0 = 0, n = 3; t0 < T; t0 += n, n = 1) {
        qkv_tensor *h = rows_of(&f, x, t0, n), *h_dec = h;
        for (int l = 0; l < L; l++) {
            h = qkv_block_forward_cached(&gpt[l], &f.ctx, h, cache, l);
            h_dec = qkv_cross_block_forward_cached(&dec[l], &f.ctx, h_dec, cache_dec, l, mk[l],
                                                   mv[l], &valid[0][0]);
        }
        ck_assert_qkv(h);
        ck_assert_qkv(h_dec);
        qkv_tensor *want = rows_of(&f, full, t0, n), *want_dec = rows_of(&f, full_dec, t0, n);
        ck_assert_double_le(max_abs_diff(h->data, want->data, h->size), 1e-5);
        ck_assert_double_le(max_abs_diff(h_dec->data, want_dec->data, h->size), 1e-5);
        ck_assert_int_eq(cache->len[L - 1], t0 + n);
    }
    qkv_kv_cache_reset(cache);
    ck_assert_int_eq(cache->len[0], 0);
    qkv_kv_cache_free(cache);
    qkv_kv_cache_free(cache_dec);
    qkv_set_grad_enabled(was);
    fx_close(&f);
}
END_TEST

START_TEST(test_kv_cache_misuse_is_an_error)
{
    fixture f;
    fx_open(&f, 10);
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1};
    qkv_self_attn attn, enc;
    ck_assert_int_eq(qkv_self_attn_init(&attn, f.p, "attn", &cfg, true), 0);
    ck_assert_int_eq(qkv_self_attn_init(&enc, f.p, "enc", &cfg, false), 0);
    fx_alloc_random(&f, 0.5);
    qkv_kv_cache *c = qkv_kv_cache_new(&cfg, 2, 4);
    ck_assert_qkv(c);

    ck_assert_ptr_null(qkv_self_attn_forward_cached(&attn, &f.ctx, randn3(&f, 2, 1, 8), c, 0));
    ck_assert_error("grad");
    bool was = qkv_set_grad_enabled(false);
    ck_assert_qkv(qkv_self_attn_forward_cached(&attn, &f.ctx, randn3(&f, 2, 3, 8), c, 0));
    ck_assert_ptr_null(qkv_self_attn_forward_cached(&attn, &f.ctx, randn3(&f, 2, 2, 8), c, 0));
    ck_assert_error("3 of 4", "2 new");
    ck_assert_int_eq(c->len[0], 3);
    ck_assert_ptr_null(qkv_self_attn_forward_cached(&attn, &f.ctx, randn3(&f, 3, 1, 8), c, 0));
    ck_assert_error("batch 3", "batch 2");
    ck_assert_ptr_null(qkv_self_attn_forward_cached(&attn, &f.ctx, randn3(&f, 2, 1, 8), c, 1));
    ck_assert_error("layer 1");
    ck_assert_ptr_null(qkv_self_attn_forward_cached(&attn, &f.ctx, randn3(&f, 2, 1, 8), NULL, 0));
    ck_assert_ptr_null(qkv_self_attn_forward_cached(&enc, &f.ctx, randn3(&f, 2, 1, 8), c, 0));
    ck_assert_error("causal");
    ck_assert_int_eq(c->len[0], 3);
    ck_assert_qkv(qkv_self_attn_forward_cached(&attn, &f.ctx, randn3(&f, 2, 1, 8), c, 0));
    ck_assert_int_eq(c->len[0], 4);
    qkv_set_grad_enabled(was);
    qkv_kv_cache_free(c);
    fx_close(&f);
}
END_TEST

START_TEST(test_weights_through_blocks)
{
    fixture f;
    fx_open(&f, 14);
    qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 1};
    qkv_block block;
    qkv_cross_block dec;
    ck_assert_int_eq(qkv_block_init(&block, f.p, "h.0", &cfg, true), 0);
    ck_assert_int_eq(qkv_cross_block_init(&dec, f.p, "dec.0", &cfg, 6), 0);
    fx_alloc_random(&f, 0.5);
    qkv_tensor *w = NULL, *ws = NULL, *wc = NULL;
    ck_assert_qkv(qkv_block_forward(&block, &f.ctx, randn3(&f, 2, 3, 8), NULL, &w));
    ck_assert(w && w->ndim == 4 && w->shape[0] == 2 && w->shape[1] == 2 && w->shape[2] == 3 &&
              w->shape[3] == 3);
    assert_causal_weights(w);
    ck_assert_qkv(qkv_cross_block_forward(&dec, &f.ctx, randn3(&f, 2, 3, 8), randn3(&f, 2, 5, 6),
                                          NULL, &ws, &wc));
    ck_assert(ws && ws->shape[2] == 3 && ws->shape[3] == 3);
    ck_assert(wc && wc->ndim == 4 && wc->shape[1] == 2 && wc->shape[2] == 3 && wc->shape[3] == 5);
    fx_close(&f);
}
END_TEST

static Suite *nn_attention_suite(void)
{
    Suite *s = suite_create("nn_attention");
    TCase *tc = tcase_create("attention");
    tcase_add_test(tc, test_single_head_worked_example);
    tcase_add_test(tc, test_causal_weights_lower_triangular);
    tcase_add_test(tc, test_causal_no_future_leak);
    tcase_add_test(tc, test_one_head_equals_single_head);
    tcase_add_test(tc, test_packed_same_as_apart);
    tcase_add_test(tc, test_self_attention_permutation_equivariant);
    tcase_add_test(tc, test_cross_attention_memory_permutation_invariant);
    tcase_add_test(tc, test_padding_changes_nothing);
    tcase_add_test(tc, test_gradients_reach_memory);
    tcase_add_test(tc, test_kv_cache_matches_uncached);
    tcase_add_test(tc, test_kv_cache_misuse_is_an_error);
    tcase_add_test(tc, test_weights_through_blocks);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(nn_attention_suite)
