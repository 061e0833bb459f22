/* add, sub, mul and div with NumPy broadcasting, and scale (see qkv/ops.h).
 *
 * Two paths. The model's own shapes (a residual: the same shape; a bias or a
 * position table: y's shape is x's trailing dims) take the fast one, rows of
 * vector kernels shared among threads. Every other pair that broadcasts (both
 * operands stretched, size-1 dims, y of more dims than x) takes the general
 * one: each value found by strides, 0 along a stretched dim, and the backward
 * sums the gradient over those dims. */
#include <string.h>

#include "graph.h"
#include "kernels/cpu.h"
#include "kernels/hot.h"

typedef enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV } binop;

static const char *binop_name[] = {"qkv_add", "qkv_sub", "qkv_mul", "qkv_div"};

/* The fast path's case: y's shape equals x's trailing dims (all of them: the same shape). */
static bool broadcasts(const qkv_tensor *x, const qkv_tensor *y)
{
    if (y->ndim > x->ndim)
        return false;
    for (int i = 1; i <= y->ndim; i++)
        if (y->shape[y->ndim - i] != x->shape[x->ndim - i])
            return false;
    return true;
}

/* The values are walked as rows of `cols` (the last may be shorter); row r
 * pairs with y + r·ystride: ystride 0 when y is broadcast (cols = y's size),
 * ystride = cols when x and y have the same shape (rows are just chunks to
 * share out among threads). */
typedef struct rows_view {
    size_t n, cols, ystride;
} rows_view;

static rows_view view_of(const qkv_tensor *x, const qkv_tensor *y)
{
    enum { CHUNK = 4096 };
    if (x->size == y->size)
        return (rows_view){x->size, CHUNK, CHUNK};
    return (rows_view){x->size, y->size, 0};
}

/* o = x op y over m values: one row of the view, at the CPU's vector width.
 * The op is chosen outside the loops so each one vectorizes. */
QKV__KERNEL_BODY void binary_row_body(qkv_real *o, const qkv_real *x, const qkv_real *y, size_t m,
                                      binop op)
{
    if (op == OP_ADD) {
#pragma omp simd
        for (size_t j = 0; j < m; j++)
            o[j] = x[j] + y[j];
    } else if (op == OP_SUB) {
#pragma omp simd
        for (size_t j = 0; j < m; j++)
            o[j] = x[j] - y[j];
    } else if (op == OP_MUL) {
#pragma omp simd
        for (size_t j = 0; j < m; j++)
            o[j] = x[j] * y[j];
    } else {
#pragma omp simd
        for (size_t j = 0; j < m; j++)
            o[j] = x[j] / y[j];
    }
}
QKV__KERNEL(binary_row,
            (qkv_real *o, const qkv_real *x, const qkv_real *y, size_t m, binop op),
            (o, x, y, m, op))

/* The signature of a row kernel: o = x op y, or o += x (op) y. */
typedef void row_kernel(qkv_real *o, const qkv_real *x, const qkv_real *y, size_t m, binop op);

/* Run kernel over every row of the view, the rows shared among the threads. */
static void over_rows(row_kernel *kernel, qkv_real *o, const qkv_real *x, const qkv_real *y,
                      rows_view v, binop op)
{
    size_t rows = (v.n + v.cols - 1) / v.cols;
#pragma omp parallel for schedule(static) if (v.n >= QKV__PAR_MIN)
    for (size_t r = 0; r < rows; r++) {
        size_t lo = r * v.cols, m = v.n - lo < v.cols ? v.n - lo : v.cols;
        kernel(o + lo, x + lo, y + r * v.ystride, m, op);
    }
}

/* d += g (add, sub), g · y (mul) or g / y (div) over m values. */
QKV__KERNEL_BODY void backward_x_row_body(qkv_real *d, const qkv_real *g, const qkv_real *y,
                                          size_t m, binop op)
{
    if (op == OP_MUL) {
#pragma omp simd
        for (size_t j = 0; j < m; j++)
            d[j] += g[j] * y[j];
    } else if (op == OP_DIV) {
#pragma omp simd
        for (size_t j = 0; j < m; j++)
            d[j] += g[j] / y[j];
    } else {
#pragma omp simd
        for (size_t j = 0; j < m; j++)
            d[j] += g[j];
    }
}
QKV__KERNEL(backward_x_row,
            (qkv_real *d, const qkv_real *g, const qkv_real *y, size_t m, binop op),
            (d, g, y, m, op))

/* d = g over m values (y and op unused: the row_kernel signature). */
static void copy_row(qkv_real *d, const qkv_real *g, const qkv_real *y, size_t m, binop op)
{
    (void)y, (void)op;
    memcpy(d, g, m * sizeof *d);
}

enum { COLUMN_BLOCK = 64 }; /* columns one task of binary_backward_y sums */

/* acc[0..nj) = Σ_r g[r·ny + j] (x NULL) or Σ_r g[r·ny + j] · x[r·ny + j],
 * the rows in order 0..rows-1. */
static void column_block_sums(qkv_real *acc, const qkv_real *g, const qkv_real *x, size_t rows,
                              size_t ny, size_t nj)
{
    for (size_t j = 0; j < nj; j++)
        acc[j] = 0;
    for (size_t r = 0; r < rows; r++)
        backward_x_row(acc, g + r * ny, x ? x + r * ny : NULL, nj, x ? OP_MUL : OP_ADD);
}

/* dy += ±Σ_rows dout (add, sub), Σ_rows dout · x (mul) or -Σ_rows dout · x / y² (div; y is
 * the same in every row, so it divides the sum once); dy = when assigning. Each task owns a
 * block of columns and walks the rows in order: no races, and the same sums
 * at any thread count. */
static void binary_backward_y(qkv_real *dy, const qkv_real *dout, const qkv_real *x,
                              const qkv_real *y, size_t rows, size_t ny, binop op, bool assign)
{
    qkv_real sign = op == OP_SUB ? -1 : 1;
    bool times_x = op == OP_MUL || op == OP_DIV;
#pragma omp parallel for schedule(static) if (rows * ny >= QKV__PAR_MIN)
    for (size_t j0 = 0; j0 < ny; j0 += COLUMN_BLOCK) {
        size_t nj = ny - j0 < COLUMN_BLOCK ? ny - j0 : COLUMN_BLOCK;
        qkv_real acc[COLUMN_BLOCK];
        column_block_sums(acc, dout + j0, times_x ? x + j0 : NULL, rows, ny, nj);
        for (size_t j = 0; j < nj; j++)
            dy[j0 + j] = (assign ? 0 : dy[j0 + j]) +
                         (op == OP_DIV ? -acc[j] / (y[j0 + j] * y[j0 + j]) : sign * acc[j]);
    }
}

void qkv__add_column_sums(qkv_real *dst, const qkv_real *src, size_t rows, size_t cols)
{
    binary_backward_y(dst, src, NULL, NULL, rows, cols, OP_ADD, false);
}

/* ---- the general path: any two shapes that broadcast ---- */

/* The result's shape of x op y under NumPy's rule: the shapes aligned on the
 * right, each dim the two extents when equal, or the other one where one is 1
 * (a missing dim counts as 1). False when some dim has two different extents
 * neither of which is 1. */
static bool broadcast_shape(const qkv_tensor *x, const qkv_tensor *y, int *ndim, int *shape)
{
    *ndim = x->ndim > y->ndim ? x->ndim : y->ndim;
    for (int i = 1; i <= *ndim; i++) {
        int ex = i <= x->ndim ? x->shape[x->ndim - i] : 1;
        int ey = i <= y->ndim ? y->shape[y->ndim - i] : 1;
        if (ex != ey && ex != 1 && ey != 1)
            return false;
        shape[*ndim - i] = ex == 1 ? ey : ex;
    }
    return true;
}

/* How to walk t (contiguous) along the result's dims, padded on the left to
 * QKV_MAX_DIMS: stride[k] is how far t moves when the result's index k moves
 * by one, 0 where t is stretched (an extent 1, or a dim t lacks). */
static void broadcast_strides(const qkv_tensor *t, const qkv_tensor *out, size_t *stride)
{
    size_t step = 1;
    for (int i = 1; i <= QKV_MAX_DIMS; i++) {
        bool has = i <= t->ndim;
        int e = has ? t->shape[t->ndim - i] : 1, eo = i <= out->ndim ? out->shape[out->ndim - i] : 1;
        stride[QKV_MAX_DIMS - i] = has && e == eo && e > 1 ? step : 0;
        step *= (size_t)e;
    }
}

/* The result as rows of its last dim, with both operands' strides. */
typedef struct walk {
    int ext[QKV_MAX_DIMS];                      /* the result's extents, padded with 1s on the left */
    size_t sx[QKV_MAX_DIMS], sy[QKV_MAX_DIMS]; /* x's and y's strides (broadcast_strides) */
    size_t rows, cols;                          /* rows of the last dim, and its extent */
} walk;

static walk walk_of(const qkv_tensor *out, const qkv_tensor *x, const qkv_tensor *y)
{
    walk w;
    for (int k = 0; k < QKV_MAX_DIMS; k++) {
        int i = k - (QKV_MAX_DIMS - out->ndim);
        w.ext[k] = i < 0 ? 1 : out->shape[i];
    }
    broadcast_strides(x, out, w.sx);
    broadcast_strides(y, out, w.sy);
    w.rows = (size_t)w.ext[0] * (size_t)w.ext[1] * (size_t)w.ext[2];
    w.cols = (size_t)w.ext[3];
    return w;
}

/* Where row r of the result starts in an operand of the given strides. */
static inline size_t row_start(const walk *w, const size_t *stride, size_t r)
{
    size_t e1 = (size_t)w->ext[1], e2 = (size_t)w->ext[2];
    return r / e2 / e1 * stride[0] + r / e2 % e1 * stride[1] + r % e2 * stride[2];
}

/* x op y for one pair of values. */
static inline qkv_real apply(binop op, qkv_real x, qkv_real y)
{
    return op == OP_ADD ? x + y : op == OP_SUB ? x - y : op == OP_MUL ? x * y : x / y;
}

/* out = x op y over every value of out, x and y found by their strides.
 * Each row of the result belongs to one thread. */
static void binary_general(qkv_tensor *out, const qkv_tensor *x, const qkv_tensor *y, binop op)
{
    walk w = walk_of(out, x, y);
#pragma omp parallel for schedule(static) if (out->size >= QKV__PAR_MIN)
    for (size_t r = 0; r < w.rows; r++) {
        const qkv_real *xr = x->data + row_start(&w, w.sx, r), *yr = y->data + row_start(&w, w.sy, r);
        qkv_real *o = out->data + r * w.cols;
        for (size_t j = 0; j < w.cols; j++)
            o[j] = apply(op, xr[j * w.sx[3]], yr[j * w.sy[3]]);
    }
}

/* d(x op y)/dx · g (first true) or d(x op y)/dy · g, at one pair of values. */
static inline qkv_real slope(binop op, bool first, qkv_real g, qkv_real x, qkv_real y)
{
    if (first)
        return op == OP_MUL ? g * y : op == OP_DIV ? g / y : g;
    return op == OP_ADD ? g : op == OP_SUB ? -g : op == OP_MUL ? g * x : -g * x / (y * y);
}

/* The gradient of node n's first operand (first true) or second one += the
 * output's gradient times the slope, summed over the dims where that operand
 * was stretched (assigned instead when fresh). The output is walked in order,
 * so the sums are the same at any thread count; an operand of the output's
 * size takes each value once, so then its rows are shared among threads. */
static void backward_general(const qkv_node *n, binop op, bool first, bool fresh)
{
    const qkv_tensor *x = n->in[0], *y = n->in[1], *out = n->out, *t = first ? x : y;
    if (fresh)
        memset(t->grad, 0, t->size * sizeof *t->grad);
    walk w = walk_of(out, x, y);
    const size_t *st = first ? w.sx : w.sy;
#pragma omp parallel for schedule(static) if (t->size == out->size && out->size >= QKV__PAR_MIN)
    for (size_t r = 0; r < w.rows; r++) {
        const qkv_real *xr = x->data + row_start(&w, w.sx, r), *yr = y->data + row_start(&w, w.sy, r);
        const qkv_real *g = out->grad + r * w.cols;
        qkv_real *d = t->grad + row_start(&w, st, r);
        for (size_t j = 0; j < w.cols; j++)
            d[j * st[3]] += slope(op, first, g[j], xr[j * w.sx[3]], yr[j * w.sy[3]]);
    }
}

static void binary_backward(qkv_node *n, binop op)
{
    qkv_tensor *x = n->in[0], *y = n->in[1];
    if (!broadcasts(x, y)) { /* the general path's result */
        if (x->grad)
            backward_general(n, op, true, qkv__fresh(n, 0));
        if (y->grad)
            backward_general(n, op, false, qkv__fresh(n, 1));
        return;
    }
    bool scaled = op == OP_MUL || op == OP_DIV; /* a first contribution is dout itself, or scaled */
    if (x->grad)
        over_rows(qkv__fresh(n, 0) ? (scaled ? binary_row : copy_row) : backward_x_row, x->grad,
                  n->out->grad, y->data, view_of(x, y), op);
    if (y->grad) /* same shape: one row, and the column blocks are the parallel tasks */
        binary_backward_y(y->grad, n->out->grad, x->data, y->data, x->size / y->size, y->size, op,
                          qkv__fresh(n, 1));
}

static void add_backward(qkv_node *n) { binary_backward(n, OP_ADD); }
static void sub_backward(qkv_node *n) { binary_backward(n, OP_SUB); }
static void mul_backward(qkv_node *n) { binary_backward(n, OP_MUL); }
static void div_backward(qkv_node *n) { binary_backward(n, OP_DIV); }

static qkv_tensor *binary(qkv_arena *a, qkv_tensor *x, qkv_tensor *y, binop op)
{
    static const qkv__backward_fn backward[] = {add_backward, sub_backward, mul_backward,
                                                div_backward};
    qkv_tensor *in[2] = {x, y};
    if (qkv__check_inputs(binop_name[op], a, "x y", 2, in) < 0)
        return NULL;
    int ndim, shape[QKV_MAX_DIMS];
    if (!broadcast_shape(x, y, &ndim, shape))
        return qkv__shape_error(binop_name[op],
                                "the shapes do not broadcast (aligned on the right, each pair of "
                                "extents must agree or one be 1)",
                                x, y);
    qkv_tensor *out = qkv_tensor_new(a, ndim, shape);
    if (!out)
        return NULL;
    if (broadcasts(x, y)) /* the model's shapes: the vector rows */
        over_rows(binary_row, out->data, x->data, y->data, view_of(x, y), op);
    else
        binary_general(out, x, y, op);
    qkv_node *n = qkv__record(a, out, binop_name[op], backward[op], 2, in);
    if (n)
        n->assigns = true;
    return out;
}

qkv_tensor *qkv_add(qkv_arena *a, qkv_tensor *x, qkv_tensor *y) { return binary(a, x, y, OP_ADD); }
qkv_tensor *qkv_sub(qkv_arena *a, qkv_tensor *x, qkv_tensor *y) { return binary(a, x, y, OP_SUB); }
qkv_tensor *qkv_mul(qkv_arena *a, qkv_tensor *x, qkv_tensor *y) { return binary(a, x, y, OP_MUL); }
qkv_tensor *qkv_div(qkv_arena *a, qkv_tensor *x, qkv_tensor *y) { return binary(a, x, y, OP_DIV); }

static void scale_backward(qkv_node *n)
{
    qkv_real s = *(qkv_real *)n->ctx;
    qkv_tensor *x = n->in[0];
    for (size_t i = 0; i < x->size; i++)
        x->grad[i] += s * n->out->grad[i];
}

qkv_tensor *qkv_scale(qkv_arena *a, qkv_tensor *x, qkv_real s)
{
    if (qkv__check_inputs("qkv_scale", a, "x", 1, &x) < 0 ||
        qkv__not_finite("qkv_scale", "s", (double)s))
        return NULL;
    qkv_tensor *out = qkv__like(a, x);
    if (!out)
        return NULL;
    for (size_t i = 0; i < x->size; i++)
        out->data[i] = s * x->data[i];
    qkv_node *n = qkv__record(a, out, "scale", scale_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &s, sizeof s))
        return NULL;
    return out;
}

/* ---- the kernels on their own, for qkv bench --ops and tests (kernels/hot.h) ---- */

static void hot_add(const qkv__hot_data *d) { binary_row(d->c, d->a, d->b, d->n, OP_ADD); }
static void hot_mul(const qkv__hot_data *d) { binary_row(d->c, d->a, d->b, d->n, OP_MUL); }
static void hot_mul_back(const qkv__hot_data *d) { backward_x_row(d->c, d->a, d->b, d->n, OP_MUL); }

const qkv__hot_kernel qkv__hot_elementwise[] = {
    {"add", hot_add, qkv__hot_values, QKV__HOT_STORES},
    {"mul", hot_mul, qkv__hot_values, QKV__HOT_STORES},
    {"mul backward (+=)", hot_mul_back, qkv__hot_values, QKV__HOT_STORES},
    {0},
};
