/* add, sub, mul (with a broadcast trailing operand) and scale (see qkv/ops.h). */
#include "graph.h"

typedef enum { OP_ADD, OP_SUB, OP_MUL } binop;

static const char *binop_name[] = {"add", "sub", "mul"};

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

static void binary_backward(qkv_node *n, binop op)
{
    qkv_tensor *x = n->in[0], *y = n->in[1], *out = n->out;
    size_t ny = y->size, rows = x->size / ny;
    const qkv_real *g = out->grad;
    if (x->grad) {
        qkv_real *gx = x->grad;
#pragma omp parallel for schedule(static) if (x->size >= QKV__PAR_MIN)
        for (size_t i = 0; i < x->size; i++)
            gx[i] += op == OP_MUL ? g[i] * y->data[i % ny] : g[i];
    }
    if (y->grad) {
        /* Sum over the broadcast rows; each thread owns a run of columns. */
        qkv_real sign = op == OP_SUB ? -1 : 1;
#pragma omp parallel for schedule(static) if (x->size >= QKV__PAR_MIN)
        for (size_t j = 0; j < ny; j++) {
            qkv_real s = 0;
            for (size_t r = 0; r < rows; r++)
                s += op == OP_MUL ? g[r * ny + j] * x->data[r * ny + j] : g[r * ny + j];
            y->grad[j] += sign * s;
        }
    }
}

static void add_backward(qkv_node *n) { binary_backward(n, OP_ADD); }
static void sub_backward(qkv_node *n) { binary_backward(n, OP_SUB); }
static void mul_backward(qkv_node *n) { binary_backward(n, OP_MUL); }

static qkv_tensor *binary(qkv_arena *a, qkv_tensor *x, qkv_tensor *y, binop op)
{
    static const qkv_backward_fn backward[] = {add_backward, sub_backward, mul_backward};
    qkv_tensor *in[2] = {x, y};
    if (qkv__any_null(2, in))
        return NULL;
    if (!broadcasts(x, y))
        return qkv__shape_error(binop_name[op],
                                "the second operand must have the first's shape or its trailing "
                                "dims",
                                x, y);
    qkv_tensor *out = qkv__like(a, x);
    if (!out)
        return NULL;
    size_t ny = y->size;
    const qkv_real *xd = x->data, *yd = y->data;
    qkv_real *o = out->data;
#pragma omp parallel for schedule(static) if (x->size >= QKV__PAR_MIN)
    for (size_t i = 0; i < x->size; i++) {
        qkv_real b = yd[i % ny];
        o[i] = op == OP_ADD ? xd[i] + b : op == OP_SUB ? xd[i] - b : xd[i] * b;
    }
    qkv__record(a, out, binop_name[op], backward[op], 2, in);
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
    if (!x)
        return NULL;
    qkv_tensor *out = qkv__like(a, x);
    if (!out)
        return NULL;
    for (size_t i = 0; i < x->size; i++)
        out->data[i] = s * x->data[i];
    qkv_node *n = qkv__record(a, out, "scale", scale_backward, 1, &x);
    if (n) {
        qkv_real *ctx = qkv_arena_alloc(a, sizeof *ctx);
        if (!ctx)
            return NULL;
        *ctx = s;
        n->ctx = ctx;
    }
    return out;
}
