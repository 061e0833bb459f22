/* Internal: the ends around a transformer's blocks and the stack's run,
 * shared by the public stack (stack.c), its qkv_lm (decode/stack_lm.c) and
 * the built-in models. Not installed. */
#ifndef QKV_NN_STACK_H
#define QKV_NN_STACK_H

#include "qkv/nn.h"

/* Token plus position embeddings of ids (B,T) at positions pos0.. (none when
 * wpe is NULL), then dropout p in training -> (B,T,C). The caller checks the
 * positions fit wpe. */
qkv_tensor *qkv__embed_tokens(const qkv_embed *wte, const qkv_embed *wpe, const qkv_ctx *ctx,
                              const int32_t *ids, int B, int T, int pos0, qkv_real p);

/* The final norm, then the lm head: lm_head (an untied model's own), or
 * with lm_head NULL the token embedding wte (tied): x (B,T,C) -> logits (B,T,V). */
qkv_tensor *qkv__lm_head(const qkv_ln *ln_f, const qkv_embed *wte, const qkv_linear *lm_head,
                         const qkv_ctx *ctx, qkv_tensor *x);

/* 0 when ids (B,n) (named what, n named len) are token ids in [0, V) whose
 * positions pos0..pos0+n-1 fit `positions` (named limit); else -1 naming fn
 * and the first fault (stack_ends.c). */
int qkv__check_ids(const char *fn, const char *what, const char *len, const char *limit,
                   const int32_t *ids, int B, int n, int pos0, int positions, int V);

/* The stack's logits for ids (B,n) after what c holds (c NULL: from
 * position 0, with the graph), errors naming fn; with last_only only each
 * row's last position goes through the head: (B,1,V) (stack.c). */
struct qkv_stack;
qkv_tensor *qkv__stack_run(const char *fn, const struct qkv_stack *s, const qkv_ctx *ctx,
                           const int32_t *ids, int B, int n, qkv_kv_cache *c, bool last_only);

#endif
