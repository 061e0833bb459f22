/* The attention core's gradients and kernels (float build): the backward
 * against the plain loops (tensor/attention_plain.c) in both head layouts,
 * shapes refused by name, the tiles against the plain loops, the same bits on
 * any thread count, memory that grows linearly with T, a backward that
 * keeps its own mask, and the packed call (q, k, v side by side in one
 * tensor) against the three apart. The forward's rules are in
 * test_attention_core.c. */
#include <omp.h>

#include "attention_tiles.h"
#include "tensor/attention.h"
#include "tensor/attention_plain.h"
#include "testing.h"

/* got's rows×d values, rows pitch apart, against the packed want. */
static void assert_grad_close(const qkv_real *got, const qkv_real *want, int rows, int d, int pitch,
                              const char *what, const char *grad)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < d; c++) {
            double g = got[(size_t)r * pitch + c], w = want[(size_t)r * d + c];
            ck_assert_msg(fabs(g - w) <= 2e-5 * fmax(1, fabs(w)),
                          "%s: %s[%d][%d] = %.9g, want %.9g", what, grad, r, c, g, w);
        }
}

/* The gradients of q, k and v (B,H,T,d) from qkv_attention, or (B,T,H·d)
 * from qkv_attention_heads when side_by_side, for the loss Σ out ⊙ r (so
 * dO = r), against qkv__attention_plain_backward head by head. Keys the
 * padding mask hides get gradients exactly 0. */
static void check_backward(bool side_by_side, int B, int H, int tq, int tk, int d,
                           const qkv_mask *m, const char *what)
{
    qkv_arena *a = qkv_arena_new(1 << 22);
    qkv_rng rng;
    qkv_rng_seed(&rng, 41);
    int C = H * d;
    int nd = side_by_side ? 3 : 4;
    const int *qs = side_by_side ? (const int[]){B, tq, C} : (const int[]){B, H, tq, d};
    const int *ks = side_by_side ? (const int[]){B, tk, C} : (const int[]){B, H, tk, d};
    qkv_tensor *q = qkv_randn(a, nd, qs, 1.5, &rng), *k = qkv_randn(a, nd, ks, 1.5, &rng);
    qkv_tensor *v = qkv_randn(a, nd, ks, 1.5, &rng), *r = qkv_randn(a, nd, qs, 1, &rng);
    qkv_set_requires_grad(q, true);
    qkv_set_requires_grad(k, true);
    qkv_set_requires_grad(v, true);
    qkv_tensor *out = side_by_side ? qkv_attention_heads(a, q, k, v, H, m, 0, NULL, NULL)
                                   : qkv_attention(a, q, k, v, m, 0, NULL, NULL);
    ck_assert_qkv(out);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, out, r))), 0);

    size_t nq = (size_t)tq * d, nk = (size_t)tk * d;
    qkv_real *hq = qkv_arena_alloc(a, 2 * (nq + nk) * 2 * sizeof(qkv_real));
    qkv_real *hk = hq + nq, *hv = hk + nk, *hdo = hv + nk, *o = hdo + nq, *dq = o + nq;
    qkv_real *dk = dq + nq, *dv = dk + nk;
    qkv_real *p = qkv_arena_alloc(a, (size_t)tq * tk * sizeof *p);
    qkv_real *ds = qkv_arena_alloc(a, (size_t)tq * tk * sizeof *ds);
    ck_assert(hq && p && ds);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            /* Where head (b, h) starts in q-like and k-like tensors, its rows pitch apart. */
            size_t head = (size_t)b * H + h;
            size_t at_q = side_by_side ? (size_t)b * tq * C + (size_t)h * d : head * nq;
            size_t at_k = side_by_side ? (size_t)b * tk * C + (size_t)h * d : head * nk;
            int pitch = side_by_side ? C : d;
            attention_gather(hq, q->data + at_q, tq, d, pitch);
            attention_gather(hk, k->data + at_k, tk, d, pitch);
            attention_gather(hv, v->data + at_k, tk, d, pitch);
            attention_gather(hdo, r->data + at_q, tq, d, pitch);
            const uint8_t *valid = m && m->key_valid ? m->key_valid + (size_t)b * tk : NULL;
            qkv__attention_plain(o, p, hq, hk, hv, tq, tk, d, m && m->causal, valid);
            qkv__attention_plain_backward(dq, dk, dv, ds, hq, hk, hv, p, hdo, tq, tk, d);
            assert_grad_close(q->grad + at_q, dq, tq, d, pitch, what, "dq");
            assert_grad_close(k->grad + at_k, dk, tk, d, pitch, what, "dk");
            assert_grad_close(v->grad + at_k, dv, tk, d, pitch, what, "dv");
            for (int j = 0; valid && j < tk; j++)
                for (int c = 0; c < d && !valid[j]; c++) {
                    size_t at = at_k + (size_t)j * pitch + c;
                    ck_assert_msg(k->grad[at] == 0 && v->grad[at] == 0 && dk[j * d + c] == 0 &&
                                      dv[j * d + c] == 0,
                                  "%s: padded key %d of entry %d has a gradient", what, j, b);
                }
        }
    qkv_arena_free(&a);
}

START_TEST(test_backward_matches_plain)
{
    /* Several heads and batch entries; Tq != Tk; no mask, causal, padding
     * and both; longer than a block of queries (the causal core skips the
     * masked triangle block by block in backward too); and, with 2 threads
     * or more, enough heads of enough size (B·H·Tq·Tk >= QKV__PAR_MIN) for
     * the core to share whole heads out among the threads. */
    enum { TK = 70 };
    uint8_t valid[2 * TK]; /* entry 0: the last 5 keys padding; entry 1: keys 23..29 */
    for (int j = 0; j < 2 * TK; j++)
        valid[j] = j < TK - 5 || (j >= TK && j < TK + 23) || j >= TK + 30;
    const qkv_mask none = {0}, causal = {.causal = true}, padding = {.key_valid = valid},
                   both = {.causal = true, .key_valid = valid};
    const struct { const qkv_mask *m; const char *what; } masks[] = {
        {&none, "no mask"},
        {&causal, "causal"},
        {&padding, "padding"},
        {&both, "causal + padding"}};
    for (int side_by_side = 0; side_by_side < 2; side_by_side++)
        for (int i = 0; i < 4; i++) {
            check_backward(side_by_side, 2, 3, 40, TK, 8, masks[i].m, masks[i].what);
            check_backward(side_by_side, 2, 2, 5, TK, 4, masks[i].m, masks[i].what);
            check_backward(side_by_side, 2, 4, TK, TK, 8, masks[i].m, masks[i].what);
        }
}
END_TEST

START_TEST(test_bad_shapes_are_named)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *q = qkv_zeros(a, QKV_SHAPE(2, 3, 4)), *k = qkv_zeros(a, QKV_SHAPE(2, 5, 4));
    qkv_tensor *v_bad = qkv_zeros(a, QKV_SHAPE(2, 5, 3)), *k_bad = qkv_zeros(a, QKV_SHAPE(2, 5, 3));
    ck_assert_ptr_null(qkv_attention(a, q, k, v_bad, NULL, 0, NULL, NULL));
    ck_assert_msg(strstr(qkv_last_error(), "(2,5,4)") && strstr(qkv_last_error(), "(2,5,3)"),
                  "message: %s", qkv_last_error());
    ck_assert_ptr_null(qkv_attention(a, q, k_bad, k_bad, NULL, 0, NULL, NULL));
    ck_assert_msg(strstr(qkv_last_error(), "attention") && strstr(qkv_last_error(), "(2,3,4)"),
                  "message: %s", qkv_last_error());
    ck_assert_ptr_null(qkv_attention(a, q, k, k, NULL, 0.5f, NULL, NULL));
    ck_assert_msg(strstr(qkv_last_error(), "rng"), "message: %s", qkv_last_error());
    ck_assert_ptr_nonnull(qkv_attention(a, q, k, k, NULL, 0, NULL, NULL)); /* Tq != Tk is fine */
    ck_assert_ptr_null(qkv_attention_heads(a, q, k, k, 3, NULL, 0, NULL, NULL));
    ck_assert_msg(strstr(qkv_last_error(), "width 4 is not a multiple of n_head 3"), "message: %s",
                  qkv_last_error());
    ck_assert_ptr_null(qkv_attention_heads(a, q, k_bad, k_bad, 2, NULL, 0, NULL, NULL));
    ck_assert_msg(strstr(qkv_last_error(), "(2,3,4)") && strstr(qkv_last_error(), "(2,5,3)"),
                  "message: %s", qkv_last_error());
    ck_assert_ptr_nonnull(qkv_attention_heads(a, q, k, k, 2, NULL, 0, NULL, NULL));
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_tiles_match_plain)
{
    /* Sizes that cut the tiles unevenly, every mask, both layouts
     * (tests/support/attention_tiles.c); float rounding over up to 513 keys. */
    attention_tiles_check(3e-5);
}
END_TEST

/* Output and gradients of q, k, v of a causal, padded attention with dropout
 * on `threads` threads, one after the other into got (4 tensors' values). */
static void run_on_threads(int threads, qkv_real *got, size_t n)
{
    enum { B = 2, T = 200, H = 2, C = 16 };
    omp_set_num_threads(threads);
    qkv_arena *a = qkv_arena_new(1 << 22);
    qkv_rng rng, drop;
    qkv_rng_seed(&rng, 51);
    qkv_rng_seed(&drop, 52);
    static uint8_t valid[B * T];
    for (int j = 0; j < B * T; j++)
        valid[j] = j % 7 != 3;
    qkv_mask m = {.causal = true, .key_valid = valid};
    qkv_tensor *x[3];
    for (int i = 0; i < 3; i++) {
        x[i] = qkv_randn(a, QKV_SHAPE(B, T, C), 1.5, &rng);
        qkv_set_requires_grad(x[i], true);
    }
    qkv_tensor *r = qkv_randn(a, QKV_SHAPE(B, T, C), 1, &rng);
    qkv_tensor *out = qkv_attention_heads(a, x[0], x[1], x[2], H, &m, 0.2f, &drop, NULL);
    ck_assert_qkv(out);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, out, r))), 0);
    size_t each = out->size;
    ck_assert_uint_eq(4 * each, n);
    memcpy(got, out->data, each * sizeof *got);
    for (int i = 0; i < 3; i++)
        memcpy(got + (i + 1) * each, x[i]->grad, each * sizeof *got);
    qkv_arena_free(&a);
}

START_TEST(test_same_bits_on_any_thread_count)
{
    /* B·H·T² >= QKV__PAR_MIN: the tiles are shared out among the threads,
     * and dropout's verdicts come from a hash, not from the order of draws. */
    enum { N = 4 * 2 * 200 * 16 };
    static qkv_real one[N], two[N];
    int saved = omp_get_max_threads();
    run_on_threads(1, one, N);
    run_on_threads(2, two, N);
    omp_set_num_threads(saved);
    ck_assert_msg(memcmp(one, two, sizeof one) == 0, "1 and 2 threads differ");
}
END_TEST

/* Arena bytes a causal self-attention over T keys (one head, d = 16) takes,
 * forward and backward together. */
static size_t bytes_at(int T)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_rng rng;
    qkv_rng_seed(&rng, 61);
    qkv_tensor *x[3];
    for (int i = 0; i < 3; i++) {
        x[i] = qkv_randn(a, QKV_SHAPE(1, T, 16), 1, &rng);
        qkv_set_requires_grad(x[i], true);
    }
    size_t before = qkv_arena_used(a);
    qkv_mask causal = {.causal = true};
    qkv_tensor *out = qkv_attention(a, x[0], x[1], x[2], &causal, 0, NULL, NULL);
    ck_assert_qkv(out);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, out)), 0);
    size_t used = qkv_arena_used(a) - before;
    qkv_arena_free(&a);
    return used;
}

START_TEST(test_memory_grows_linearly_with_T)
{
    /* Stored T×T weights would grow 3x as much from T = 512 to 1024 as from
     * 256 to 512 (quadratic); what the core keeps per query (its output,
     * log-sum-exp, gradients) grows 2x. Small T: this runs under qemu too. */
    double d1 = (double)bytes_at(512) - (double)bytes_at(256);
    double d2 = (double)bytes_at(1024) - (double)bytes_at(512);
    ck_assert_msg(d1 > 0 && d2 <= 2.2 * d1, "arena growth %.0f then %.0f bytes: not linear", d1,
                  d2);
    /* ...and less than half of what the weights alone would add. */
    ck_assert_msg(d2 < (1024.0 * 1024 - 512.0 * 512) * sizeof(qkv_real) / 2,
                  "%.0f bytes for 512 more keys", d2);
}
END_TEST

/* The gradient of q after a padded attention, the mask array overwritten
 * between the forward and the backward when `clobber`. */
static void grad_with_mask(bool clobber, qkv_real *dq, size_t n)
{
    enum { B = 2, T = 40, C = 8 };
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_rng rng;
    qkv_rng_seed(&rng, 71);
    uint8_t valid[B * T];
    for (int j = 0; j < B * T; j++)
        valid[j] = j % 5 != 2;
    qkv_mask m = {.key_valid = valid};
    qkv_tensor *q = qkv_randn(a, QKV_SHAPE(B, T, C), 1.5, &rng);
    qkv_tensor *kv = qkv_randn(a, QKV_SHAPE(B, T, C), 1.5, &rng);
    qkv_set_requires_grad(q, true);
    qkv_tensor *out = qkv_attention_heads(a, q, kv, kv, 2, &m, 0, NULL, NULL);
    ck_assert_qkv(out);
    if (clobber)
        memset(valid, 1, sizeof valid);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, out, out))), 0);
    ck_assert_uint_eq(q->size, n);
    memcpy(dq, q->grad, n * sizeof *dq);
    qkv_arena_free(&a);
}

START_TEST(test_backward_keeps_its_own_mask)
{
    /* The backward masks the recomputed weights again: from a copy of the
     * mask, not the caller's array, which may be gone or reused by then. */
    enum { N = 2 * 40 * 8 };
    qkv_real kept[N], clobbered[N];
    grad_with_mask(false, kept, N);
    grad_with_mask(true, clobbered, N);
    ck_assert(memcmp(kept, clobbered, sizeof kept) == 0);
}
END_TEST

/* Columns [c0, c0 + C) of every row of x (B,T,3C) as a (B,T,C) tensor that wants a gradient. */
static qkv_tensor *columns(qkv_arena *a, const qkv_tensor *x, int c0, int C)
{
    int B = x->shape[0], T = x->shape[1];
    qkv_tensor *t = qkv_tensor_new(a, 3, (const int[]){B, T, C});
    ck_assert_qkv(t);
    for (size_t r = 0; r < (size_t)B * T; r++)
        memcpy(t->data + r * C, x->data + r * 3 * C + c0, (size_t)C * sizeof *t->data);
    qkv_set_requires_grad(t, true);
    return t;
}

/* The packed call on qkv (B,T,3C) against qkv_attention_heads on its three
 * column blocks apart, under causal + padding masks and dropout, on `threads`:
 * the same output and the same gradients, bit for bit, since both run the
 * same tiles on the same values; only where they read and write differs. */
static void packed_against_apart(int threads)
{
    enum { B = 2, T = 70, H = 2, D = 8, C = H * D }; /* T: two full query tiles and a ragged one */
    omp_set_num_threads(threads);
    qkv_arena *a = qkv_arena_new(1 << 22);
    qkv_rng rng;
    qkv_rng_seed(&rng, 71);
    qkv_tensor *qkv = qkv_randn(a, QKV_SHAPE(B, T, 3 * C), 1.5, &rng);
    qkv_tensor *r = qkv_randn(a, QKV_SHAPE(B, T, C), 1, &rng);
    ck_assert_qkv(qkv);
    qkv_set_requires_grad(qkv, true);
    qkv_tensor *apart[3];
    for (int i = 0; i < 3; i++)
        apart[i] = columns(a, qkv, i * C, C);
    uint8_t valid[B][T];
    for (int b = 0; b < B; b++)
        for (int t = 0; t < T; t++)
            valid[b][t] = !(b == 1 && t >= 30 && t < 45); /* a run across a tile boundary */
    qkv_mask mask = {.causal = true, .key_valid = &valid[0][0]};
    qkv_rng drop_packed, drop_apart;
    qkv_rng_seed(&drop_packed, 5);
    qkv_rng_seed(&drop_apart, 5);
    qkv_tensor *y = qkv__attention_packed(a, qkv, H, &mask, 0.2, &drop_packed);
    qkv_tensor *want = qkv_attention_heads(a, apart[0], apart[1], apart[2], H, &mask, 0.2,
                                           &drop_apart, NULL);
    ck_assert_qkv(y);
    ck_assert_qkv(want);
    ck_assert(y->ndim == 3 && y->shape[0] == B && y->shape[1] == T && y->shape[2] == C);
    ck_assert_msg(memcmp(y->data, want->data, y->size * sizeof *y->data) == 0,
                  "packed output differs from the three apart (%d threads)", threads);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, y, r))), 0);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, want, r))), 0);
    for (size_t row = 0; row < (size_t)B * T; row++)
        for (int i = 0; i < 3; i++)
            ck_assert_msg(memcmp(qkv->grad + row * 3 * C + i * C, apart[i]->grad + row * C,
                                 C * sizeof *qkv->grad) == 0,
                          "the gradient of %c, row %zu, differs (%d threads)", "qkv"[i], row,
                          threads);
    qkv_arena_free(&a);
}

START_TEST(test_packed_matches_apart)
{
    int saved = omp_get_max_threads();
    packed_against_apart(1);
    packed_against_apart(2);
    omp_set_num_threads(saved);
}
END_TEST

START_TEST(test_packed_refuses_bad_shapes)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *not_three = qkv_zeros(a, QKV_SHAPE(1, 4, 8)), *flat = qkv_zeros(a, QKV_SHAPE(4, 12));
    qkv_tensor *fine = qkv_zeros(a, QKV_SHAPE(1, 4, 12));
    struct { qkv_tensor *qkv; int heads; qkv_real dropout; const char *says; } bad[] = {
        {not_three, 1, 0, "(1,4,8)"}, {flat, 1, 0, "(4,12)"}, {NULL, 1, 0, "qkv"},
        {fine, 3, 0, "width 4 is not a multiple of n_head 3"}, {fine, 1, 0.5, "rng"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_ptr_null(qkv__attention_packed(a, bad[i].qkv, bad[i].heads, NULL, bad[i].dropout,
                                                 NULL));
        ck_assert_msg(strstr(qkv_last_error(), "qkv__attention_packed") &&
                          strstr(qkv_last_error(), bad[i].says),
                      "case %zu: message: %s", i, qkv_last_error());
    }
    ck_assert_ptr_nonnull(qkv__attention_packed(a, fine, 2, NULL, 0, NULL));
    qkv_arena_free(&a);
}
END_TEST

static Suite *attention_backward_suite(void)
{
    Suite *s = suite_create("attention_backward");
    TCase *tc = tcase_create("backward");
    tcase_add_test(tc, test_backward_matches_plain);
    tcase_add_test(tc, test_bad_shapes_are_named);
    tcase_add_test(tc, test_tiles_match_plain);
    tcase_add_test(tc, test_same_bits_on_any_thread_count);
    tcase_add_test(tc, test_memory_grows_linearly_with_T);
    tcase_add_test(tc, test_backward_keeps_its_own_mask);
    tcase_add_test(tc, test_packed_matches_apart);
    tcase_add_test(tc, test_packed_refuses_bad_shapes);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(attention_backward_suite)
