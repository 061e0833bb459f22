/* Rotary position embedding (RoPE), one node (see qkv/ops.h).
 *
 * Each head's vector of size d is read as d/2 points in the plane, the
 * coordinates (2i, 2i+1); the point i of the vector at position p is turned by
 * the angle p·θ_i, θ_i = 10000^(−2i/d):
 *
 *     y_2i   = x_2i · cos(p·θ_i) − x_2i+1 · sin(p·θ_i)
 *     y_2i+1 = x_2i · sin(p·θ_i) + x_2i+1 · cos(p·θ_i)
 *
 * Applied to a query at position p and a key at position s, the rotations
 * meet in their dot product as one rotation by (p − s)·θ_i: the attention
 * score depends on how far apart the two are, not on where they sit. A
 * rotation is undone by the opposite rotation, which is the backward. */
#include <math.h>

#include "graph.h"

/* The base of the angles' geometric progression (RoFormer's). */
static const double ROPE_BASE = 10000.0;

/* What backward needs. */
typedef struct rope_ctx {
    const qkv_real *cs, *sn; /* (T, d/2) cos and sin of p·θ_i at each row's position */
    int n_head;
} rope_ctx;

/* cs, sn (T, half) = cos, sin of (pos0 + t)·θ_i, computed in double (θ_i
 * once per i, not once per position). */
static void rope_tables(qkv_real *cs, qkv_real *sn, int T, int half, int pos0)
{
    for (int i = 0; i < half; i++) {
        double theta = pow(ROPE_BASE, -(double)i / half);
        for (int t = 0; t < T; t++) {
            double angle = (double)(pos0 + t) * theta;
            cs[(size_t)t * half + i] = (qkv_real)cos(angle);
            sn[(size_t)t * half + i] = (qkv_real)sin(angle);
        }
    }
}

/* y (+)= each pair of x turned by the angle whose cos and sin are cs, sn,
 * times dir (+1 forward, −1 the inverse for backward). x, y are (B,T,H·d). */
static void rotate(qkv_real *y, const qkv_real *x, const qkv_real *cs, const qkv_real *sn, int B,
                   int T, int H, int d, qkv_real dir, bool accumulate)
{
    int half = d / 2;
    size_t rows = (size_t)B * T;
#pragma omp parallel for schedule(static) if (rows * (size_t)H * d >= QKV__PAR_MIN)
    for (size_t r = 0; r < rows; r++) {
        const qkv_real *c = cs + (r % T) * half, *s = sn + (r % T) * half;
        for (int h = 0; h < H; h++) {
            size_t o = (r * H + h) * d;
            for (int i = 0; i < half; i++) {
                qkv_real x0 = x[o + 2 * i], x1 = x[o + 2 * i + 1], si = dir * s[i];
                qkv_real y0 = x0 * c[i] - x1 * si, y1 = x0 * si + x1 * c[i];
                y[o + 2 * i] = accumulate ? y[o + 2 * i] + y0 : y0;
                y[o + 2 * i + 1] = accumulate ? y[o + 2 * i + 1] + y1 : y1;
            }
        }
    }
}

static void rope_backward(qkv_node *n)
{
    const rope_ctx *c = n->ctx;
    qkv_tensor *x = n->in[0];
    int B = x->shape[0], T = x->shape[1], H = c->n_head, d = x->shape[2] / H;
    rotate(x->grad, n->out->grad, c->cs, c->sn, B, T, H, d, -1, true);
}

qkv_tensor *qkv_rope(qkv_arena *a, qkv_tensor *x, int n_head, int pos0)
{
    if (qkv__check_inputs("qkv_rope", a, "x", 1, &x) < 0)
        return NULL;
    char s[64];
    if (x->ndim != 3) {
        qkv_set_error("qkv_rope: x has shape %s; expected (B,T,H·d)", qkv_shape_str(x, s, sizeof s));
        return NULL;
    }
    if (n_head < 1 || x->shape[2] % n_head != 0 || (x->shape[2] / n_head) % 2 != 0) {
        qkv_set_error("qkv_rope: x %s does not split into %d heads of an even size",
                      qkv_shape_str(x, s, sizeof s), n_head);
        return NULL;
    }
    if (pos0 < 0 || pos0 > (1 << 24)) {
        qkv_set_error("qkv_rope: the first position %d is not in [0, 2^24]", pos0);
        return NULL;
    }
    int B = x->shape[0], T = x->shape[1], d = x->shape[2] / n_head, half = d / 2;
    qkv_tensor *y = qkv__like(a, x);
    qkv_real *cs = qkv_arena_alloc(a, (size_t)T * half * sizeof *cs);
    qkv_real *sn = qkv_arena_alloc(a, (size_t)T * half * sizeof *sn);
    if (!y || !cs || !sn)
        return NULL;
    rope_tables(cs, sn, T, half, pos0);
    rotate(y->data, x->data, cs, sn, B, T, n_head, d, 1, false);
    rope_ctx c = {cs, sn, n_head};
    qkv_node *n = qkv__record(a, y, "rope", rope_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &c, sizeof c))
        return NULL;
    return y;
}
