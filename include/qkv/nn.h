/* qkv/nn.h — the modules a transformer is made of.
 *
 * A module is a plain struct of its parameter tensors and its sizes.
 * `*_init` declares the parameters into a qkv_params list under a dotted name
 * (nanoGPT's names: "h.0.attn.c_attn.weight"), so the list is the module's
 * parameters by name, for the optimizer and for checkpoints; the values exist
 * once qkv_params_alloc has run. `*_forward` builds the module's part of the
 * graph in the ctx's arena and returns its output (NULL with a message on
 * bad shapes, like every op).
 *
 *     qkv_block_config cfg = {.n_embd = 64, .n_head = 4, .n_layer = 2, .dropout = 0.1};
 *     qkv_params *p = qkv_params_new();
 *     qkv_block block;
 *     qkv_block_init(&block, p, "h.0", &cfg, true);      // a GPT (causal) block
 *     qkv_rng rng;
 *     qkv_rng_seed(&rng, 1337);
 *     qkv_params_alloc(p, &rng);
 *     qkv_ctx ctx = {.arena = qkv_arena_new(1 << 20), .train = true, .rng = &rng};
 *     qkv_tensor *x = qkv_randn(ctx.arena, QKV_SHAPE(8, 16, 64), 1, &rng);   // (B,T,C)
 *     qkv_tensor *y = qkv_block_forward(&block, &ctx, x, NULL, NULL);          // (B,T,C)
 *     qkv_arena_free(&ctx.arena);
 *     qkv_params_free(&p);
 *
 * Shapes: B batch, T (Tq, Tk) sequence lengths, C the model width (n_embd),
 * H heads, D = C/H the head size. A padding mask is a uint8 array (B, Tk):
 * 1 = a real position, 0 = padding that no query may attend to.
 *
 * Configs: a field left 0 takes the default its comment names (see qkv/base.h);
 * a qkv_block_config needs only n_embd and n_head.
 */
#ifndef QKV_NN_H
#define QKV_NN_H

#include "qkv/ops.h"
#include "qkv/options.h"
#include "qkv/params.h"

QKV_BEGIN_DECLS

/* One multi-head attention as a forward ran it: the exact tensors its scores,
 * weights and output were computed from (arena tensors, alive until the arena
 * is reset). Head h owns columns [h·D, (h+1)·D) of q, k, v and out. */
typedef struct qkv_attn_call {
    qkv_tensor *q;       /* (B,Tq,C): the queries, as the attention core read them */
    qkv_tensor *k;       /* (B,Tk,C): the keys */
    qkv_tensor *v;       /* (B,Tk,C): the values */
    qkv_tensor *weights; /* (B,H,Tq,Tk): softmax(q·kᵀ/√D + mask), before dropout; NULL
                            under qkv_set_record_weights(false) */
    qkv_tensor *out;     /* (B,Tq,C): each head's weighted sum of the values, before c_proj */
    qkv_mask mask;       /* the mask it used (key_valid points at the caller's array) */
    int n_head;          /* H */
} qkv_attn_call;

/* Where a forward records its attention calls, in the order it makes them
 * (a GPT: layer 0, 1, ...; see each model for its order). */
typedef struct qkv_attn_record {
    qkv_attn_call *calls; /* cap slots; NULL: calls are only counted */
    int cap;              /* slots in calls */
    int n;                /* calls made so far; those past cap are counted, not kept */
} qkv_attn_record;

/* Whether a record also gets the weights of each call it keeps (on, the
 * default, for this thread); returns the previous setting. Off, the calls
 * keep q, k, v, out and the mask with weights NULL, and qkv_attention_weights
 * gives the rows one shows from the call's q and k: a long context's Tq·Tk
 * per layer is never made. The cached forward's calls keep their weights. */
bool qkv_set_record_weights(bool on);

/* The context of a forward pass: what every forward needs besides its inputs
 * (the arena it builds in, training mode, dropout's rng, an optional record). */
typedef struct qkv_ctx {
    qkv_arena *arena;        /* activations and graph nodes of this forward come from here */
    bool train;              /* training mode: dropout is active */
    qkv_rng *rng;            /* dropout draws from it; may be NULL when nothing drops out */
    qkv_attn_record *record; /* NULL, or every multi-head attention appends its call here */
} qkv_ctx;

/* The highest dropout probability a model config takes (blocks, the GPT,
 * the encoder-decoder): above it so few activations are kept, scaled up so
 * much, that training only makes noise; 1 would keep none. */
#define QKV_DROPOUT_MAX 0.95

/* The sizes shared by the attention modules, the MLP and the blocks. n_embd
 * and n_head are required; every other field may be left 0. */
typedef struct qkv_block_config {
    int n_embd;       /* C: width of the residual stream */
    int n_head;       /* H: attention heads; n_embd must be a multiple of it */
    int n_layer;      /* blocks in the model (residual projections start at init_std/√(2·n_layer),
                         a key/value cache has n_layer layers); 0 = 1, a block on its own */
    qkv_real dropout; /* in training: attention-weight, residual and MLP dropout probability;
                         0 = none; [0, QKV_DROPOUT_MAX] */
    qkv_model_options opts; /* the options (qkv/options.h); all zero, the zero value, is
                               GPT-2's block, biases included; untied does not concern a block */
    qkv_real init_std;      /* std of the weights' normal init (the residual projections get
                               init_std/√(2·n_layer)); 0 = 0.02, GPT-2's */
} qkv_block_config;

/* ---- Linear, Embedding, LayerNorm, MLP ---- */

/* y = x·Wᵀ + b over the last dim of x. */
typedef struct qkv_linear {
    qkv_tensor *weight; /* (out, in), as PyTorch stores it */
    qkv_tensor *bias;   /* (out), or NULL */
    int in, out;        /* features in and out */
} qkv_linear;

/* Declare "<name>.weight" (N(0, std²)) and, if bias, "<name>.bias" (zeros). 0 or -1. */
int qkv_linear_init(qkv_linear *m, qkv_params *p, const char *name, int in, int out, bool bias,
                    qkv_real std);

/* x (..., in) -> (..., out). */
qkv_tensor *qkv_linear_forward(const qkv_linear *m, const qkv_ctx *ctx, qkv_tensor *x);

/* A table of learned vectors, one row per token id. */
typedef struct qkv_embed {
    qkv_tensor *weight; /* (V, C) */
    int vocab, dim;     /* V and C */
} qkv_embed;

/* Declare "<name>.weight" (V, C), N(0, std²). 0 or -1. */
int qkv_embed_init(qkv_embed *m, qkv_params *p, const char *name, int vocab, int dim, qkv_real std);

/* The rows for ids of shape (ndim, shape), e.g. QKV_SHAPE(B, T): result (shape..., C). */
qkv_tensor *qkv_embed_forward(const qkv_embed *m, const qkv_ctx *ctx, const int32_t *ids, int ndim,
                              const int *shape);

/* LayerNorm over the last dim with a learned scale and (optional) shift;
 * or, made by qkv_rmsnorm_init, RMSNorm with a learned scale. */
typedef struct qkv_ln {
    qkv_tensor *weight; /* (C), starts at 1 */
    qkv_tensor *bias;   /* (C), starts at 0; or NULL */
    qkv_real eps;       /* added to the variance (the mean square for RMSNorm): 1e-5 */
    bool rms;           /* RMSNorm: rescale by the root mean square, no mean, no shift */
} qkv_ln;

/* Declare "<name>.weight" (ones) and, if bias, "<name>.bias" (zeros). 0 or -1. */
int qkv_ln_init(qkv_ln *m, qkv_params *p, const char *name, int dim, bool bias);

/* An RMSNorm in m: declare "<name>.weight" (dim), ones. 0 or -1. */
int qkv_rmsnorm_init(qkv_ln *m, qkv_params *p, const char *name, int dim);

/* x (..., C) -> (..., C). */
qkv_tensor *qkv_ln_forward(const qkv_ln *m, const qkv_ctx *ctx, qkv_tensor *x);

/* The feed-forward part of a block: Linear C→4C, GELU (or ReLU²), Linear 4C→C, dropout. */
typedef struct qkv_mlp {
    qkv_linear c_fc;   /* C -> 4C */
    qkv_linear c_proj; /* 4C -> C, a residual projection (smaller init) */
    qkv_real dropout;  /* on the output, in training */
    qkv_model_options opts; /* the block's options; opts.activation: its nonlinearity */
} qkv_mlp;

/* Declare "<name>.c_fc.*" and "<name>.c_proj.*". 0 or -1. */
int qkv_mlp_init(qkv_mlp *m, qkv_params *p, const char *name, const qkv_block_config *cfg);

/* x (..., C) -> (..., C). */
qkv_tensor *qkv_mlp_forward(const qkv_mlp *m, const qkv_ctx *ctx, qkv_tensor *x);

/* ---- attention ----
 * Every attention forward takes an optional `weights` out parameter: when not
 * NULL it receives the attention weights (before dropout), (B,T,T) for the
 * single head and (B,H,Tq,Tk) for the multi-head modules. */

/* One head of self-attention, written as the lesson: every position asks a
 * query, offers a key and carries a value. */
typedef struct qkv_attn_head {
    qkv_linear query, key, value; /* C -> d each, no bias */
    bool causal;                  /* position t sees only positions <= t */
} qkv_attn_head;

/* Declare "<name>.query.weight", "<name>.key.weight", "<name>.value.weight"
 * (head_size, n_embd), N(0, 0.02²). 0 or -1. */
int qkv_attn_head_init(qkv_attn_head *m, qkv_params *p, const char *name, int n_embd, int head_size,
                       bool causal);

/* x (B,T,C) -> (B,T,d). */
qkv_tensor *qkv_attn_head_forward(const qkv_attn_head *m, const qkv_ctx *ctx, qkv_tensor *x,
                                  qkv_tensor **weights);

/* Multi-head self-attention (GPT's CausalSelfAttention; unmasked in an encoder). */
typedef struct qkv_self_attn {
    qkv_linear c_attn; /* C -> 3C: W_Q, W_K, W_V stacked (rows [0,C), [C,2C), [2C,3C)) */
    qkv_linear c_proj; /* C -> C: mixes the heads; a residual projection */
    int n_embd, n_head;
    bool causal;       /* position t sees only positions <= t */
    qkv_real dropout;  /* attention-weight and output dropout, in training */
    qkv_model_options opts; /* the block's options; rope positions: rotate q and k by
                               position before the scores; opts.qk_norm: RMS-normalise each
                               head's q and k */
    qkv_ln q_norm;     /* with qk_norm: RMSNorm over a head's d, scale (d) shared by the heads */
    qkv_ln k_norm;     /* the same for the keys */
} qkv_self_attn;

/* Declare "<name>.c_attn.*" and "<name>.c_proj.*" (with cfg->opts.qk_norm also
 * "<name>.q_norm.weight", "<name>.k_norm.weight"). Error when n_embd is not a
 * multiple of n_head, or with rope positions when the head size is odd. 0 or -1. */
int qkv_self_attn_init(qkv_self_attn *m, qkv_params *p, const char *name,
                       const qkv_block_config *cfg, bool causal);

/* x (B,T,C) -> (B,T,C). key_valid (B,T) masks padded positions as keys, or NULL. */
qkv_tensor *qkv_self_attn_forward(const qkv_self_attn *m, const qkv_ctx *ctx, qkv_tensor *x,
                                  const uint8_t *key_valid, qkv_tensor **weights);

/* Multi-head cross-attention: queries from x, keys and values from a memory
 * (the encoder output) of another length and width. */
typedef struct qkv_cross_attn {
    qkv_linear c_q;    /* C -> C: queries from x */
    qkv_linear c_kv;   /* C_mem -> 2C: keys and values from the memory */
    qkv_linear c_proj; /* C -> C: mixes the heads; a residual projection */
    int n_embd, n_mem, n_head;
    qkv_real dropout;  /* attention-weight and output dropout, in training */
} qkv_cross_attn;

/* Declare "<name>.c_q.*", "<name>.c_kv.*" and "<name>.c_proj.*" for a memory
 * of width n_mem. 0 or -1. */
int qkv_cross_attn_init(qkv_cross_attn *m, qkv_params *p, const char *name,
                        const qkv_block_config *cfg, int n_mem);

/* x (B,Tq,C) attends over memory (B,Tk,C_mem) -> (B,Tq,C). mem_valid (B,Tk)
 * masks padded memory positions, or NULL. */
qkv_tensor *qkv_cross_attn_forward(const qkv_cross_attn *m, const qkv_ctx *ctx, qkv_tensor *x,
                                   qkv_tensor *memory, const uint8_t *mem_valid,
                                   qkv_tensor **weights);

/* The memory's keys and values, (B,Tk,C) each (head h in columns
 * [h·D, (h+1)·D)), into *k and *v: computed
 * once per memory and reused by qkv_cross_attn_forward_kv for every decoding
 * step (make them from an arena that outlives those steps). 0 or -1. */
int qkv_cross_attn_memory(const qkv_cross_attn *m, const qkv_ctx *ctx, qkv_tensor *memory,
                          qkv_tensor **k, qkv_tensor **v);

/* qkv_cross_attn_forward with the memory's keys and values already computed. */
qkv_tensor *qkv_cross_attn_forward_kv(const qkv_cross_attn *m, const qkv_ctx *ctx, qkv_tensor *x,
                                      qkv_tensor *k, qkv_tensor *v, const uint8_t *mem_valid,
                                      qkv_tensor **weights);

/* ---- blocks (pre-LayerNorm, residual) ---- */

/* x + attn(ln_1(x)), then x + mlp(ln_2(x)). Causal: a GPT decoder block;
 * not causal, with a padding mask: an encoder block. */
typedef struct qkv_block {
    qkv_ln ln_1;
    qkv_self_attn attn;
    qkv_ln ln_2;
    qkv_mlp mlp;
} qkv_block;

/* Declare "<name>.ln_1.*", "<name>.attn.*", "<name>.ln_2.*", "<name>.mlp.*". 0 or -1. */
int qkv_block_init(qkv_block *m, qkv_params *p, const char *name, const qkv_block_config *cfg,
                   bool causal);

/* x (B,T,C) -> (B,T,C). key_valid (B,T) or NULL; weights as for the attention. */
qkv_tensor *qkv_block_forward(const qkv_block *m, const qkv_ctx *ctx, qkv_tensor *x,
                              const uint8_t *key_valid, qkv_tensor **weights);

/* The decoder block of an encoder-decoder: x + attn(ln_1(x)) (causal),
 * x + cross(ln_2(x), memory), x + mlp(ln_3(x)). */
typedef struct qkv_cross_block {
    qkv_ln ln_1;
    qkv_self_attn attn;
    qkv_ln ln_2;
    qkv_cross_attn cross;
    qkv_ln ln_3;
    qkv_mlp mlp;
} qkv_cross_block;

/* Declare "<name>.{ln_1,attn,ln_2,cross,ln_3,mlp}.*" for a memory of width n_mem. 0 or -1. */
int qkv_cross_block_init(qkv_cross_block *m, qkv_params *p, const char *name,
                         const qkv_block_config *cfg, int n_mem);

/* x (B,Tq,C), memory (B,Tk,C_mem) -> (B,Tq,C); mem_valid (B,Tk) or NULL.
 * self_weights / cross_weights receive the two attentions' weights, or are NULL. */
qkv_tensor *qkv_cross_block_forward(const qkv_cross_block *m, const qkv_ctx *ctx, qkv_tensor *x,
                                    qkv_tensor *memory, const uint8_t *mem_valid,
                                    qkv_tensor **self_weights, qkv_tensor **cross_weights);

/* ---- key/value cache for generation ----
 * Generating token t with a causal model needs the keys and values of tokens
 * 0..t-1, which never change: keep them, and a new token costs O(T) instead of
 * recomputing all T positions. The cached forwards run in no-grad mode only. */

typedef struct qkv_kv_cache {
    int n_layer;   /* one K and one V buffer per layer */
    int batch;     /* B */
    int n_head;    /* H */
    int max_len;   /* Tmax: positions each buffer holds */
    int head_size; /* D */
    int *len;      /* per layer: positions filled so far */
    qkv_real *k;   /* (n_layer, B, Tmax, H·D): each position's keys, heads side by side */
    qkv_real *v;   /* (n_layer, B, Tmax, H·D): each position's values */
} qkv_kv_cache;

/* An empty cache for cfg's layers and heads, batch sequences of up to max_len
 * positions; NULL on failure. */
qkv_kv_cache *qkv_kv_cache_new(const qkv_block_config *cfg, int batch, int max_len);

/* Free the cache (NULL is fine). */
void qkv_kv_cache_free(qkv_kv_cache *c);

/* Forget every position (start new sequences). */
void qkv_kv_cache_reset(qkv_kv_cache *c);

/* Causal self-attention of the new positions x (B,Tnew,C) over everything in
 * layer's cache plus themselves: appends their keys and values to the cache.
 * Error (cache untouched) when the cache is full, sizes do not match, the
 * module is not causal or grad mode is on. -> (B,Tnew,C). */
qkv_tensor *qkv_self_attn_forward_cached(const qkv_self_attn *m, const qkv_ctx *ctx, qkv_tensor *x,
                                         qkv_kv_cache *c, int layer);

/* qkv_block_forward of a causal block for the new positions only, using layer's cache. */
qkv_tensor *qkv_block_forward_cached(const qkv_block *m, const qkv_ctx *ctx, qkv_tensor *x,
                                     qkv_kv_cache *c, int layer);

/* qkv_cross_block_forward for the new positions only: self-attention through
 * layer's cache, cross-attention over the memory's keys and values k, v from
 * qkv_cross_attn_memory. */
qkv_tensor *qkv_cross_block_forward_cached(const qkv_cross_block *m, const qkv_ctx *ctx,
                                           qkv_tensor *x, qkv_kv_cache *c, int layer,
                                           qkv_tensor *k, qkv_tensor *v,
                                           const uint8_t *mem_valid);

QKV_END_DECLS
#endif
