/* Splitting the width into heads and the common end of multi-head attention (see internal.h). */
#include "internal.h"

qkv_tensor *qkv__split_heads(qkv_arena *a, qkv_tensor *x, int n_head)
{
    if (!x)
        return NULL;
    int B = x->shape[0], T = x->shape[1], D = x->shape[2] / n_head;
    /* Reshape is free: channel h·D + i is element i of head h. The permute copies
     * so that each head's (T,D) block is contiguous, as the attention core wants. */
    qkv_tensor *bthd = qkv_reshape(a, x, QKV_SHAPE(B, T, n_head, D));
    return qkv_permute(a, bthd, (const int[]){0, 2, 1, 3});
}

/* (B,H,T,D) -> (B,T,H·D): the heads' outputs side by side again. */
static qkv_tensor *merge_heads(qkv_arena *a, qkv_tensor *x)
{
    if (!x)
        return NULL;
    int B = x->shape[0], H = x->shape[1], T = x->shape[2], D = x->shape[3];
    qkv_tensor *bthd = qkv_permute(a, x, (const int[]){0, 2, 1, 3});
    return qkv_reshape(a, bthd, QKV_SHAPE(B, T, H * D));
}

qkv_tensor *qkv__attend(const qkv_run *r, const qkv_linear *c_proj, qkv_real dropout,
                        qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, const qkv_mask *mask,
                        qkv_tensor **weights)
{
    qkv_arena *a = r->arena;
    /* Every head attends on its own: (B,H,Tq,D). */
    qkv_tensor *y = qkv_attention(a, q, k, v, mask, r->train ? dropout : 0, r->rng, weights);
    /* Then one product mixes what the heads found. */
    y = qkv_linear_forward(c_proj, r, merge_heads(a, y));
    return qkv_dropout(a, y, dropout, r->rng, r->train);
}
