/* The tiled attention core (tensor/attention_*.c) against the plain loops of
 * tensor/attention_plain.c, run by both builds: tests/tensor/test_attention_core.c
 * (float) and tests/tensor/grad_attention_tiles.c (double, to 1e-12). Its output,
 * its weights and the gradients of q, k and v, at sizes that cut the tiles
 * of queries and keys unevenly (neither T a multiple of a tile, Tq != Tk, one
 * query, more keys than two tiles), with several heads in both layouts,
 * under no mask, the causal mask, key padding (a run of padded keys across
 * a tile boundary, and queries that see no key at all) and both. */
#include "attention_tiles.h"

#include <string.h>

#include "tensor/attention.h"
#include "tensor/attention_plain.h"
#include "testing.h"

/* rows×d values from src, rows pitch apart, packed into dst. */
static void gather(qkv_real *dst, const qkv_real *src, int rows, int d, int pitch)
{
    for (int r = 0; r < rows; r++)
        memcpy(dst + (size_t)r * d, src + (size_t)r * pitch, (size_t)d * sizeof *dst);
}

static void expect_rows(double tol, const qkv_real *got, int pitch, const qkv_real *want,
                        int rows, int d, const char *what, const char *name, int tq, int tk)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < d; c++) {
            double g = got[(size_t)r * pitch + c], w = want[(size_t)r * d + c];
            if (!(fabs(g - w) <= tol * fmax(1, fabs(w)))) /* Check logs every assertion: only a miss */
                ck_abort_msg("%s, Tq %d Tk %d: %s[%d][%d] = %.17g, want %.17g", what, tq, tk,
                             name, r, c, g, w);
        }
}

/* One case: B = 2 entries of H = 2 heads of size d = 8, for the loss Σ out ⊙ r. */
static void check_case(double tol, bool side_by_side, int tq, int tk, const qkv_mask *m, const char *what)
{
    enum { B = 2, H = 2, D = 8, C = H * D };
    qkv_test_env f = qkv_test_env_new(23);
    int nd = side_by_side ? 3 : 4, pitch = side_by_side ? C : D;
    const int *qs = side_by_side ? (const int[]){B, tq, C} : (const int[]){B, H, tq, D};
    const int *ks = side_by_side ? (const int[]){B, tk, C} : (const int[]){B, H, tk, D};
    qkv_tensor *q = qkv_randn(f.a, nd, qs, 1.5, &f.rng), *k = qkv_randn(f.a, nd, ks, 1.5, &f.rng);
    qkv_tensor *v = qkv_randn(f.a, nd, ks, 1.5, &f.rng), *r = qkv_randn(f.a, nd, qs, 1, &f.rng);
    qkv_set_requires_grad(q, true);
    qkv_set_requires_grad(k, true);
    qkv_set_requires_grad(v, true);
    qkv_tensor *w = NULL;
    qkv_tensor *out = side_by_side ? qkv_attention_heads(f.a, q, k, v, H, m, 0, NULL, &w)
                                   : qkv_attention(f.a, q, k, v, m, 0, NULL, &w);
    ck_assert_qkv(out);
    ck_assert_int_eq(qkv_backward(f.a, qkv_sum(f.a, qkv_mul(f.a, out, r))), 0);

    size_t nq = (size_t)tq * D, nk = (size_t)tk * D, nw = (size_t)tq * tk;
    qkv_real *buf = qkv_arena_alloc(f.a, (4 * nq + 5 * nk + 2 * nw) * sizeof *buf);
    ck_assert_ptr_nonnull(buf);
    qkv_real *hq = buf, *hdo = hq + nq, *o = hdo + nq, *dq = o + nq, *hk = dq + nq, *hv = hk + nk;
    qkv_real *dk = hv + nk, *dv = dk + nk, *p = dv + nk, *ds = p + nw;
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++) {
            size_t head = (size_t)b * H + h;
            size_t at_q = side_by_side ? (size_t)b * tq * C + (size_t)h * D : head * nq;
            size_t at_k = side_by_side ? (size_t)b * tk * C + (size_t)h * D : head * nk;
            gather(hq, q->data + at_q, tq, D, pitch);
            gather(hk, k->data + at_k, tk, D, pitch);
            gather(hv, v->data + at_k, tk, D, pitch);
            gather(hdo, r->data + at_q, tq, D, pitch);
            const uint8_t *valid = m->key_valid ? m->key_valid + (size_t)b * tk : NULL;
            qkv__attention_plain(o, p, hq, hk, hv, tq, tk, D, m->causal, valid);
            qkv__attention_plain_backward(dq, dk, dv, ds, hq, hk, hv, p, hdo, tq, tk, D);
            expect_rows(tol, out->data + at_q, pitch, o, tq, D, what, "out", tq, tk);
            expect_rows(tol, w->data + head * nw, tk, p, tq, tk, what, "weights", tq, tk);
            expect_rows(tol, q->grad + at_q, pitch, dq, tq, D, what, "dq", tq, tk);
            expect_rows(tol, k->grad + at_k, pitch, dk, tk, D, what, "dk", tq, tk);
            expect_rows(tol, v->grad + at_k, pitch, dv, tk, D, what, "dv", tq, tk);
        }
    qkv_arena_free(&f.a);
}

void attention_tiles_check(double tol)
{
    enum { QT = QUERY_TILE, KT = KEY_TILE, TK_MAX = 2 * KEY_TILE + 1 };
    static const int sizes[][2] = {
        {QT + 7, KT + 45},        /* Tq < Tk: an earlier context, under the causal mask */
        {2 * QT + 3, 2 * QT + 3}, /* self-attention, three query tiles, the last of 3 rows */
        {QT - 5, 2 * KT + 1},     /* three key tiles, the last of one key */
        {1, KT + 1},              /* one query: a generation step */
        {KT + 9, KT + 9},         /* causal tiles that end inside a key tile */
    };
    /* Entry 0 pads keys [KT − 3, KT + 3), across the first key tile's end
     * (where there are that many); entry 1 pads its first 10 keys, so under
     * the causal mask its first queries see no key at all. */
    static uint8_t valid[2 * TK_MAX];
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++) {
        int tq = sizes[s][0], tk = sizes[s][1];
        for (int j = 0; j < tk; j++) {
            valid[j] = !(j >= KT - 3 && j < KT + 3);
            valid[tk + j] = j >= 10;
        }
        const qkv_mask masks[] = {{0}, {.causal = true}, {.key_valid = valid},
                                  {.causal = true, .key_valid = valid}};
        const char *names[] = {"no mask", "causal", "padding", "causal + padding"};
        for (int side_by_side = 0; side_by_side < 2; side_by_side++)
            for (int i = 0; i < 4; i++)
                check_case(tol, side_by_side, tq, tk, &masks[i], names[i]);
    }
}

void attention_gather(qkv_real *dst, const qkv_real *src, int rows, int d, int pitch)
{
    for (int r = 0; r < rows; r++)
        memcpy(dst + (size_t)r * d, src + (size_t)r * pitch, (size_t)d * sizeof *dst);
}
