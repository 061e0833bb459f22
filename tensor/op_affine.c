/* affine: y = x·Wᵀ + b in one node, the Linear layer's op (see qkv/ops.h).
 * One output tensor instead of a product and a sum: half the activation
 * memory of a Linear layer, and one pass less over it each way. */
#include "activation.h"
#include "graph.h"
#include "kernels/cpu.h"
#include "kernels/gemm_mixed.h"
#include "kernels/hot.h"
#include "op_affine.h"

static void affine_backward(qkv_node *n)
{
    qkv_tensor *x = n->in[0], *w = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL;
    const qkv_real *dy = n->out->grad;
    int M = (int)qkv__rows(x), in = w->shape[1], out = w->shape[0];
    /* dx (M×in) (+)= dy (M×out) · W (out×in); dW (out×in) += dyᵀ (out×M) · x (M×in) */
    qkv__gemm_product dx = {false, false, M, in, out, 1, dy, out, w->data, in,
                            qkv__fresh(n, 0) ? 0 : 1, x->grad, in};
    qkv__gemm_product dw = {true, false, out, in, M, 1, dy, out, x->data, in, 1, w->grad, in};
    if (x->grad && w->grad) /* the same flops each: one thread apiece */
        qkv__gemm_mixed_two(&dx, &dw);
    else if (x->grad || w->grad) {
        const qkv__gemm_product *p = x->grad ? &dx : &dw;
        qkv__gemm_mixed(1, p->trans_a, p->trans_b, p->M, p->N, p->K, p->alpha, p->A, p->lda, 0,
                        p->B, p->ldb, 0, p->beta, p->C, p->ldc, 0);
    }
    if (b && b->grad) /* db += the column sums of dy */
        qkv__add_column_sums(b->grad, dy, (size_t)M, (size_t)out);
}

/* What the product's epilogue adds and computes on each finished block of
 * y = x·Wᵀ: the bias (or none), then act(y) into g (or not). */
typedef struct finish_ctx {
    const qkv_real *b;   /* (N) or NULL */
    qkv_real *g;         /* (M, N) or NULL */
    int ldg;             /* N */
    qkv_activation act; /* what g holds */
} finish_ctx;

/* c[j] += b[j] for n values: the bias on one row of a block. */
QKV__KERNEL_BODY void add_bias_row_body(qkv_real *c, const qkv_real *b, int n)
{
#pragma omp simd
    for (int j = 0; j < n; j++)
        c[j] = c[j] + b[j];
}
QKV__KERNEL(add_bias_row, (qkv_real *c, const qkv_real *b, int n), (c, b, n))

static void finish_block(void *ctx, qkv_real *c, int ldc, int row, int col, int m, int n)
{
    const finish_ctx *f = ctx;
    for (int i = 0; i < m; i++) {
        qkv_real *ci = c + (size_t)i * ldc;
        if (f->b)
            add_bias_row(ci, f->b + col, n);
        if (f->g)
            qkv__activation_values(f->act, f->g + (size_t)(row + i) * f->ldg + col, ci,
                                   (size_t)n);
    }
}

/* y = x·Wᵀ + b, and *g = act(y) when g is not NULL (act is unused when it
 * is), each block finished (bias, act) by the product itself while it is in
 * cache. */
static qkv_tensor *affine(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b,
                          qkv_tensor **g, qkv_activation act)
{
    qkv_tensor *in[3] = {x, w, b};
    if (qkv__check_inputs("qkv_affine", a, "x w b", b ? 3 : 2, in) < 0)
        return NULL;
    if (w->ndim != 2 || qkv__cols(x) != w->shape[1])
        return qkv__shape_error("qkv_affine", "x (..., in) needs a weight (out, in)", x, w);
    if (b && (b->ndim != 1 || b->shape[0] != w->shape[0]))
        return qkv__shape_error("qkv_affine", "the bias must be (out) for a weight (out, in)", b,
                                w);
    int shape[QKV_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++)
        shape[i] = x->shape[i];
    int M = (int)qkv__rows(x), K = w->shape[1], N = w->shape[0];
    shape[x->ndim - 1] = N;
    qkv_tensor *y = qkv_tensor_new(a, x->ndim, shape);
    if (!y || (g && !(*g = qkv__like(a, y))))
        return NULL;
    finish_ctx f = {b ? b->data : NULL, g ? (*g)->data : NULL, N, act};
    qkv__gemm_epilogue ep = {finish_block, &f};
    /* W is stored (out, in), so the product uses it transposed: (M, in)·(in, out). */
    qkv__gemm_mixed_then(qkv__is_param(w), false, true, M, N, K, 1, x->data, K, w->data, K, 0,
                         y->data, N, b || g ? &ep : NULL);
    qkv_node *n = qkv__record(a, y, "affine", affine_backward, b ? 3 : 2, in);
    if (n)
        n->assigns = true;
    return y;
}

qkv_tensor *qkv_affine(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b)
{
    return affine(a, x, w, b, NULL, QKV_ACTIVATION_GELU);
}

qkv_tensor *qkv__affine_act(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b,
                            qkv_activation act)
{
    qkv_tensor *g = NULL, *y = affine(a, x, w, b, &g, act);
    return y ? qkv__activation_computed(a, act, y, g) : NULL;
}

/* ---- the kernel on its own, for qkv bench --ops and tests (kernels/hot.h) ---- */

/* The bias d (cols) on every row of c. */
static void hot_bias(const qkv__hot_data *d)
{
    for (size_t r = 0; r < d->n / d->cols; r++)
        add_bias_row(d->c + r * d->cols, d->d, d->cols);
}

const qkv__hot_kernel qkv__hot_affine[] = {
    {"bias", hot_bias, qkv__hot_values, QKV__HOT_STORES},
    {0},
};
