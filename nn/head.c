/* One head of self-attention, the lesson version (see qkv/nn.h). The
 * multi-head module computes exactly this for every head at once. The
 * attention itself, softmax(Q·Kᵀ/√d + mask)·V and its backward, is easiest
 * read as plain loops in tensor/attention_plain.c; qkv_attention
 * (tensor/op_attention.c) is the fast version of the same steps. */
#include "internal.h"

int qkv_attn_head_init(qkv_attn_head *m, qkv_params *p, const char *name, int n_embd, int head_size,
                       bool causal)
{
    if (qkv__check_init("qkv_attn_head_init", m, p, name) < 0)
        return -1;
    *m = (qkv_attn_head){.causal = causal};
    const qkv_real std = (qkv_real)0.02;
    if (qkv__linear_sub(&m->query, p, name, "query", n_embd, head_size, false, std) < 0 ||
        qkv__linear_sub(&m->key, p, name, "key", n_embd, head_size, false, std) < 0 ||
        qkv__linear_sub(&m->value, p, name, "value", n_embd, head_size, false, std) < 0)
        return qkv__fail_in("qkv_attn_head_init");
    return 0;
}

qkv_tensor *qkv_attn_head_forward(const qkv_attn_head *m, const qkv_ctx *ctx, qkv_tensor *x,
                                  qkv_tensor **weights)
{
    if (qkv__check_forward("qkv_attn_head_forward", m, ctx, m ? m->query.weight : NULL) < 0 ||
        qkv__check_btc("qkv_attn_head_forward", x, m->query.in) < 0)
        return NULL;
    qkv_arena *a = ctx->arena;

    /* Every position t of x (B,T,C) makes three vectors of size d from its
     * embedding, each by its own learned matrix:
     *   its query q_t: what this position is looking for,
     *   its key   k_t: what this position offers to be found by,
     *   its value v_t: what it hands over to whoever attends to it. */
    qkv_tensor *q = qkv_linear_forward(&m->query, ctx, x); /* (B,T,d) */
    qkv_tensor *k = qkv_linear_forward(&m->key, ctx, x);   /* (B,T,d) */
    qkv_tensor *v = qkv_linear_forward(&m->value, ctx, x); /* (B,T,d) */

    /* How much position t attends to position s is the match q_t·k_s, scaled
     * by 1/√d so the scores stay O(1) as d grows, then softmaxed over s into
     * weights that sum to 1. With the causal mask, positions s > t (the future)
     * get weight exactly 0. The output at t is the weighted average of the
     * values: out_t = Σ_s w_ts·v_s. */
    qkv_mask mask = {.causal = m->causal};
    return qkv__result("qkv_attn_head_forward",
                       qkv_attention(a, q, k, v, &mask, 0, NULL, weights)); /* (B,T,d) */
}
