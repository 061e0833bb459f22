/* Internal: the attention core over keys and values read where they lie in a
 * larger buffer, the key/value cache of generation. Not installed. */
#ifndef QKV_OP_ATTENTION_H
#define QKV_OP_ATTENTION_H

#include "qkv/ops.h"

/* qkv_attention_heads (no dropout) with k and v (B,Tk,C) views
 * whose batch entries start kv_batch values apart rather than Tk·C: the
 * first Tk positions of each entry of a (B,Tmax,C) buffer, read in place.
 * Such views are not contiguous tensors, so grad mode must be off (-1
 * otherwise); the result is an ordinary (B,Tq,C) tensor. */
qkv_tensor *qkv__attention_heads_view(qkv_arena *a, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                                      size_t kv_batch, int n_head, const qkv_mask *mask,
                                      qkv_tensor **weights);

#endif
