/* matmul: batched matrix product with transpose flags (see qkv/ops.h). */
#include "graph.h"
#include "kernels/gemm_mixed.h"

typedef struct mm_ctx {
    bool tx, tw;     /* transpose flags of the forward */
    int batch;       /* number of matrix products */
    int M, N, K;     /* op(x) is M×K, op(w) is K×N */
    bool shared_w;   /* w is one 2-D matrix used by every batch entry */
} mm_ctx;

/* Rows and columns of a stored matrix (its last two dims). */
static int rows_of(const qkv_tensor *t) { return t->shape[t->ndim - 2]; }
static int cols_of(const qkv_tensor *t) { return t->shape[t->ndim - 1]; }

/* For y = op(x)·op(w) with dy: dx = dy·op(w)ᵀ and dw = op(x)ᵀ·dy, each
 * written as one gemm on the stored layouts, so no transpose is ever copied. */
static void matmul_backward(qkv_node *n)
{
    mm_ctx *c = n->ctx;
    qkv_tensor *x = n->in[0], *w = n->in[1], *y = n->out;
    int M = c->M, N = c->N, K = c->K, B = c->batch;
    size_t sx = (size_t)M * K, sw = c->shared_w ? 0 : (size_t)K * N, sy = (size_t)M * N;
    int ldx = cols_of(x), ldw = cols_of(w);
    if (x->grad) {
        if (!c->tx) /* dx (M×K) = dy (M×N) · op(w)ᵀ */
            qkv__gemm_mixed(B, false, !c->tw, M, K, N, 1, y->grad, N, sy, w->data, ldw, sw, 1,
                            x->grad, ldx, sx);
        else /* dx stored K×M = op(w) · dyᵀ */
            qkv__gemm_mixed(B, c->tw, true, K, M, N, 1, w->data, ldw, sw, y->grad, N, sy, 1,
                            x->grad, ldx, sx);
    }
    if (w->grad) {
        /* A shared weight sums over the batch: fold the batch into one product. */
        int Bw = c->shared_w ? 1 : B, Mw = c->shared_w ? B * M : M;
        if (c->shared_w && c->tx) { /* x stored (B,K,M): no single fold, add per batch entry */
            for (int b = 0; b < B; b++)
                if (!c->tw)
                    qkv__gemm_mixed(1, false, false, K, N, M, 1, x->data + b * sx, ldx, 0,
                                    y->grad + b * sy, N, 0, 1, w->grad, ldw, 0);
                else
                    qkv__gemm_mixed(1, true, true, N, K, M, 1, y->grad + b * sy, N, 0,
                                    x->data + b * sx, ldx, 0, 1, w->grad, ldw, 0);
        } else if (!c->tw) /* dw (K×N) = op(x)ᵀ · dy */
            qkv__gemm_mixed(Bw, !c->tx, false, K, N, Mw, 1, x->data, ldx, sx, y->grad, N, sy, 1,
                            w->grad, ldw, sw);
        else /* dw stored N×K = dyᵀ · op(x) */
            qkv__gemm_mixed(Bw, true, c->tx, N, K, Mw, 1, y->grad, N, sy, x->data, ldx, sx, 1,
                            w->grad, ldw, sw);
    }
}

qkv_tensor *qkv_matmul(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, bool trans_x, bool trans_w)
{
    qkv_tensor *in[2] = {x, w};
    if (qkv__check_inputs("qkv_matmul", a, "x w", 2, in) < 0)
        return NULL;
    if (x->ndim < 2 || w->ndim < 2)
        return qkv__shape_error("qkv_matmul", "both operands need at least 2 dimensions", x, w);
    int M = trans_x ? cols_of(x) : rows_of(x), K = trans_x ? rows_of(x) : cols_of(x);
    int Kw = trans_w ? cols_of(w) : rows_of(w), N = trans_w ? rows_of(w) : cols_of(w);
    if (K != Kw)
        return qkv__shape_error("qkv_matmul", "inner dimensions differ", x, w);
    bool shared = w->ndim == 2 && x->ndim > 2;
    if (!shared) {
        if (w->ndim != x->ndim)
            return qkv__shape_error("qkv_matmul", "batch dimensions differ", x, w);
        for (int i = 0; i < x->ndim - 2; i++)
            if (x->shape[i] != w->shape[i])
                return qkv__shape_error("qkv_matmul", "batch dimensions differ", x, w);
    }
    int shape[QKV_MAX_DIMS];
    for (int i = 0; i < x->ndim - 2; i++)
        shape[i] = x->shape[i];
    shape[x->ndim - 2] = M;
    shape[x->ndim - 1] = N;
    qkv_tensor *y = qkv_tensor_new(a, x->ndim, shape);
    if (!y)
        return NULL;
    int batch = (int)(x->size / ((size_t)M * K));
    size_t sx = (size_t)M * K, sy = (size_t)M * N;
    if (shared && !trans_x) /* rows of every batch entry are one tall matrix */
        qkv__gemm_mixed_then(qkv__is_param(w), false, trans_w, batch * M, N, K, 1, x->data, K,
                             w->data, cols_of(w), 0, y->data, N, NULL);
    else
        qkv__gemm_mixed(batch, trans_x, trans_w, M, N, K, 1, x->data, cols_of(x), sx, w->data,
                        cols_of(w), shared ? 0 : (size_t)K * N, 0, y->data, N, sy);
    qkv_node *n = qkv__record(a, y, "matmul", matmul_backward, 2, in);
    mm_ctx c = {trans_x, trans_w, batch, M, N, K, shared};
    if (n && !qkv__set_ctx(a, n, &c, sizeof c))
        return NULL;
    return y;
}
