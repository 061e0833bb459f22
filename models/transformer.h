/* Internal to models/: the ends every transformer here shares, around its
 * blocks. Not installed. */
#ifndef QKV_TRANSFORMER_H
#define QKV_TRANSFORMER_H

#include "qkv/nn.h"

/* Token plus position embeddings of ids (B,T) at positions pos0.. (none when
 * wpe is NULL), then dropout p in training -> (B,T,C). The caller checks the
 * positions fit wpe. */
qkv_tensor *qkv__embed_tokens(const qkv_embed *wte, const qkv_embed *wpe, const qkv_run *r,
                              const int32_t *ids, int B, int T, int pos0, qkv_real p);

/* The final LayerNorm, then the lm head tied to the token embedding wte:
 * x (B,T,C) -> logits (B,T,V). */
qkv_tensor *qkv__tied_head(const qkv_ln *ln_f, const qkv_embed *wte, const qkv_run *r,
                           qkv_tensor *x);

#endif
