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
 *     const uint8_t valid[2] = {1, 0};                         // row 1 is padding
 *     qkv_tensor *pooled = qkv_masked_mean(a, h, 0, valid);    // (4): the mean of the valid rows
 *     qkv_tensor *centred = qkv_sub(a, h, qkv_mean_axis(a, h, -1, true));  // (2,4) - (2,1)
 *     int32_t *best = qkv_argmax(a, h, -1);                    // 2 column indices
 *     if (!pooled || !centred || !best) fprintf(stderr, "qkv: %s\n", qkv_last_error());
 *     qkv_arena_free(&a);
 *
 * Integer arrays (token ids, targets, masks) are copied into the arena, so
 * the caller's arrays need not outlive the call.
 */
#ifndef QKV_OPS_H
#define QKV_OPS_H

#include "qkv/tensor.h"

QKV_BEGIN_DECLS

/* ---- elementwise, with NumPy broadcasting ----
 * x and y are aligned on their last dims; in each dim their extents agree, or
 * one is 1 (a missing dim counts as 1) and is stretched to the other. The
 * result has the larger extents: (B,T,C) + (C) and (B,1,C) + (T,1) are
 * (B,T,C) and (B,T,C). The backward sums each operand's gradient over the
 * dims where it was stretched. */

/* x + y, broadcast: a bias (C) over (B,T,C), a column (B,T,1) over (B,T,C). */
qkv_tensor *qkv_add(qkv_arena *a, qkv_tensor *x, qkv_tensor *y);

/* x - y, broadcast as qkv_add. */
qkv_tensor *qkv_sub(qkv_arena *a, qkv_tensor *x, qkv_tensor *y);

/* x * y elementwise, broadcast as qkv_add. */
qkv_tensor *qkv_mul(qkv_arena *a, qkv_tensor *x, qkv_tensor *y);

/* s * x for a constant s. */
qkv_tensor *qkv_scale(qkv_arena *a, qkv_tensor *x, qkv_real s);

/* max(x, 0); the gradient at exactly 0 is taken as 0. */
qkv_tensor *qkv_relu(qkv_arena *a, qkv_tensor *x);

/* max(x, 0)²: ReLU squared (Primer's MLP activation; no kink at 0). */
qkv_tensor *qkv_relu2(qkv_arena *a, qkv_tensor *x);

/* GELU, tanh form: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
qkv_tensor *qkv_gelu(qkv_arena *a, qkv_tensor *x);

/* SiLU (swish): x·σ(x), σ(x) = 1/(1 + e^−x) (LLaMA's MLP, as SwiGLU's gate). */
qkv_tensor *qkv_silu(qkv_arena *a, qkv_tensor *x);

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

/* Join n tensors along the last dimension; all other dims must agree (any axis: qkv_concat_axis). */
qkv_tensor *qkv_concat(qkv_arena *a, int n, qkv_tensor *const *xs);

/* The columns [start, start+len) of the last dimension (a copy; any axis: qkv_slice_axis). */
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
 * (before dropout), for inspection: computed only then, they alone cost
 * Tq·Tk memory (qkv_attention_weights gives chosen rows only); the op
 * itself keeps O(Tq + Tk) per head for its backward. */
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

/* The attention weights of query rows [row0, row0 + n_rows) only, for q
 * (B, Tq, H·d) and k (B, Tk, H·d) with heads side by side as for
 * qkv_attention_heads: softmax(q·kᵀ/√d + mask) of those rows, (B, H, n_rows,
 * Tk), masked weights exactly 0, the same numbers as those rows of its
 * weights. For inspection (no graph node): what the rows one shows cost is
 * n_rows·Tk a head, where all the weights of a long context are Tq·Tk. */
qkv_tensor *qkv_attention_weights(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, int n_head,
                                  const qkv_mask *mask, int row0, int n_rows);

/* Rotary position embedding of x (B, T, H·d), heads side by side as for
 * qkv_attention_heads, row t at position pos0 + t: in every head each pair
 * of coordinates (2i, 2i+1) is rotated by the angle position·10000^(−2i/d).
 * Applied to the queries and keys before attention, it makes each score
 * depend on how far apart the query and the key are. d must be even. */
qkv_tensor *qkv_rope(qkv_arena *a, qkv_tensor *x, int n_head, int pos0);

/* ==== the ops a model of your own reaches for ====
 * An axis is 0..ndim-1, or counted from the end: -1 is the last dim. A
 * reduction with keepdim keeps the reduced dim with extent 1 (so the result
 * broadcasts against x); without it the dim goes, and a 1-D x gives shape (1). */

/* ---- elementwise ---- */

/* x / y elementwise, broadcast as qkv_add; y = 0 gives ±inf or NaN, as C's division. */
qkv_tensor *qkv_div(qkv_arena *a, qkv_tensor *x, qkv_tensor *y);

/* e^x elementwise; dx = dy · e^x. */
qkv_tensor *qkv_exp(qkv_arena *a, qkv_tensor *x);

/* ln x elementwise (x <= 0 gives -inf or NaN, as C's log); dx = dy / x. */
qkv_tensor *qkv_log(qkv_arena *a, qkv_tensor *x);

/* tanh x elementwise; dx = dy · (1 - tanh² x). */
qkv_tensor *qkv_tanh(qkv_arena *a, qkv_tensor *x);

/* 1 / (1 + e^-x) elementwise; dx = dy · s · (1 - s) for s the result. */
qkv_tensor *qkv_sigmoid(qkv_arena *a, qkv_tensor *x);

/* ---- reductions over one axis ---- */

/* Σ_k x[..., k, ...] over axis: (B,T,C) over axis 1 is (B,C), or (B,1,C) with keepdim. */
qkv_tensor *qkv_sum_axis(qkv_arena *a, qkv_tensor *x, int axis, bool keepdim);

/* The mean over axis, (1/n) Σ_k x[..., k, ...] for n the axis's extent; shaped as qkv_sum_axis. */
qkv_tensor *qkv_mean_axis(qkv_arena *a, qkv_tensor *x, int axis, bool keepdim);

/* max_k x[..., k, ...] over axis, shaped as qkv_sum_axis; the gradient goes to
 * the first largest value (a NaN counts as the largest). */
qkv_tensor *qkv_max_axis(qkv_arena *a, qkv_tensor *x, int axis, bool keepdim);

/* The index k of the first largest x[..., k, ...] along axis, as qkv_max_axis
 * picks it: x->size / x->shape[axis] int32_t in the order of x's shape
 * without axis, from the arena (valid until it is reset). int32_t, not a
 * tensor: an index has no gradient, a float holds integers exactly only to
 * 2^24, and the ids qkv takes (embedding ids, cross-entropy targets) are
 * int32_t: predictions = qkv_argmax(a, logits, -1) compares with targets. */
int32_t *qkv_argmax(qkv_arena *a, qkv_tensor *x, int axis);

/* The mean over axis of the values whose mask is set: mask has x's dims
 * 0..axis (mask[i_0..i_axis] != 0: x[i_0, ..., i_axis, ...] counts), and the
 * result is x's shape without axis. Mean-pooling the real tokens of x
 * (B,T,C) under a padding mask (B,T), the mask qkv_mask.key_valid takes, is
 * qkv_masked_mean(a, x, 1, mask) -> (B,C). A row with no value set gives 0,
 * and passes no gradient. mask is copied. */
qkv_tensor *qkv_masked_mean(qkv_arena *a, qkv_tensor *x, int axis, const uint8_t *mask);

/* ---- shape, on any axis ---- */

/* Join n tensors along axis; every other dim must agree: (B,2,C) and (B,3,C) on axis 1 are (B,5,C). */
qkv_tensor *qkv_concat_axis(qkv_arena *a, int n, qkv_tensor *const *xs, int axis);

/* The indices [start, start+len) of axis (a copy): (B,T,C) on axis 1 is (B,len,C). */
qkv_tensor *qkv_slice_axis(qkv_arena *a, qkv_tensor *x, int axis, int start, int len);

/* Swap dims d0 and d1 (a copy): (B,T,C) with 0 and 2 is (C,T,B); qkv_transpose is (-2, -1). */
qkv_tensor *qkv_transpose_axes(qkv_arena *a, qkv_tensor *x, int d0, int d1);

/* ==== more ops (1.2): the math, selection and loss a model of one's own needs ==== */

/* ---- elementwise ---- */

/* ln(1 + e^x) elementwise, computed without overflow; dx = dy · σ(x). */
qkv_tensor *qkv_softplus(qkv_arena *a, qkv_tensor *x);

/* √x elementwise (x < 0 gives NaN, as C's sqrt); dx = dy / (2√x). */
qkv_tensor *qkv_sqrt(qkv_arena *a, qkv_tensor *x);

/* |x| elementwise; dx = dy · sign(x), and 0 at x = 0. */
qkv_tensor *qkv_abs(qkv_arena *a, qkv_tensor *x);

/* x^p elementwise for a finite constant p, as C's pow; dx = dy · p·x^(p-1) (0 when p = 0). */
qkv_tensor *qkv_pow(qkv_arena *a, qkv_tensor *x, qkv_real p);

/* x held to [lo, hi] (lo <= hi; either may be infinite); the gradient passes
 * where lo <= x <= hi and is 0 where x was held to a bound. */
qkv_tensor *qkv_clamp(qkv_arena *a, qkv_tensor *x, qkv_real lo, qkv_real hi);

/* cond[i] ? x[i] : y[i] for x and y of the same shape and cond of their size
 * (copied); each gradient goes to the operand its value came from. */
qkv_tensor *qkv_where(qkv_arena *a, const uint8_t *cond, qkv_tensor *x, qkv_tensor *y);

/* ---- reductions and scans over one axis ---- */

/* min_k x[..., k, ...] over axis, shaped as qkv_sum_axis; the gradient goes
 * to the first smallest value (a NaN counts as the smallest). */
qkv_tensor *qkv_min_axis(qkv_arena *a, qkv_tensor *x, int axis, bool keepdim);

/* The variance over axis, Σ_k (x_k - mean)² / (n - correction) for n the
 * axis's extent: correction 0 is the population variance, 1 the sample
 * (Bessel's) one; 0 <= correction < n. Shaped as qkv_sum_axis. */
qkv_tensor *qkv_var_axis(qkv_arena *a, qkv_tensor *x, int axis, bool keepdim, int correction);

/* Running sums along axis: y[..., k, ...] = Σ_{j <= k} x[..., j, ...], x's shape. */
qkv_tensor *qkv_cumsum(qkv_arena *a, qkv_tensor *x, int axis);

/* ---- picking by index ---- */

/* The same n indices ids (each in [0, extent)) picked from axis in every
 * row: (B,T,C) with axis 1 is (B,n,C), y[b, j, c] = x[b, ids[j], c]. ids is
 * copied; the backward scatter-adds, so an index picked twice gets both gradients. */
qkv_tensor *qkv_index_select(qkv_arena *a, qkv_tensor *x, int axis, int n, const int32_t *ids);

/* PyTorch's gather: an index per result value, ids shaped as x with axis's
 * extent n (row-major), y[..., j, ...] = x[..., ids[..., j, ...], ...]:
 * (B,T,V) with axis 2 and n = 1 picks one value per row, as a target's
 * log-probability. Each id in [0, extent); ids is copied; backward as
 * qkv_index_select. */
qkv_tensor *qkv_gather(qkv_arena *a, qkv_tensor *x, int axis, int n, const int32_t *ids);

/* The k largest values of each row of the last dim, largest first, ties in
 * index order (a NaN counts as the largest): (..., C) -> (..., k), 1 <= k <= C.
 * If indices is not NULL it receives their column indices (rows·k int32_t
 * from the arena). The gradient goes back to the columns they came from. */
qkv_tensor *qkv_topk(qkv_arena *a, qkv_tensor *x, int k, int32_t **indices);

/* Each row of the last dim sorted, ascending or descending, ties in index
 * order (a NaN counts as the largest); indices as for qkv_topk. */
qkv_tensor *qkv_sort(qkv_arena *a, qkv_tensor *x, bool descending, int32_t **indices);

/* ---- rows and losses ---- */

/* log(softmax(x)) over the last dim, x - max - ln Σ e^(x - max): finite for
 * any finite logits, where qkv_log(qkv_softmax(x)) gives -inf once a weight
 * underflows. */
qkv_tensor *qkv_log_softmax(qkv_arena *a, qkv_tensor *x);

/* The mean squared error mean((pred - target)²) over every value, shape (1);
 * pred and target of the same shape, and both get gradients if they want them. */
qkv_tensor *qkv_mse_loss(qkv_arena *a, qkv_tensor *pred, qkv_tensor *target);

QKV_END_DECLS
#endif
