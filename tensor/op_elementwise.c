/* add, sub, mul (with a broadcast trailing operand) and scale (see qkv/ops.h). */
#include <string.h>

#include "graph.h"
#include "kernels/cpu.h"
#include "kernels/hot.h"

typedef enum { OP_ADD, OP_SUB, OP_MUL } binop;

static const char *binop_name[] = {"qkv_add", "qkv_sub", "qkv_mul"};

/* y broadcasts over x when y's shape equals x's trailing dims. */
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
    } else {
#pragma omp simd
        for (size_t j = 0; j < m; j++)
            o[j] = x[j] * y[j];
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

/* d += g (add, sub) or g · y (mul) over m values. */
QKV__KERNEL_BODY void backward_x_row_body(qkv_real *d, const qkv_real *g, const qkv_real *y,
                                          size_t m, binop op)
{
    if (op == OP_MUL) {
#pragma omp simd
        for (size_t j = 0; j < m; j++)
            d[j] += g[j] * y[j];
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

/* dy += ±Σ_rows dout (add, sub) or Σ_rows dout · x (mul); dy = when assigning. Each task owns a
 * block of columns and walks the rows in order: no races, and the same sums
 * at any thread count. */
static void binary_backward_y(qkv_real *dy, const qkv_real *dout, const qkv_real *x, size_t rows,
                              size_t ny, binop op, bool assign)
{
    qkv_real sign = op == OP_SUB ? -1 : 1;
#pragma omp parallel for schedule(static) if (rows * ny >= QKV__PAR_MIN)
    for (size_t j0 = 0; j0 < ny; j0 += COLUMN_BLOCK) {
        size_t nj = ny - j0 < COLUMN_BLOCK ? ny - j0 : COLUMN_BLOCK;
        qkv_real acc[COLUMN_BLOCK];
        column_block_sums(acc, dout + j0, op == OP_MUL ? x + j0 : NULL, rows, ny, nj);
        for (size_t j = 0; j < nj; j++)
            dy[j0 + j] = (assign ? 0 : dy[j0 + j]) + sign * acc[j];
    }
}


void qkv__add_column_sums(qkv_real *dst, const qkv_real *src, size_t rows, size_t cols)
{
    binary_backward_y(dst, src, NULL, rows, cols, OP_ADD, false);
}

static void binary_backward(qkv_node *n, binop op)
{
    qkv_tensor *x = n->in[0], *y = n->in[1];
    if (x->grad) /* a first contribution is dout itself (add, sub) or dout · y (mul) */
        over_rows(qkv__fresh(n, 0) ? (op == OP_MUL ? binary_row : copy_row) : backward_x_row,
                  x->grad, n->out->grad, y->data, view_of(x, y), op);
    if (y->grad) /* same shape: one row, and the column blocks are the parallel tasks */
        binary_backward_y(y->grad, n->out->grad, x->data, x->size / y->size, y->size, op,
                          qkv__fresh(n, 1));
}

static void add_backward(qkv_node *n) { binary_backward(n, OP_ADD); }
static void sub_backward(qkv_node *n) { binary_backward(n, OP_SUB); }
static void mul_backward(qkv_node *n) { binary_backward(n, OP_MUL); }

static qkv_tensor *binary(qkv_arena *a, qkv_tensor *x, qkv_tensor *y, binop op)
{
    static const qkv__backward_fn backward[] = {add_backward, sub_backward, mul_backward};
    qkv_tensor *in[2] = {x, y};
    if (qkv__check_inputs(binop_name[op], a, "x y", 2, in) < 0)
        return NULL;
    if (!broadcasts(x, y))
        return qkv__shape_error(binop_name[op],
                                "the second operand must have the first's shape or its trailing "
                                "dims",
                                x, y);
    qkv_tensor *out = qkv__like(a, x);
    if (!out)
        return NULL;
    over_rows(binary_row, out->data, x->data, y->data, view_of(x, y), op);
    qkv_node *n = qkv__record(a, out, binop_name[op], backward[op], 2, in);
    if (n)
        n->assigns = true;
    return out;
}

qkv_tensor *qkv_add(qkv_arena *a, qkv_tensor *x, qkv_tensor *y) { return binary(a, x, y, OP_ADD); }
qkv_tensor *qkv_sub(qkv_arena *a, qkv_tensor *x, qkv_tensor *y) { return binary(a, x, y, OP_SUB); }
qkv_tensor *qkv_mul(qkv_arena *a, qkv_tensor *x, qkv_tensor *y) { return binary(a, x, y, OP_MUL); }

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
