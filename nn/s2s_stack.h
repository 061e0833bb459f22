/* Internal: the encoder-decoder stack's runs and its encoded memory, shared
 * by the public stack (s2s_stack.c, s2s_memory.c), its qkv_lm
 * (decode/s2s_stack_lm.c) and the built-in seq2seq. Not installed. */
#ifndef QKV_NN_S2S_STACK_H
#define QKV_NN_S2S_STACK_H

#include "qkv/stack.h"

/* A source batch encoded once (qkv/stack.h's qkv_s2s_memory). */
struct qkv_s2s_memory {
    const qkv_s2s_stack *s; /* the stack it was encoded by */
    int B, Ts;              /* the source batch's sizes */
    qkv_arena *arena;       /* everything below, for the memory's life */
    qkv_tensor *memory;     /* (B,Ts,C): the encoder's output */
    uint8_t *src_valid;     /* (B,Ts) copy of the padding mask, or NULL */
    qkv_tensor **k, **v;    /* each cross block's keys and values over memory */
};

/* The memory (B,Ts,C) of src, errors naming fn (s2s_stack.c). */
qkv_tensor *qkv__s2s_encode(const char *fn, const qkv_s2s_stack *s, const qkv_ctx *ctx,
                            const int32_t *src, const uint8_t *src_valid, int B, int Ts);

/* The decoder's logits (B,Tt,V) for ids (B,Tt) from position 0 over memory,
 * errors naming fn; cross_weights, when not NULL, receives each layer's
 * cross-attention weights (s2s_stack.c). */
qkv_tensor *qkv__s2s_decode(const char *fn, const qkv_s2s_stack *s, const qkv_ctx *ctx,
                            qkv_tensor *memory, const uint8_t *src_valid, const int32_t *ids, int B,
                            int Tt, qkv_tensor **cross_weights);

/* The decoder's logits for ids (B,n) after what c holds, over mem's keys and
 * values, errors naming fn; with last_only only each row's last position
 * goes through the head: (B,1,V) (s2s_stack.c). */
qkv_tensor *qkv__s2s_decode_cached(const char *fn, const qkv_s2s_stack *s, const qkv_ctx *ctx,
                                   const qkv_s2s_memory *mem, const int32_t *ids, int B, int n,
                                   qkv_kv_cache *c, bool last_only);

/* qkv_s2s_memory_new, errors naming fn (s2s_memory.c). */
qkv_s2s_memory *qkv__s2s_memory_new(const char *fn, const qkv_s2s_stack *s, const int32_t *src,
                                    const uint8_t *src_valid, int B, int Ts);

#endif
