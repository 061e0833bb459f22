/* Internal to models/gpt/: the GPT's pieces that generation reuses. Not installed. */
#ifndef QKV_GPT_INTERNAL_H
#define QKV_GPT_INTERNAL_H

#include "qkv/gpt.h"

/* Token plus position embeddings (none with RoPE), then dropout, for ids
 * (B,T) at positions pos0.. -> (B,T,C). */
qkv_tensor *qkv__gpt_embed(const qkv_gpt *m, const qkv_ctx *ctx, const int32_t *idx, int B, int T,
                           int pos0);

/* The model of cfg with every parameter declared but none allocated
 * (qkv_params_alloc does that): small however large cfg is, so a loader can
 * compare what a file holds with what the model needs before allocating it.
 * NULL with a message naming qkv_gpt_new on a bad config. (gpt.c) */
qkv_gpt *qkv__gpt_declare(const qkv_gpt_config *cfg);

/* How many parameter values a model of config c has, counted from its
 * declared parameters without allocating them (0 when it cannot be declared). */
uint64_t qkv__gpt_n_values(const qkv_gpt_config *c);

/* Final norm, then the lm head: tied to the token embedding (x · wteᵀ) or,
 * untied, lm_head's own -> (B,T,V). */
qkv_tensor *qkv__gpt_head(const qkv_gpt *m, const qkv_ctx *ctx, qkv_tensor *x);

#endif
