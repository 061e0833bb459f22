/* qkv/stack.h — a decoder-only transformer made of qkv's nn modules by one call.
 *
 * A qkv_stack is the whole language model: token (and learned position)
 * embeddings, n_layer causal blocks, a final norm and a head (the token
 * embedding, tied, or its own Linear with opts.untied). qkv_stack_init
 * declares every parameter by name under a prefix ("lm.h.0.attn.c_attn.weight");
 * the values exist once qkv_params_alloc has run.
 *
 *     qkv_stack_config cfg = {.vocab_size = 65, .block_size = 32,
 *                             .block = {.n_embd = 32, .n_head = 2, .n_layer = 2}};
 *     qkv_params *p = qkv_params_new();
 *     qkv_stack lm;
 *     qkv_stack_init(&lm, p, "lm", &cfg);
 *     qkv_rng rng;
 *     qkv_rng_seed(&rng, 1337);
 *     qkv_params_alloc(p, &rng);
 *     qkv_ctx ctx = {.arena = qkv_arena_new(1 << 22), .train = true, .rng = &rng};
 *     int32_t x[4 * 32] = {0}, y[4 * 32] = {0};                 // (B,T) ids and next ids
 *     qkv_tensor *loss = qkv_stack_loss(&lm, &ctx, x, y, 4, 32);
 *     qkv_backward(ctx.arena, loss);
 *     qkv_lm *gen = qkv_stack_lm_new(&lm, true);                // generation with a KV cache
 *     int32_t out[8];
 *     qkv_generate_batch(gen, 1, x, 1, 8, &(qkv_sample_opts){0}, NULL, -1, out);
 *     qkv_stack_lm_free(gen);
 *     qkv_stack_free(&lm);
 *     qkv_arena_free(&ctx.arena);
 *     qkv_params_free(&p);
 *
 * Configs: a field left 0 takes the default its comment names (see qkv/base.h).
 */
#ifndef QKV_STACK_H
#define QKV_STACK_H

#include "qkv/generate.h"
#include "qkv/nn.h"

QKV_BEGIN_DECLS

/* The sizes of a decoder-only stack. */
typedef struct qkv_stack_config {
    int vocab_size;         /* V: token ids are 0..V-1; required */
    int block_size;         /* the longest sequence: the position table's rows and the
                               cache's length; required */
    qkv_block_config block; /* the blocks: n_embd and n_head required, n_layer 0 = 1;
                               opts.positions rope: no position table; opts.untied: an
                               own lm head instead of the token embedding's transpose */
} qkv_stack_config;

/* The stack's modules (pointers into the qkv_params list it was declared in). */
typedef struct qkv_stack {
    qkv_stack_config cfg; /* as given, n_layer resolved (0 became 1) */
    qkv_embed wte;        /* "<prefix>.wte": (V, C) token embedding (and the tied head) */
    qkv_embed wpe;        /* "<prefix>.wpe": (block_size, C); all zero with rope positions */
    qkv_block *h;         /* "<prefix>.h.<l>": n_layer causal blocks (owned: qkv_stack_free) */
    qkv_ln ln_f;          /* "<prefix>.ln_f": the final norm */
    qkv_linear lm_head;   /* "<prefix>.lm_head": C -> V with opts.untied, else all zero */
} qkv_stack;

/* Declare the stack's parameters into p under prefix ("" or NULL: no prefix),
 * in nanoGPT's order: wte, wpe, h.0 .. h.<n-1>, ln_f, lm_head. 0, or -1 with
 * a message (bad config, a name too long, a name already in p). */
int qkv_stack_init(qkv_stack *s, qkv_params *p, const char *prefix, const qkv_stack_config *cfg);

/* Free what qkv_stack_init allocated besides the parameters (NULL is fine). */
void qkv_stack_free(qkv_stack *s);

/* Logits (B,T,V) for ids (B,T) at positions 0..T-1 (T <= block_size). */
qkv_tensor *qkv_stack_forward(const qkv_stack *s, const qkv_ctx *ctx, const int32_t *ids, int B,
                              int T);

/* The mean next-token cross-entropy of the logits of ids (B,T) against
 * targets (B,T); a target -1 is ignored. A scalar tensor. */
qkv_tensor *qkv_stack_loss(const qkv_stack *s, const qkv_ctx *ctx, const int32_t *ids,
                           const int32_t *targets, int B, int T);

/* Logits (B,n,V) of n new tokens ids (B,n) that follow what cache c holds
 * (their positions start at its length), appending their keys and values to
 * c. c is from qkv_kv_cache_new(&s->cfg.block, B, s->cfg.block_size); the
 * cached forward runs in no-grad mode only (qkv_set_grad_enabled(false)). */
qkv_tensor *qkv_stack_forward_cached(const qkv_stack *s, const qkv_ctx *ctx, const int32_t *ids,
                                     int B, int n, qkv_kv_cache *c);

/* The stack as generation sees it (qkv/generate.h), with its own key/value
 * cache when use_cache (made for the batch of the first window, again when
 * the batch changes) or recomputing the whole window at each token. The
 * stack must outlive it. NULL with a message on failure. */
qkv_lm *qkv_stack_lm_new(const qkv_stack *s, bool use_cache);

/* Free a qkv_lm made by qkv_stack_lm_new and its cache (NULL is fine). */
void qkv_stack_lm_free(qkv_lm *lm);

/* The light way to give one's own module its parameters under a prefix:
 * qkv_params_add under the name "<prefix>.<suffix>" (suffix alone when prefix
 * is NULL or ""). The tensor, or NULL with a message. */
qkv_tensor *qkv_params_add_under(qkv_params *p, const char *prefix, const char *suffix, int ndim,
                                 const int *shape, qkv_init init, qkv_real std);

/* ---- the encoder-decoder stack ----
 *
 * A qkv_s2s_stack is a whole encoder-decoder: source embeddings, n_layer
 * encoder blocks (bidirectional, the source's padding masked), a norm (its
 * output is the memory); target embeddings, n_layer cross blocks (causal
 * self-attention, cross-attention over the memory), a final norm and a head
 * (the target embedding, tied, or its own Linear with opts.untied). Names
 * under the prefix: "<prefix>.enc.{wte,wpe,h.<l>,ln_f}",
 * "<prefix>.dec.{wte,wpe,h.<l>,ln_f,lm_head}", declared in that order.
 *
 *     qkv_s2s_config cfg = {.vocab_size = 13, .max_src = 8, .max_tgt = 9,
 *                           .block = {.n_embd = 32, .n_head = 2, .n_layer = 2}};
 *     qkv_s2s_stack m;
 *     qkv_s2s_stack_init(&m, p, "s2s", &cfg);   // into p before qkv_params_alloc; ctx: above
 *     int32_t src[4 * 8], dec_in[4 * 9], dec_out[4 * 9];         // (B,Ts) and (B,Tt) ids
 *     uint8_t src_valid[4 * 8];                                 // 1 = a token, 0 = padding
 *     qkv_tensor *loss = qkv_s2s_stack_loss(&m, &ctx, src, src_valid, 8, dec_in, dec_out,
 *                                           4, 9);              // dec_out -1: ignored
 *     qkv_lm *gen = qkv_s2s_stack_lm_new(&m, src, src_valid, 4, 8, true);  // encoded once
 *     int32_t bos[4] = {1, 1, 1, 1}, out[4 * 9];                // each row's start token
 *     qkv_generate_batch(gen, 4, bos, 1, 9, &(qkv_sample_opts){0}, NULL, 2, out);  // 2: end
 *     qkv_s2s_stack_lm_free(gen);
 *     qkv_s2s_stack_free(&m);
 */

/* The sizes of an encoder-decoder stack. */
typedef struct qkv_s2s_config {
    int vocab_size;         /* V: target ids 0..V-1, the head's width; required */
    int src_vocab_size;     /* source ids 0..src_vocab_size-1; 0 = vocab_size */
    int max_src;            /* the longest source: the encoder's position table; required */
    int max_tgt;            /* the longest decoder input: its position table and the
                               cache's length; required */
    qkv_block_config block; /* both sides' blocks: n_embd and n_head required, n_layer 0 = 1
                               (encoder blocks, and as many cross blocks); opts as in
                               qkv_stack_config (rope: no position tables) */
} qkv_s2s_config;

/* The encoder-decoder's modules (pointers into the qkv_params list it was declared in). */
typedef struct qkv_s2s_stack {
    qkv_s2s_config cfg;   /* as given, n_layer and src_vocab_size resolved */
    qkv_embed enc_wte;    /* "<prefix>.enc.wte": (src_vocab_size, C) */
    qkv_embed enc_wpe;    /* "<prefix>.enc.wpe": (max_src, C); all zero with rope */
    qkv_block *enc;       /* "<prefix>.enc.h.<l>": n_layer unmasked blocks (owned) */
    qkv_ln enc_ln_f;      /* "<prefix>.enc.ln_f": the memory's norm */
    qkv_embed dec_wte;    /* "<prefix>.dec.wte": (V, C), also the tied head */
    qkv_embed dec_wpe;    /* "<prefix>.dec.wpe": (max_tgt, C); all zero with rope */
    qkv_cross_block *dec; /* "<prefix>.dec.h.<l>": n_layer cross blocks (owned) */
    qkv_ln dec_ln_f;      /* "<prefix>.dec.ln_f": the final norm */
    qkv_linear lm_head;   /* "<prefix>.dec.lm_head": C -> V with opts.untied, else all zero */
} qkv_s2s_stack;

/* Declare the encoder-decoder's parameters into p under prefix ("" or NULL:
 * no prefix). 0, or -1 with a message (bad config, a name too long, a name
 * already in p). */
int qkv_s2s_stack_init(qkv_s2s_stack *s, qkv_params *p, const char *prefix,
                       const qkv_s2s_config *cfg);

/* Free what qkv_s2s_stack_init allocated besides the parameters (NULL is fine). */
void qkv_s2s_stack_free(qkv_s2s_stack *s);

/* The memory (B,Ts,C): the encoder's output for src (B,Ts) (Ts <= max_src),
 * src_valid (B,Ts) 1 for a real token, 0 for padding (NULL: none). */
qkv_tensor *qkv_s2s_stack_encode(const qkv_s2s_stack *s, const qkv_ctx *ctx, const int32_t *src,
                                 const uint8_t *src_valid, int B, int Ts);

/* Logits (B,Tt,V) of the decoder reading ids (B,Tt) (Tt <= max_tgt) over the
 * encoding of src (B,Ts), whose padding src_valid masks (NULL: none). */
qkv_tensor *qkv_s2s_stack_forward(const qkv_s2s_stack *s, const qkv_ctx *ctx, const int32_t *src,
                                  const uint8_t *src_valid, int Ts, const int32_t *ids, int B,
                                  int Tt);

/* The mean cross-entropy of qkv_s2s_stack_forward's logits against targets
 * (B,Tt); a target -1 (padding) is ignored. A scalar tensor. */
qkv_tensor *qkv_s2s_stack_loss(const qkv_s2s_stack *s, const qkv_ctx *ctx, const int32_t *src,
                               const uint8_t *src_valid, int Ts, const int32_t *ids,
                               const int32_t *targets, int B, int Tt);

/* A source batch encoded once for cached decoding: the memory and every
 * cross block's keys and values over it, and a copy of the padding mask. */
typedef struct qkv_s2s_memory qkv_s2s_memory;

/* Encode src (B,Ts) with padding mask src_valid (or NULL) in no-grad mode
 * and keep the result (its own arena); s must outlive it. NULL with a message. */
qkv_s2s_memory *qkv_s2s_memory_new(const qkv_s2s_stack *s, const int32_t *src,
                                   const uint8_t *src_valid, int B, int Ts);

/* Free a memory made by qkv_s2s_memory_new (NULL is fine). */
void qkv_s2s_memory_free(qkv_s2s_memory *mem);

/* Logits (B,n,V) of n new decoder tokens ids (B,n) that follow what cache c
 * holds (their positions start at its length), over the memory mem (of the
 * same B): the self-attention's keys and values are appended to c, the
 * memory's are mem's. c is from qkv_kv_cache_new(&s->cfg.block, B,
 * s->cfg.max_tgt); no-grad mode only (qkv_set_grad_enabled(false)). */
qkv_tensor *qkv_s2s_stack_forward_cached(const qkv_s2s_stack *s, const qkv_ctx *ctx,
                                         const qkv_s2s_memory *mem, const int32_t *ids, int B,
                                         int n, qkv_kv_cache *c);

/* The decoder as generation sees it (qkv/generate.h) for the B sources src
 * (B,Ts), encoded once here: prompt each row with its start token and pass
 * the end token as qkv_generate_batch's stop. With use_cache the decoder's
 * keys and values are kept across steps and the memory's computed once;
 * without, each step decodes the whole window again. s must outlive it;
 * src_valid is copied. NULL with a message. */
qkv_lm *qkv_s2s_stack_lm_new(const qkv_s2s_stack *s, const int32_t *src, const uint8_t *src_valid,
                             int B, int Ts, bool use_cache);

/* Free a qkv_lm made by qkv_s2s_stack_lm_new (NULL is fine); any other lm is
 * refused with a message and left alone. */
void qkv_s2s_stack_lm_free(qkv_lm *lm);

QKV_END_DECLS
#endif
