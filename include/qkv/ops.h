/* qkv/ops.h — tensor ops, each with a forward and a backward pass.
 *
 * Every op takes the arena its result (and graph node) comes from, computes
 * the result at once, and records a node when grad mode is on and an input
 * requires grad. On bad arguments an op returns NULL and sets a message
 * naming the op and the shapes involved; given a NULL input (an earlier op
 * failed) it returns NULL with a message naming the op and the input that
 * keeps the earlier failure as its cause (qkv/base.h), so a chain is checked
 * once:
 *
 *     qkv_arena *a = qkv_arena_new(1 << 16);
 *     qkv_tensor *x = qkv_ones(a, QKV_SHAPE(2, 3)), *w = qkv_ones(a, QKV_SHAPE(4, 3));
 *     qkv_tensor *b = qkv_zeros(a, QKV_SHAPE(4));
 *     qkv_tensor *h = qkv_gelu(a, qkv_add(a, qkv_matmul(a, x, w, false, true), b));  // (2,4)
 *     if (!h) fprintf(stderr, "qkv: %s\n", qkv_last_error());  // says which op failed, and why
 *     qkv_arena_free(&a);
 *
 * Integer arrays (token ids, targets, masks) are copied into the arena, so
 * the caller's arrays need not outlive the call.
 */
#ifndef QKV_OPS_H
#define QKV_OPS_H

#include "qkv/tensor.h"

QKV_BEGIN_DECLS

/* ---- elementwise (y is x's shape, or broadcast: y's shape equals x's trailing dims) ---- */

/* x + y, with y broadcast over x's leading dims (a bias (C) over (B,T,C)). */
qkv_tensor *qkv_add(qkv_arena *a, qkv_tensor *x, qkv_tensor *y);

/* x - y, with y broadcast over x's leading dims. */
qkv_tensor *qkv_sub(qkv_arena *a, qkv_tensor *x, qkv_tensor *y);

/* x * y elementwise, with y broadcast over x's leading dims. */
qkv_tensor *qkv_mul(qkv_arena *a, qkv_tensor *x, qkv_tensor *y);

/* s * x for a constant s. */
qkv_tensor *qkv_scale(qkv_arena *a, qkv_tensor *x, qkv_real s);

/* max(x, 0); the gradient at exactly 0 is taken as 0. */
qkv_tensor *qkv_relu(qkv_arena *a, qkv_tensor *x);

/* max(x, 0)²: ReLU squared (Primer's MLP activation; no kink at 0). */
qkv_tensor *qkv_relu2(qkv_arena *a, qkv_tensor *x);

/* GELU, tanh form: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
qkv_tensor *qkv_gelu(qkv_arena *a, qkv_tensor *x);

/* Inverted dropout: in training each value is zeroed with probability p and
 * the rest scaled by 1/(1-p), drawing from rng; with train false (or p == 0)
 * it returns x itself. p in [0, 1). */
qkv_tensor *qkv_dropout(qkv_arena *a, qkv_tensor *x, qkv_real p, qkv_rng *rng, bool train);

/* ---- reductions ---- */

/* The sum of all values, shape (1). */
qkv_tensor *qkv_sum(qkv_arena *a, qkv_tensor *x);

/* The mean of all values, shape (1). */
qkv_tensor *qkv_mean(qkv_arena *a, qkv_tensor *x);

/* ---- shape ---- */

/* The same values under another shape of the same size; shares x's data (free). */
qkv_tensor *qkv_reshape(qkv_arena *a, qkv_tensor *x, int ndim, const int *shape);

/* Swap the last two dimensions (a copy): (..., M, N) -> (..., N, M). */
qkv_tensor *qkv_transpose(qkv_arena *a, qkv_tensor *x);

/* Reorder the dimensions (a copy): result dim i is x's dim perm[i]. Splitting
 * heads is reshape (B,T,H,D) then permute {0,2,1,3} to (B,H,T,D). */
qkv_tensor *qkv_permute(qkv_arena *a, qkv_tensor *x, const int *perm);

/* Join n tensors along the last dimension; all other dims must agree. */
qkv_tensor *qkv_concat(qkv_arena *a, int n, qkv_tensor *const *xs);

/* The columns [start, start+len) of the last dimension (a copy). */
qkv_tensor *qkv_slice(qkv_arena *a, qkv_tensor *x, int start, int len);

/* ---- linear algebra ---- */

/* Matrix product over the last two dims: op(x) (..., M, K) · op(w) (..., K, N)
 * -> (..., M, N), where op transposes when the flag is set. w either has the
 * same leading (batch) dims as x, or is 2-D and shared by every batch entry
 * (a weight): then x's leading dims are folded into M. */
qkv_tensor *qkv_matmul(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, bool trans_x, bool trans_w);

/* x·Wᵀ + b for x (..., in), a weight W (out, in) and a bias b (out) or NULL:
 * the Linear layer as one node (one output tensor, bias added in place). */
qkv_tensor *qkv_affine(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b);

/* Gather rows of table (V, C) for each id: ids has shape (ndim, shape) and the
 * result (shape..., C). Backward scatter-adds, so repeated ids accumulate.
 * An id outside [0, V) is an error naming the id and V. */
qkv_tensor *qkv_embedding(qkv_arena *a, qkv_tensor *table, const int32_t *ids, int ndim,
                          const int *shape);

/* ---- fused row-wise ops (each a single node with a hand-written backward) ---- */

/* LayerNorm over the last dim: (x - mean) / sqrt(var + eps) * w + b, with
 * w, b of shape (C) (either may be NULL: no scale / no shift). */
qkv_tensor *qkv_layernorm(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_tensor *b, qkv_real eps);

/* RMSNorm over the last dim: x / sqrt(mean(x²) + eps) * w, with w of shape
 * (C) or NULL (no scale). LayerNorm without the mean and the shift. */
qkv_tensor *qkv_rmsnorm(qkv_arena *a, qkv_tensor *x, qkv_tensor *w, qkv_real eps);

/* Softmax over the last dim (each row sums to 1). */
qkv_tensor *qkv_softmax(qkv_arena *a, qkv_tensor *x);

/* Which scores attention may not use. For scores (B, ..., Tq, Tk): */
typedef struct qkv_mask {
    bool causal;              /* query i sees keys j <= i + (Tk - Tq): itself and the past;
                                 needs Tq <= Tk (else the first queries would see nothing) */
    const uint8_t *key_valid; /* (B, Tk): 1 = a real key, 0 = padding; NULL = all real */
} qkv_mask;

/* softmax(scale · x + mask) over the last dim of scores x (B, ..., Tq, Tk):
 * masked scores become -inf *before* the softmax, so their weights are
 * exactly 0 and so is their gradient. A row with every key masked gives all
 * zeros (no NaN) and passes no gradient. mask may be NULL. */
qkv_tensor *qkv_softmax_masked(qkv_arena *a, qkv_tensor *x, const qkv_mask *mask, qkv_real scale);

/* Mean cross-entropy of logits (..., V) against one target id per row,
 * computed from logits in one fused step (log-softmax inside). Rows whose
 * target is ignore_index do not count; shape (1). An id outside [0, V) that
 * is not ignore_index is an error naming it. All rows ignored gives 0. */
qkv_tensor *qkv_cross_entropy(qkv_arena *a, qkv_tensor *logits, const int32_t *targets,
                              int32_t ignore_index);

/* ---- attention ---- */

/* The attention core: softmax(Q·Kᵀ/√d + mask)·V for q (B, ..., Tq, d) and
 * k, v (B, ..., Tk, d), at least 3 dims, one fused node. Keys are matched
 * against queries; values are what the weights average. With dropout > 0
 * (training) the weights are dropped out with that probability, drawing from rng. If
 * weights is not NULL it receives the attention weights (B, ..., Tq, Tk)
 * (before dropout), for inspection. */
qkv_tensor *qkv_attention(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                          const qkv_mask *mask, qkv_real dropout, qkv_rng *rng,
                          qkv_tensor **weights);

/* Multi-head attention with the heads side by side: q (B, Tq, H·d) and k, v
 * (B, Tk, H·d), head h owning columns [h·d, (h+1)·d) of each; the result
 * (B, Tq, H·d) holds each head's output in its columns. The same numbers as
 * splitting the heads out to (B, H, T, d), qkv_attention and merging them
 * back, without the copies. weights, if not NULL, receives (B, H, Tq, Tk). */
qkv_tensor *qkv_attention_heads(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                                int n_head, const qkv_mask *mask, qkv_real dropout, qkv_rng *rng,
                                qkv_tensor **weights);

/* Rotary position embedding of x (B, T, H·d), heads side by side as for
 * qkv_attention_heads, row t at position pos0 + t: in every head each pair
 * of coordinates (2i, 2i+1) is rotated by the angle position·10000^(−2i/d).
 * Applied to the queries and keys before attention, it makes each score
 * depend on how far apart the query and the key are. d must be even. */
qkv_tensor *qkv_rope(qkv_arena *a, qkv_tensor *x, int n_head, int pos0);

QKV_END_DECLS
#endif
