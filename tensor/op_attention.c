/* The attention core (see qkv/ops.h), one fused node:
 *
 *     O = dropout(softmax(Q·Kᵀ/√d + mask)) · V
 *
 * Each query (a row of Q) is compared with every key (a row of K) by a dot
 * product; the softmax of those scores over the keys says how much of each
 * value (a row of V) the query's output takes. The leading dims of q, k, v
 * (batch, and heads when there are several) index independent attention
 * problems, "heads" below: every step is one batched gemm or one parallel
 * loop over all of them. qkv_attention_heads runs the same steps on heads
 * that sit side by side in the columns of (B, T, H·d) tensors: only where
 * each head's matrix starts differs (struct layout). Where the matrices sit
 * and how the work is split (layouts, causal block skipping, OpenMP) is
 * attention_layout.h; the same formula as plain loops is attention_plain.c. */
#include <string.h>

#include "attention_layout.h"
#include "op_attention.h"

static void attention_backward(qkv_node *n); /* below attend(), which records it */

/* The attention of every problem of pr, laid out like q; the weights p
 * (shaped pshape) go to *weights when asked for. */
static qkv_tensor *attend(qkv_arena *a, const problem *pr, qkv_tensor *q, qkv_tensor *k,
                          qkv_tensor *v, int ndim, const int *pshape, const qkv_mask *mask,
                          qkv_real dropout, qkv_rng *rng, qkv_tensor **weights)
{
    qkv_tensor *in[3] = {q, k, v};
    int tq = pr->tq, tk = pr->tk, d = pr->d;
    size_t n_weights = (size_t)pr->nb * pr->nh * tq * tk;
    qkv_tensor *p = qkv_tensor_new(a, ndim, pshape), *out = qkv__like(a, q);
    if (!p || !out)
        return NULL;

    /* The dropout mask (training) is drawn in order from rng before any
     * parallel loop, so every thread count gives one result. */
    qkv_real *p_used = p->data;
    uint8_t *keep = NULL;
    qkv_real keep_scale = 1 / (1 - dropout);
    if (dropout > 0) {
        keep = qkv_arena_alloc(a, n_weights);
        p_used = qkv_arena_alloc(a, n_weights * sizeof *p_used);
        if (!keep || !p_used)
            return NULL;
        qkv__dropout_mask(keep, n_weights, dropout, rng);
    }
    int products = pr->nb * pr->nh, per_entry = products / q->shape[0]; /* problems per batch entry */
#pragma omp parallel for schedule(static) if (per_problem(pr))
    for (int e = 0; e < products; e++) {
        problem one = one_problem(pr);
        offsets o = offsets_of(pr, e);
        qkv_real *s = p->data + o.p;
        /* 1. Scores: how well each query matches each key, S = Q·Kᵀ, scaled
         *    by 1/√d, one gemm per block of queries. S goes straight into p. */
        queries_by_keys(&one, score_scale(d), q->data + o.q, k->data + o.kv, s);

        /* 2. Mask before the softmax: a masked score counts as -inf, so its
         *    weight is exactly 0 and the visible weights of the row sum to 1.
         * 3. Softmax over each query's row, i.e. over the keys (the last axis).
         *    The padding mask's row is this problem's batch entry's. */
        qkv_mask m = mask ? *mask : (qkv_mask){0};
        if (m.key_valid)
            m.key_valid += (size_t)(e / per_entry) * tk;
        qkv__softmax_forward(s, s, mask ? &m : NULL, 1, (size_t)tq, 1, tq, tk);

        /* 4. Dropout of the weights (training). */
        if (keep)
            qkv__dropout_apply(p_used + o.p, s, keep + o.p, keep_scale, (size_t)tq * tk, false);

        /* 5. Weighted sum of the values: output row i = Σ_j P[i,j] · V[j]. */
        queries_by_d(&one, 1, p_used + o.p, v->data + o.kv, 0, out->data + o.q);
    }

    qkv_node *n = qkv__record(a, out, "attention", attention_backward, 3, in);
    if (n) {
        bool need_ds = q->requires_grad || k->requires_grad; /* dS only feeds dQ and dK */
        attn_ctx c = {*pr, p->data, p_used, keep, keep_scale};
        if (!qkv__set_ctx(a, n, &c, sizeof c))
            return NULL;
        n->scratch_size = need_ds ? n_weights : 0; /* room for dP and dS, lent by backward */
    }
    /* The caller reads the same memory backward uses: no copy, and no grad. */
    if (weights)
        *weights = p;
    return out;
}

/* The backward of one problem, e, with its offsets o; ds is its dP/dS scratch. */
static void backward_one(const attn_ctx *c, qkv_node *n, offsets o, qkv_real *ds)
{
    problem one = one_problem(&c->pr);
    qkv_tensor *q = n->in[0], *k = n->in[1], *v = n->in[2];
    const qkv_real *dout = n->out->grad + o.q; /* dO, laid out like q */

    /* O = P'·V, so dV += P'ᵀ·dO (each key's value collects the output
     * gradients of the queries that used it). */
    if (v->grad)
        keys_by_d(&one, 1, c->p_used + o.p, dout, v->grad + o.kv);
    if (!q->grad && !k->grad)
        return;

    /* dP' = dO·Vᵀ, then back through dropout to dP. */
    queries_by_keys(&one, 1, dout, v->data + o.kv, ds);
    if (c->keep) /* dropout is linear */
        qkv__dropout_apply(ds, ds, c->keep + o.p, c->keep_scale, (size_t)one.tq * one.tk, false);

    /* Back through the softmax of each query's row: dS = P ⊙ (dP − Σ P·dP).
     * Masked weights are 0, so masked scores get no gradient. */
    softmax_backward_rows(&one, ds, c->p + o.p);

    /* S = Q·Kᵀ/√d, so dQ += dS·K/√d and dK += dSᵀ·Q/√d. */
    qkv_real s = score_scale(one.d);
    if (q->grad)
        queries_by_d(&one, s, ds, k->data + o.kv, 1, q->grad + o.q);
    if (k->grad)
        keys_by_d(&one, s, ds, q->data + o.q, k->grad + o.kv);
}

static void attention_backward(qkv_node *n)
{
    attn_ctx *c = n->ctx;
    const problem *pr = &c->pr;
    int products = pr->nb * pr->nh;
#pragma omp parallel for schedule(static) if (per_problem(pr))
    for (int e = 0; e < products; e++) {
        offsets o = offsets_of(pr, e);
        /* ds (nb, nh, tq, tk): dP, then dS; absent when only dV is wanted */
        backward_one(c, n, o, n->scratch ? n->scratch + o.p : NULL);
    }
}

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
    problem pr = {.nb = (int)(q->size / ((size_t)tq * d)), .nh = 1, .tq = tq, .tk = tk, .d = d,
                  .causal = mask && mask->causal,
                  .lq = {(size_t)tq * d, 0, d}, .lkv = {(size_t)tk * d, 0, d},
                  .lp = {(size_t)tq * tk, 0, tk}};
    int pshape[QKV_MAX_DIMS]; /* (B, ..., Tq, Tk) */
    memcpy(pshape, q->shape, sizeof pshape);
    pshape[nd - 1] = tk;
    return attend(a, &pr, q, k, v, nd, pshape, mask, dropout, rng, weights);
}

/* qkv_attention_heads where the batch entries of k and v start kv_batch
 * values apart (see op_attention.h). */
static qkv_tensor *attention_heads(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                                   size_t kv_batch, int n_head, const qkv_mask *mask,
                                   qkv_real dropout, qkv_rng *rng, qkv_tensor **weights)
{
    if (weights)
        *weights = NULL;
    if (check_inputs("qkv_attention_heads", a, (qkv_tensor *[]){q, k, v}, mask, dropout, rng) < 0)
        return NULL;
    if (q->ndim != 3 || k->ndim != 3 || q->shape[0] != k->shape[0] || q->shape[2] != k->shape[2])
        return qkv__shape_error("qkv_attention_heads", "q (B,Tq,C) and k (B,Tk,C) do not fit", q,
                                k);
    int B = q->shape[0], tq = q->shape[1], tk = k->shape[1], C = q->shape[2];
    if (n_head < 1 || C % n_head != 0) {
        qkv_set_error("qkv_attention_heads: width %d is not a multiple of n_head %d", C, n_head);
        return NULL;
    }
    if (qkv__check_causal("qkv_attention_heads", mask, tq, tk) < 0)
        return NULL;

    /* Head h of batch entry b: columns [h·d, (h+1)·d) of entry b's rows. */
    int d = C / n_head;
    problem pr = {.nb = B, .nh = n_head, .tq = tq, .tk = tk, .d = d,
                  .causal = mask && mask->causal,
                  .lq = {(size_t)tq * C, (size_t)d, C}, .lkv = {kv_batch, (size_t)d, C},
                  .lp = {(size_t)n_head * tq * tk, (size_t)tq * tk, tk}};
    return attend(a, &pr, q, k, v, 4, (const int[]){B, n_head, tq, tk}, mask, dropout, rng,
                  weights);
}

qkv_tensor *qkv_attention_heads(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                                int n_head, const qkv_mask *mask, qkv_real dropout, qkv_rng *rng,
                                qkv_tensor **weights)
{
    size_t kv_batch = k && k->ndim == 3 ? (size_t)k->shape[1] * k->shape[2] : 0;
    return attention_heads(a, q, k, v, kv_batch, n_head, mask, dropout, rng, weights);
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
