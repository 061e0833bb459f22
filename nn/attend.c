/* The common end of multi-head attention (see internal.h). */
#include "internal.h"

qkv_tensor *qkv__attend_project(const qkv_run *r, const qkv_linear *c_proj, qkv_real dropout,
                                qkv_tensor *y)
{
    /* One product mixes what the heads found. */
    y = qkv_linear_forward(c_proj, r, y);
    return qkv_dropout(r->arena, y, dropout, r->rng, r->train);
}

qkv_tensor *qkv__attend(const qkv_run *r, const qkv_linear *c_proj, int n_head, qkv_real dropout,
                        qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, const qkv_mask *mask,
                        qkv_tensor **weights)
{
    /* Every head attends on its own, in its own columns: (B,Tq,C). */
    qkv_tensor *y = qkv_attention_heads(r->arena, q, k, v, n_head, mask, r->train ? dropout : 0,
                                        r->rng, weights);
    return qkv__attend_project(r, c_proj, dropout, y);
}
