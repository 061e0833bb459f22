/* Internal to models/: what every transformer here shares: the size checks
 * of its config and the ends around its blocks. Not installed. */
#ifndef QKV_TRANSFORMER_H
#define QKV_TRANSFORMER_H

#include "qkv/nn.h"

/* 1..256 layers, a width of 1..65536 that n_head divides, dropout in [0, 1):
 * 0, or -1 with "<who> config: ..." naming the first bad field. The upper
 * bounds keep a corrupt or hostile config from asking for a giant model. */
int qkv__check_model_sizes(const char *who, int n_layer, int n_head, int n_embd, double dropout);

/* Token plus position embeddings of ids (B,T) at positions pos0.. (none when
 * wpe is NULL), then dropout p in training -> (B,T,C). The caller checks the
 * positions fit wpe. */
qkv_tensor *qkv__embed_tokens(const qkv_embed *wte, const qkv_embed *wpe, const qkv_ctx *ctx,
                              const int32_t *ids, int B, int T, int pos0, qkv_real p);

/* The final LayerNorm, then the lm head tied to the token embedding wte:
 * x (B,T,C) -> logits (B,T,V). */
qkv_tensor *qkv__tied_head(const qkv_ln *ln_f, const qkv_embed *wte, const qkv_ctx *ctx,
                           qkv_tensor *x);

#endif
