/* The common end of multi-head attention (see internal.h). */
#include "tensor/attention.h"
#include "internal.h"

qkv_tensor *qkv__attend_project(const qkv_ctx *ctx, const qkv_linear *c_proj, qkv_real dropout,
                                qkv_tensor *y)
{
    /* One product mixes what the heads found. */
    y = qkv_linear_forward(c_proj, ctx, y);
    return qkv_dropout(ctx->arena, y, dropout, ctx->rng, ctx->train);
}

/* "without" so that the zero default is on, as the record always was. */
static _Thread_local bool record_without_weights;

bool qkv_set_record_weights(bool on)
{
    bool was = !record_without_weights;
    record_without_weights = !on;
    return was;
}

bool qkv__record_keeps(const qkv_ctx *ctx)
{
    const qkv_attn_record *rec = ctx->record;
    return rec && rec->calls && rec->n < rec->cap;
}

void qkv__attend_record(const qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                        qkv_tensor *w, qkv_tensor *y, const qkv_mask *mask, int n_head)
{
    /* The record keeps the very tensors the attention used, for inspection. */
    if (y && ctx->record) {
        qkv_attn_record *rec = ctx->record;
        if (rec->calls && rec->n < rec->cap) /* a record without slots only counts */
            rec->calls[rec->n] = (qkv_attn_call){.q = q, .k = k, .v = v, .weights = w, .out = y,
                                                 .mask = *mask, .n_head = n_head};
        rec->n++;
    }
}

qkv_tensor *qkv__attend(const qkv_ctx *ctx, const qkv_linear *c_proj, int n_head, qkv_real dropout,
                        qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, const qkv_mask *mask,
                        qkv_tensor **weights)
{
    qkv_tensor *w = NULL;
    /* The weights cost Tq·Tk: made when the caller or a record that keeps
     * this call asks (qkv_set_record_weights(false): it keeps q and k, and
     * qkv_attention_weights gives the rows one wants from them). */
    bool want = weights || (qkv__record_keeps(ctx) && !record_without_weights);
    /* Every head attends on its own, in its own columns: (B,Tq,C). */
    qkv_tensor *y = qkv_attention_heads(ctx->arena, q, k, v, n_head, mask, ctx->train ? dropout : 0,
                                        ctx->rng, want ? &w : NULL);
    if (weights)
        *weights = w;
    qkv__attend_record(ctx, q, k, v, w, y, mask, n_head);
    return qkv__attend_project(ctx, c_proj, dropout, y);
}

qkv_tensor *qkv__attend_packed(const qkv_ctx *ctx, const qkv_linear *c_proj, int n_head,
                               qkv_real dropout, qkv_tensor *qkv, const qkv_mask *mask)
{
    qkv_tensor *y = qkv__attention_packed(ctx->arena, qkv, n_head, mask,
                                          ctx->train ? dropout : 0, ctx->rng);
    qkv__attend_record(ctx, NULL, NULL, NULL, NULL, y, mask, n_head);
    return y ? qkv__attend_project(ctx, c_proj, dropout, y) : NULL;
}
