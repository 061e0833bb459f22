/* The common end of multi-head attention (see internal.h). */
#include "internal.h"

qkv_tensor *qkv__attend_project(const qkv_run *r, const qkv_linear *c_proj, qkv_real dropout,
                                qkv_tensor *y)
{
    /* One product mixes what the heads found. */
    y = qkv_linear_forward(c_proj, r, y);
    return qkv_dropout(r->arena, y, dropout, r->rng, r->train);
}

void qkv__attend_record(const qkv_run *r, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                        qkv_tensor *w, qkv_tensor *y, const qkv_mask *mask, int n_head)
{
    /* The record keeps the very tensors the attention used, for inspection. */
    if (y && r->record) {
        qkv_attn_record *rec = r->record;
        if (rec->calls && rec->n < rec->cap) /* a record without slots only counts */
            rec->calls[rec->n] = (qkv_attn_call){.q = q, .k = k, .v = v, .weights = w, .out = y,
                                                 .mask = *mask, .n_head = n_head};
        rec->n++;
    }
}

qkv_tensor *qkv__attend(const qkv_run *r, const qkv_linear *c_proj, int n_head, qkv_real dropout,
                        qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, const qkv_mask *mask,
                        qkv_tensor **weights)
{
    qkv_tensor *w = NULL;
    /* Every head attends on its own, in its own columns: (B,Tq,C). */
    qkv_tensor *y = qkv_attention_heads(r->arena, q, k, v, n_head, mask, r->train ? dropout : 0,
                                        r->rng, weights || r->record ? &w : NULL);
    if (weights)
        *weights = w;
    qkv__attend_record(r, q, k, v, w, y, mask, n_head);
    return qkv__attend_project(r, c_proj, dropout, y);
}
