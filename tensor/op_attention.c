/* The attention core (see qkv/ops.h), part 2 of 4 (after attention.h):
 * the public calls, one fused node,
 *
 *     O = dropout(softmax(Q·Kᵀ/√d + mask)) · V
 *
 * Each query (a row of Q) is compared with every key (a row of K) by a dot
 * product; the softmax of those scores over the keys says how much of each
 * value (a row of V) the query's output takes. The leading dims of q, k, v
 * (batch, and heads when there are several) index independent attention
 * problems; qkv_attention_heads runs the same steps on heads that sit side
 * by side in the columns of (B, T, H·d) tensors: only where each head's
 * matrix starts differs (struct layout). The T×T weights are never stored:
 * the forward goes through the keys in tiles with an online softmax
 * (attention_forward.c, next) and keeps each query's log-sum-exp, from which
 * the backward recomputes them tile by tile (attention_backward.c, last).
 * The same formula as plain loops is attention_plain.c. */
#include <string.h>

#include "attention.h"

/* ---- the mask rules, which qkv_softmax_masked shares ---- */

int qkv__check_causal(const char *op, const qkv_mask *mask, int tq, int tk)
{
    if (mask && mask->causal && tq > tk)
        return qkv_set_error("%s: a causal mask over Tq %d queries and Tk %d keys: with Tq > Tk "
                             "the first %d queries would see no key at all",
                             op, tq, tk, tq - tk);
    return 0;
}

int qkv__check_mask(const char *op, const qkv_mask *mask, const qkv_tensor *t)
{
    char s[64];
    if (mask && mask->causal && t->ndim < 2)
        return qkv_set_error("%s: a causal mask needs (..., Tq, Tk) scores, at least 2 dims, not %s",
                             op, qkv_shape_str(t, s, sizeof s));
    if (mask && mask->key_valid && t->ndim < 3)
        return qkv_set_error("%s: a key-padding mask needs a batch dim, (B, ..., Tq, Tk), at least "
                             "3 dims, not %s",
                             op, qkv_shape_str(t, s, sizeof s));
    return 0;
}

/* ---- the checks and the problem ---- */

/* 0 when q, k, v are all there, k and v have one shape, and the mask and
 * dropout suit scores for q; else -1 with a message naming op. */
static int check_inputs(const char *op, const qkv_arena *a, qkv_tensor *const in[3],
                        const qkv_mask *mask, qkv_real dropout, const qkv_rng *rng)
{
    if (qkv__check_inputs(op, a, "q k v", 3, in) < 0)
        return -1;
    if (!qkv_same_shape(in[1], in[2])) {
        qkv__shape_error(op, "k and v must have the same shape", in[1], in[2]);
        return -1;
    }
    if (qkv__check_mask(op, mask, in[0]) < 0)
        return -1;
    if (!(dropout >= 0 && dropout < 1) || (dropout > 0 && !rng))
        return qkv_set_error("%s: dropout must be in [0, 1) and needs an rng when > 0; got %g%s",
                             op, (double)dropout, rng ? "" : " and no rng");
    return 0;
}

/* NULL when q (B, ..., Tq, d) and k (B, ..., Tk, d) fit together, else what is wrong. */
static const char *shape_problem(const qkv_tensor *q, const qkv_tensor *k)
{
    int nd = q->ndim;
    if (nd < 3)
        return "q needs (B, ..., Tq, d), at least 3 dims";
    if (k->ndim != nd)
        return "q and k need the same number of dims";
    for (int i = 0; i < nd - 2; i++)
        if (q->shape[i] != k->shape[i])
            return "q and k leading (batch, head) dims differ";
    if (q->shape[nd - 1] != k->shape[nd - 1])
        return "queries and keys must have the same size d";
    return NULL;
}

/* 0 when q (B,Tq,C) and k (B,Tk,C) hold n_head heads side by side and the
 * mask suits them: *pr is then their problem, k's batch entries kv_batch
 * values apart (0: Tk·C, one after the other), the weights' layout
 * (B,H,n_rows,Tk). Else -1 naming op. */
static int heads_problem(const char *op, const qkv_tensor *q, const qkv_tensor *k,
                         size_t kv_batch, int n_head, const qkv_mask *mask, int n_rows,
                         problem *pr)
{
    if (q->ndim != 3 || k->ndim != 3 || q->shape[0] != k->shape[0] || q->shape[2] != k->shape[2]) {
        qkv__shape_error(op, "q (B,Tq,C) and k (B,Tk,C) do not fit", q, k);
        return -1;
    }
    int B = q->shape[0], tq = q->shape[1], tk = k->shape[1], C = q->shape[2];
    if (n_head < 1 || C % n_head != 0)
        return qkv_set_error("%s: width %d is not a multiple of n_head %d", op, C, n_head);
    if (qkv__check_causal(op, mask, tq, tk) < 0)
        return -1;
    /* Head h of batch entry b: columns [h·d, (h+1)·d) of entry b's rows. */
    int d = C / n_head;
    if (!kv_batch)
        kv_batch = (size_t)tk * C;
    *pr = (problem){.nb = B, .nh = n_head, .tq = tq, .tk = tk, .d = d,
                    .causal = mask && mask->causal, .key_valid = mask ? mask->key_valid : NULL,
                    .per_entry = n_head,
                    .lq = {(size_t)tq * C, (size_t)d, C}, .lkv = {kv_batch, (size_t)d, C},
                    .lo = {(size_t)tq * C, (size_t)d, C},
                    .lp = {(size_t)n_head * n_rows * tk, (size_t)n_rows * tk, tk}};
    return 0;
}

/* ---- the node, and the calls that make it ---- */

/* The inputs of an attention node: q, k and v, or one tensor holding them
 * side by side, k and v from values k_at and v_at of its rows (operands_of). */
typedef struct inputs {
    int n;
    qkv_tensor *t[3];
    size_t k_at, v_at;
} inputs;

/* The attention of every problem of pr into out (laid out as pr->lo); the
 * weights (shaped pshape) go to *weights when asked for. */
static qkv_tensor *attend(qkv_arena *a, const problem *pr, inputs in, qkv_tensor *out, int ndim,
                          const int *pshape, qkv_real dropout, qkv_rng *rng, qkv_tensor **weights)
{
    int products = pr->nb * pr->nh, tiles = (pr->tq + QUERY_TILE - 1) / QUERY_TILE;
    int workers = attention_workers(products * tiles, (size_t)products * pr->tq * pr->tk);
    operands x = operands_of(in.t, in.n, in.k_at, in.v_at);
    qkv_real *lse = qkv_arena_alloc(a, (size_t)products * pr->tq * sizeof *lse);
    qkv_real *scratch =
        qkv_arena_alloc(a, (size_t)workers * qkv__attention_forward_scratch() * sizeof *scratch);
    if (!out || !lse || !scratch)
        return NULL;
    /* Dropout (training) draws one value from rng: the key of a hash that
     * gives every weight its verdict, the same on any thread and again in
     * backward, with no mask stored. */
    qkv__attn_drop drop = qkv__attn_drop_make(dropout, dropout > 0 ? qkv_rng_u64(rng) : 0);
    qkv__attention_forward(pr, x.q, x.k, x.v, out->data, lse, &drop, scratch, workers);

    qkv_node *n = qkv__record(a, out, "attention", qkv__attention_backward, in.n, in.t);
    if (n) {
        /* Room for every thread the backward may use (it uses no more). */
        attn_ctx c = {*pr, in.k_at, in.v_at, lse, drop, omp_get_max_threads()};
        /* The backward masks again: a copy of the padding mask, since the
         * caller's may be gone by then (B·Tk bytes). */
        if (pr->key_valid) {
            size_t bytes = (size_t)(products / pr->per_entry) * pr->tk;
            uint8_t *valid = qkv_arena_alloc(a, bytes);
            if (!valid)
                return NULL;
            c.pr.key_valid = memcpy(valid, pr->key_valid, bytes);
        }
        if (!qkv__set_ctx(a, n, &c, sizeof c))
            return NULL;
        n->scratch_size = (size_t)c.workers * qkv__attention_backward_scratch(pr);
    }
    /* The weights cost T² memory, so only a caller who asks gets them,
     * recomputed from the scores as qkv_attention_weights does. */
    if (weights) {
        qkv_tensor *p = qkv_tensor_new(a, ndim, pshape);
        qkv_real *tile = qkv_arena_alloc(a, (size_t)QUERY_TILE * pr->tk * sizeof *tile);
        if (!p || !tile)
            return NULL;
        qkv__attention_weight_rows(pr, x.q, x.k, 0, pr->tq, p->data, tile);
        *weights = p;
    }
    return out;
}

qkv_tensor *qkv_attention(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                          const qkv_mask *mask, qkv_real dropout, qkv_rng *rng,
                          qkv_tensor **weights)
{
    if (weights)
        *weights = NULL;
    if (check_inputs("qkv_attention", a, (qkv_tensor *[]){q, k, v}, mask, dropout, rng) < 0)
        return NULL;
    const char *why = shape_problem(q, k);
    if (why)
        return qkv__shape_error("qkv_attention", why, q, k);
    if (qkv__check_causal("qkv_attention", mask, q->shape[q->ndim - 2], k->shape[k->ndim - 2]) < 0)
        return NULL;

    /* Every leading index is one problem, its matrices contiguous. */
    int nd = q->ndim, tq = q->shape[nd - 2], tk = k->shape[nd - 2], d = q->shape[nd - 1];
    int nb = (int)(q->size / ((size_t)tq * d));
    problem pr = {.nb = nb, .nh = 1, .tq = tq, .tk = tk, .d = d, .causal = mask && mask->causal,
                  .key_valid = mask ? mask->key_valid : NULL, .per_entry = nb / q->shape[0],
                  .lq = {(size_t)tq * d, 0, d}, .lkv = {(size_t)tk * d, 0, d},
                  .lo = {(size_t)tq * d, 0, d}, .lp = {(size_t)tq * tk, 0, tk}};
    int pshape[QKV_MAX_DIMS]; /* (B, ..., Tq, Tk) */
    memcpy(pshape, q->shape, sizeof pshape);
    pshape[nd - 1] = tk;
    return attend(a, &pr, (inputs){3, {q, k, v}, 0, 0}, qkv__like(a, q), nd, pshape, dropout, rng,
                  weights);
}

/* qkv_attention_heads where the batch entries of k and v start kv_batch
 * values apart (see qkv__attention_heads_view in attention.h). */
static qkv_tensor *attention_heads(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                                   size_t kv_batch, int n_head, const qkv_mask *mask,
                                   qkv_real dropout, qkv_rng *rng, qkv_tensor **weights)
{
    const char *op = "qkv_attention_heads";
    if (weights)
        *weights = NULL;
    problem pr;
    if (check_inputs(op, a, (qkv_tensor *[]){q, k, v}, mask, dropout, rng) < 0 ||
        heads_problem(op, q, k, kv_batch, n_head, mask, q->shape[1], &pr) < 0)
        return NULL;
    return attend(a, &pr, (inputs){3, {q, k, v}, 0, 0}, qkv__like(a, q), 4,
                  (const int[]){pr.nb, n_head, pr.tq, pr.tk}, dropout, rng, weights);
}

qkv_tensor *qkv_attention_heads(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                                int n_head, const qkv_mask *mask, qkv_real dropout, qkv_rng *rng,
                                qkv_tensor **weights)
{
    return attention_heads(a, q, k, v, 0, n_head, mask, dropout, rng, weights);
}

qkv_tensor *qkv__attention_packed(qkv_arena *a, qkv_tensor *qkv, int n_head, const qkv_mask *mask,
                                  qkv_real dropout, qkv_rng *rng)
{
    const char *op = "qkv__attention_packed";
    if (qkv__check_inputs(op, a, "qkv", 1, &qkv) < 0)
        return NULL;
    if (qkv->ndim != 3 || qkv->shape[2] % 3 != 0) {
        char s[64];
        qkv_set_error("%s: qkv must be (B,T,3C), q, k and v side by side, not %s", op,
                      qkv_shape_str(qkv, s, sizeof s));
        return NULL;
    }
    int B = qkv->shape[0], T = qkv->shape[1], C = qkv->shape[2] / 3;
    /* The output has the shape q, k and v have apart: the problem is theirs,
     * with the rows 3C apart in qkv. */
    qkv_tensor *out = qkv_tensor_new(a, 3, (const int[]){B, T, C});
    problem pr;
    if (!out || check_inputs(op, a, (qkv_tensor *[]){out, out, out}, mask, dropout, rng) < 0 ||
        heads_problem(op, out, out, 0, n_head, mask, T, &pr) < 0)
        return NULL;
    pr.lq = pr.lkv = (layout){(size_t)T * 3 * C, (size_t)pr.d, 3 * C};
    return attend(a, &pr, (inputs){1, {qkv}, (size_t)C, 2 * (size_t)C}, out, 4,
                  (const int[]){B, n_head, T, T}, dropout, rng, NULL);
}

qkv_tensor *qkv__attention_heads_view(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                                      size_t kv_batch, int n_head, const qkv_mask *mask,
                                      qkv_tensor **weights)
{
    if (weights)
        *weights = NULL;
    if (qkv_grad_enabled()) {
        qkv_set_error("attention_heads: keys and values read in place need grad mode off");
        return NULL;
    }
    return attention_heads(a, q, k, v, kv_batch, n_head, mask, 0, NULL, weights);
}

qkv_tensor *qkv_attention_weights(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, int n_head,
                                  const qkv_mask *mask, int row0, int n_rows)
{
    const char *op = "qkv_attention_weights";
    problem pr;
    if (qkv__check_inputs(op, a, "q k", 2, (qkv_tensor *[]){q, k}) < 0 ||
        qkv__check_mask(op, mask, q) < 0 ||
        heads_problem(op, q, k, 0, n_head, mask, n_rows, &pr) < 0)
        return NULL;
    if (row0 < 0 || n_rows < 1 || n_rows > pr.tq - row0) {
        qkv_set_error("%s: rows [%d, %lld) are not within the %d queries (row0 >= 0, n_rows >= 1)",
                      op, row0, (long long)row0 + n_rows, pr.tq);
        return NULL;
    }
    qkv_tensor *p = qkv_tensor_new(a, 4, (const int[]){pr.nb, n_head, n_rows, pr.tk});
    qkv_real *tile = qkv_arena_alloc(a, (size_t)QUERY_TILE * pr.tk * sizeof *tile);
    if (!p || !tile)
        return NULL;
    qkv__attention_weight_rows(&pr, q->data, k->data, row0, n_rows, p->data, tile);
    return p;
}
