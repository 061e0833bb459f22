/* affine: y = x·Wᵀ + b in one node, the Linear layer's op (see qkv/ops.h).
 * One output tensor instead of a product and a sum: half the activation
 * memory of a Linear layer, and one pass less over it each way. */
#include "graph.h"
#include "kernels/gemm.h"

static void affine_backward(qkv_node *n)
{
    qkv_tensor *x = n->in[0], *w = n->in[1], *b = n->n_in > 2 ? n->in[2] : NULL;
    const qkv_real *dy = n->out->grad;
    int M = (int)qkv__rows(x), in = w->shape[1], out = w->shape[0];
    if (x->grad) /* dx (M×in) += dy (M×out) · W (out×in) */
        qkv_gemm(1, false, false, M, in, out, 1, dy, out, 0, w->data, in, 0, 1, x->grad, in, 0);
    if (w->grad) /* dW (out×in) += dyᵀ (out×M) · x (M×in) */
        qkv_gemm(1, true, false, out, in, M, 1, dy, out, 0, x->data, in, 0, 1, w->grad, in, 0);
    if (b && b->grad) /* db += the column sums of dy */
        qkv__add_column_sums(b->grad, dy, (size_t)M, (size_t)out);
}

qkv_tensor *qkv_affine(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b)
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
    if (!y)
        return NULL;
    /* W is stored (out, in), so the product uses it transposed: (M, in)·(in, out). */
    qkv_gemm(1, false, true, M, N, K, 1, x->data, K, 0, w->data, K, 0, 0, y->data, N, 0);
    if (b)
        qkv__add_rows(y->data, b->data, (size_t)M, (size_t)N);
    qkv__record(a, y, "affine", affine_backward, b ? 3 : 2, in);
    return y;
}
