/* Plain-loop references for the ops over any axis (see axis_ops_check.h).
 * Each walks the result's multi-index and reads the inputs' values by the
 * op's formula, the slow and obvious way: no views, no strides. */
#include "axis_ops_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { MAXD = QKV_MAX_DIMS };

/* Step idx to the next multi-index of shape in row-major order; false after the last. */
static bool next_index(int ndim, const int *shape, int *idx)
{
    for (int d = ndim - 1; d >= 0; d--) {
        if (++idx[d] < shape[d])
            return true;
        idx[d] = 0;
    }
    return false;
}

/* x's value at multi-index idx (x's own dims). */
static double at(const qkv_tensor *x, const int *idx)
{
    size_t f = 0;
    for (int d = 0; d < x->ndim; d++)
        f = f * (size_t)x->shape[d] + (size_t)idx[d];
    return (double)x->data[f];
}

/* x's value for the result index idx (ndim dims) under broadcasting: aligned
 * on the right, index 0 where x's extent is 1. */
static double at_broadcast(const qkv_tensor *x, int ndim, const int *idx)
{
    int own[MAXD];
    for (int d = 0; d < x->ndim; d++) {
        int i = idx[ndim - x->ndim + d];
        own[d] = x->shape[d] == 1 ? 0 : i;
    }
    return at(x, own);
}

typedef struct checker {
    double tol;
    int bad;
    const char *what;
} checker;

/* Compare y with want (n values, shape want_shape); count and print a mismatch. */
static void compare(checker *c, const qkv_tensor *y, const double *want, int ndim,
                    const int *shape)
{
    if (!y) {
        fprintf(stderr, "axis ops: %s failed: %s\n", c->what, qkv_last_error());
        c->bad++;
        return;
    }
    bool same = y->ndim == ndim;
    for (int d = 0; same && d < ndim; d++)
        same = y->shape[d] == shape[d];
    if (!same) {
        char s[64];
        fprintf(stderr, "axis ops: %s: shape %s, ndim %d expected\n", c->what,
                qkv_shape_str(y, s, sizeof s), ndim);
        c->bad++;
        return;
    }
    for (size_t i = 0; i < y->size; i++)
        if (!(fabs((double)y->data[i] - want[i]) <= c->tol * fmax(1, fabs(want[i])))) {
            fprintf(stderr, "axis ops: %s value %zu: got %.9g, expected %.9g\n", c->what, i,
                    (double)y->data[i], want[i]);
            c->bad++;
            return;
        }
}

static qkv_tensor *randn(qkv_arena *a, qkv_rng *rng, int ndim, const int *shape)
{
    return qkv_randn(a, ndim, shape, 1, rng);
}

/* ---- broadcasting: add, sub, mul, div ---- */

/* A shape that broadcasts to out: some leading dims dropped, some extents 1. */
static int stretched_shape(qkv_rng *rng, int ndim, const int *out, int *shape)
{
    int n = 1 + (int)qkv_rng_below(rng, (uint64_t)ndim);
    for (int d = 0; d < n; d++)
        shape[d] = qkv_rng_below(rng, 3) == 0 ? 1 : out[ndim - n + d];
    return n;
}

static void check_binary(checker *c, qkv_arena *a, qkv_rng *rng)
{
    static const char *names[] = {"add", "sub", "mul", "div"};
    for (int trial = 0; trial < 24; trial++) {
        int ndim = 1 + (int)qkv_rng_below(rng, MAXD), out[MAXD], xs[MAXD], ys[MAXD];
        for (int d = 0; d < ndim; d++)
            out[d] = 1 + (int)qkv_rng_below(rng, 4);
        int xn = stretched_shape(rng, ndim, out, xs), yn = stretched_shape(rng, ndim, out, ys);
        qkv_tensor *x = randn(a, rng, xn, xs), *y = randn(a, rng, yn, ys);
        /* the result's shape from the rule itself */
        int rn = xn > yn ? xn : yn, rs[MAXD];
        for (int i = 1; i <= rn; i++) {
            int ex = i <= xn ? xs[xn - i] : 1, ey = i <= yn ? ys[yn - i] : 1;
            rs[rn - i] = ex > ey ? ex : ey;
        }
        for (int op = 0; op < 4; op++) {
            qkv_tensor *got = op == 0 ? qkv_add(a, x, y) : op == 1 ? qkv_sub(a, x, y)
                            : op == 2 ? qkv_mul(a, x, y) : qkv_div(a, x, y);
            double want[256];
            int idx[MAXD] = {0};
            size_t k = 0;
            do {
                double u = at_broadcast(x, rn, idx), v = at_broadcast(y, rn, idx);
                want[k++] = op == 0 ? u + v : op == 1 ? u - v : op == 2 ? u * v : u / v;
            } while (next_index(rn, rs, idx));
            c->what = names[op];
            compare(c, got, want, rn, rs);
        }
    }
}

/* ---- exp, log, tanh, sigmoid ---- */

static void check_unary(checker *c, qkv_arena *a, qkv_rng *rng)
{
    qkv_tensor *x = randn(a, rng, 2, (const int[]){7, 9});
    for (size_t i = 0; i < x->size; i++)
        x->data[i] *= 4; /* out to where sigmoid and tanh saturate */
    qkv_tensor *pos = qkv_exp(a, x); /* positive values for log */
    double want[4][63];
    for (size_t i = 0; i < x->size; i++) {
        double v = (double)x->data[i];
        want[0][i] = exp(v);
        want[1][i] = log((double)pos->data[i]);
        want[2][i] = tanh(v);
        want[3][i] = 1 / (1 + exp(-v));
    }
    qkv_tensor *got[4] = {pos, qkv_log(a, pos), qkv_tanh(a, x), qkv_sigmoid(a, x)};
    static const char *names[] = {"exp", "log", "tanh", "sigmoid"};
    for (int f = 0; f < 4; f++) {
        c->what = names[f];
        compare(c, got[f], want[f], 2, x->shape);
    }
}

/* ---- sum, mean, max over an axis; argmax ---- */

static void check_reductions(checker *c, qkv_arena *a, qkv_rng *rng)
{
    for (int ndim = 1; ndim <= MAXD; ndim++)
        for (int axis = -ndim; axis < ndim; axis++)
            for (int keep = 0; keep < 2; keep++) {
                int shape[MAXD], ax = axis < 0 ? axis + ndim : axis;
                for (int d = 0; d < ndim; d++)
                    shape[d] = 1 + (int)qkv_rng_below(rng, 4);
                qkv_tensor *x = randn(a, rng, ndim, shape);
                /* the result's shape: the axis kept as 1, or gone ((1) for a 1-D x) */
                int rn = 0, rs[MAXD];
                for (int d = 0; d < ndim; d++)
                    if (d != ax || keep)
                        rs[rn++] = d == ax ? 1 : shape[d];
                if (rn == 0)
                    rs[rn++] = 1;
                double want[3][256], idx_want[256];
                int idx[MAXD] = {0};
                size_t k = 0;
                do { /* over x's multi-indices with the axis at 0 */
                    if (idx[ax] != 0)
                        continue;
                    int j[MAXD];
                    memcpy(j, idx, sizeof j);
                    double s = 0, m = -INFINITY;
                    int arg = 0;
                    for (j[ax] = 0; j[ax] < shape[ax]; j[ax]++) {
                        double v = at(x, j);
                        s += v;
                        if (v > m)
                            m = v, arg = j[ax];
                    }
                    want[0][k] = s, want[1][k] = s / shape[ax], want[2][k] = m;
                    idx_want[k++] = arg;
                } while (next_index(ndim, shape, idx));
                qkv_tensor *got[3] = {qkv_sum_axis(a, x, axis, keep), qkv_mean_axis(a, x, axis, keep),
                                      qkv_max_axis(a, x, axis, keep)};
                static const char *names[] = {"sum_axis", "mean_axis", "max_axis"};
                for (int r = 0; r < 3; r++) {
                    c->what = names[r];
                    compare(c, got[r], want[r], rn, rs);
                }
                int32_t *arg = qkv_argmax(a, x, axis);
                for (size_t i = 0; i < k; i++)
                    if (!arg || arg[i] != (int32_t)idx_want[i]) {
                        fprintf(stderr, "axis ops: argmax value %zu: got %d, expected %g\n", i,
                                arg ? arg[i] : -1, idx_want[i]);
                        c->bad++;
                        break;
                    }
            }
}

/* ---- the masked mean ---- */

static void check_masked_mean(checker *c, qkv_arena *a, qkv_rng *rng)
{
    for (int ndim = 1; ndim <= MAXD; ndim++)
        for (int axis = 0; axis < ndim; axis++) {
            int shape[MAXD];
            for (int d = 0; d < ndim; d++)
                shape[d] = 1 + (int)qkv_rng_below(rng, 4);
            qkv_tensor *x = randn(a, rng, ndim, shape);
            size_t n_mask = 1;
            for (int d = 0; d <= axis; d++)
                n_mask *= (size_t)shape[d];
            uint8_t mask[256];
            for (size_t i = 0; i < n_mask; i++) /* about a third clear; some rows all clear */
                mask[i] = qkv_rng_below(rng, 3) ? (uint8_t)(1 + qkv_rng_below(rng, 255)) : 0;
            int rn = 0, rs[MAXD];
            for (int d = 0; d < ndim; d++)
                if (d != axis)
                    rs[rn++] = shape[d];
            if (rn == 0)
                rs[rn++] = 1;
            double want[256];
            int idx[MAXD] = {0};
            size_t k = 0;
            do {
                if (idx[axis] != 0)
                    continue;
                int j[MAXD];
                memcpy(j, idx, sizeof j);
                double s = 0;
                int count = 0;
                for (j[axis] = 0; j[axis] < shape[axis]; j[axis]++) {
                    size_t m = 0; /* the mask's flat index: x's dims 0..axis */
                    for (int d = 0; d <= axis; d++)
                        m = m * (size_t)shape[d] + (size_t)j[d];
                    if (mask[m])
                        s += at(x, j), count++;
                }
                want[k++] = count ? s / count : 0;
            } while (next_index(ndim, shape, idx));
            c->what = "masked_mean";
            compare(c, qkv_masked_mean(a, x, axis, mask), want, rn, rs);
        }
}

/* ---- concat, slice, transpose on any axis ---- */

static void check_shapes(checker *c, qkv_arena *a, qkv_rng *rng)
{
    for (int ndim = 1; ndim <= MAXD; ndim++)
        for (int axis = 0; axis < ndim; axis++) {
            int shape[MAXD], parts[3], total = 0;
            for (int d = 0; d < ndim; d++)
                shape[d] = 1 + (int)qkv_rng_below(rng, 3);
            qkv_tensor *xs[3];
            for (int i = 0; i < 3; i++) {
                int s[MAXD];
                memcpy(s, shape, sizeof s);
                s[axis] = parts[i] = 1 + (int)qkv_rng_below(rng, 3);
                total += parts[i];
                xs[i] = randn(a, rng, ndim, s);
            }
            int cs[MAXD], idx[MAXD] = {0};
            memcpy(cs, shape, sizeof cs);
            cs[axis] = total;
            double want[512];
            size_t k = 0;
            do { /* which part holds this index along the axis, and where in it */
                int j[MAXD], i = 0;
                memcpy(j, idx, sizeof j);
                while (j[axis] >= parts[i])
                    j[axis] -= parts[i++];
                want[k++] = at(xs[i], j);
            } while (next_index(ndim, cs, idx));
            c->what = "concat_axis";
            qkv_tensor *cat = qkv_concat_axis(a, 3, xs, axis - (axis % 2 ? ndim : 0));
            compare(c, cat, want, ndim, cs);
            if (!cat)
                continue;

            int start = (int)qkv_rng_below(rng, (uint64_t)total);
            int len = 1 + (int)qkv_rng_below(rng, (uint64_t)(total - start)), ss[MAXD];
            memcpy(ss, cs, sizeof ss);
            ss[axis] = len;
            memset(idx, 0, sizeof idx);
            k = 0;
            do {
                int j[MAXD];
                memcpy(j, idx, sizeof j);
                j[axis] += start;
                want[k++] = at(cat, j);
            } while (next_index(ndim, ss, idx));
            c->what = "slice_axis";
            compare(c, qkv_slice_axis(a, cat, axis, start, len), want, ndim, ss);

            int other = (int)qkv_rng_below(rng, (uint64_t)ndim), ts[MAXD];
            memcpy(ts, cs, sizeof ts);
            ts[axis] = cs[other], ts[other] = cs[axis];
            memset(idx, 0, sizeof idx);
            k = 0;
            do {
                int j[MAXD];
                memcpy(j, idx, sizeof j);
                j[axis] = idx[other], j[other] = idx[axis];
                want[k++] = at(cat, j);
            } while (next_index(ndim, ts, idx));
            c->what = "transpose_axes";
            compare(c, qkv_transpose_axes(a, cat, axis, other - ndim), want, ndim, ts);
        }
}

int axis_ops_forward_check(double tol)
{
    checker c = {tol, 0, ""};
    qkv_rng rng;
    qkv_rng_seed(&rng, 22);
    qkv_arena *a = qkv_arena_new(1 << 20);
    if (!a)
        return 1;
    check_binary(&c, a, &rng);
    check_unary(&c, a, &rng);
    check_reductions(&c, a, &rng);
    check_masked_mean(&c, a, &rng);
    check_shapes(&c, a, &rng);
    qkv_arena_free(&a);
    return c.bad;
}
