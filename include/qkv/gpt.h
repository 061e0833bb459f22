/* qkv/gpt.h — a character-level GPT: build it, run it, train it, sample from it.
 *
 * Token and learned position embeddings, n_layer causal decoder blocks
 * (pre-LayerNorm), a final LayerNorm and an lm head tied to the token
 * embedding (logits = x · wteᵀ): nanoGPT's model. Options (qkv/options.h,
 * all off by default) swap in the parts of later recipes: no biases, rotary
 * positions instead of wpe, RMSNorm (every norm, ln_f included), ReLU²,
 * QK-norm, an lm head "lm_head.weight" (V, C) of its own.
 *
 *     static int emit(int32_t id, void *ud) { (void)ud; return putchar('a' + id % 26) == EOF; }
 *     static int print(const char *text, size_t len, void *ud)
 *     {
 *         return fwrite(text, 1, len, ud) != len;   // non-zero stops the generation
 *     }
 *
 *     qkv_gpt_config cfg = {.vocab_size = 65, .block_size = 64, .n_layer = 4,
 *                           .n_head = 4, .n_embd = 128, .dropout = 0.1};
 *     qkv_gpt *m = qkv_gpt_new(&cfg, 1337);
 *     qkv_rng rng;
 *     qkv_rng_seed(&rng, 1);
 *     qkv_ctx ctx = {.arena = qkv_arena_new(1 << 20), .train = true, .rng = &rng};
 *     int32_t x[2 * 8] = {0}, y[2 * 8] = {1};            // B = 2 sequences of T = 8 ids
 *     qkv_tensor *loss = qkv_gpt_loss(m, &ctx, x, y, 2, 8);   // mean cross-entropy
 *     qkv_backward(ctx.arena, loss);
 *     // ... an optimizer step (qkv/optim.h) ...
 *     int32_t prompt[1] = {0};
 *     qkv_sample_opts opts = {.temperature = 0.8, .top_k = 40};    // top_p 0: keep all
 *     qkv_gpt_generate(m, prompt, 1, 300, &opts, &rng, true, emit, NULL);
 *     qkv_arena_free(&ctx.arena);
 *     // or text in, text out (qkv/generate.h), here from a saved model and its vocabulary:
 *     qkv_tokenizer vocab;
 *     qkv_gpt *saved = qkv_gpt_load("baby.ckpt", &vocab);
 *     qkv_lm *lm = saved ? qkv_gpt_lm_new(saved, true) : NULL;
 *     qkv_generate_text(lm, &vocab, "ROMEO:", 300, &opts, &rng, print, stdout);
 *     qkv_gpt_lm_free(lm);
 *     qkv_gpt_free(saved);
 *     qkv_gpt_free(m);
 *     // trained on a text file (a qkv_training run, qkv/training.h):
 *     qkv_corpus *text = qkv_corpus_load("input.txt", NULL);
 *     qkv_gpt_config mc = {.vocab_size = text ? text->tok.size : 1, .block_size = 64,
 *                          .n_layer = 4, .n_head = 4, .n_embd = 128};
 *     qkv_train_config tc = qkv_train_defaults();
 *     qkv_gpt *g = qkv_gpt_new(&mc, tc.seed);
 *     qkv_training_model tm;
 *     qkv_training *run = g && text && qkv_gpt_training_model(g, text, &tm) == 0
 *                             ? qkv_training_new(&tm, &tc) : NULL;
 *     while (run && run->step < run->cfg.iters)
 *         if (qkv_training_step(run, NULL, NULL) < 0) break;
 *     if (run)
 *         printf("val loss %.4f\n", qkv_training_eval(run, QKV_SPLIT_VAL));
 *     qkv_training_save(run, "run.ckpt");
 *     qkv_training_free(run);
 *     qkv_gpt_free(g);
 *     // and resumed: the model and its vocabulary from the checkpoint, the text again
 *     qkv_gpt *back = qkv_gpt_load("run.ckpt", &vocab);
 *     qkv_corpus *again = back ? qkv_corpus_load("input.txt", &vocab) : NULL;
 *     run = again && qkv_gpt_training_model(back, again, &tm) == 0
 *               ? qkv_training_resume(&tm, "run.ckpt", 4000) : NULL;   // 4000 steps now
 *     qkv_training_free(run);
 *     qkv_gpt_free(back);
 *     qkv_corpus_free(again);
 *     qkv_corpus_free(text);
 *
 * Configs: a field left 0 takes the default its comment names (see qkv/base.h);
 * the five sizes of a qkv_gpt_config are required.
 */
#ifndef QKV_GPT_H
#define QKV_GPT_H

#include "qkv/bpe.h"
#include "qkv/data.h"
#include "qkv/generate.h"
#include "qkv/nn.h"
#include "qkv/training.h"

QKV_BEGIN_DECLS

typedef struct qkv_gpt_config {
    int vocab_size; /* V: number of tokens */
    int block_size; /* T: the longest context (positions in wpe) */
    int n_layer;    /* decoder blocks */
    int n_head;     /* attention heads per block; n_embd must be a multiple */
    int n_embd;     /* C: width of the residual stream */
    double dropout; /* dropout probability in training; 0 = none; [0, QKV_DROPOUT_MAX] */
    qkv_model_options opts; /* the options (qkv/options.h); all zero, the zero value, is
                               GPT-2's layout (and every checkpoint written before them) */
} qkv_gpt_config;

/* Bytes of a serialised config (the checkpoint's config blob). The last
 * field is a word of flags, the options in QKV_MODEL_OPTIONS' order from
 * bit 0: no_bias (alone in the first checkpoints), positions, norm,
 * activation, qk_norm, untied, ...; bit k of an option's value is bit 8·k
 * of its place (a value 0 or 1 is the bit, as when each option was a bool). */
#define QKV_GPT_CONFIG_BYTES 32

/* Write cfg as QKV_GPT_CONFIG_BYTES portable bytes (little-endian fields). */
void qkv_gpt_config_pack(const qkv_gpt_config *cfg, uint8_t out[QKV_GPT_CONFIG_BYTES]);

/* Read a config written by qkv_gpt_config_pack (the first QKV_GPT_CONFIG_BYTES
 * of blob; a longer blob may carry more after it) and check it; 0, or -1
 * naming the first bad field (e.g. a short blob, or n_embd % n_head). */
int qkv_gpt_config_unpack(qkv_gpt_config *cfg, const void *blob, size_t len);

/* 0 when every size is usable; otherwise -1 naming the bad field. */
int qkv_gpt_config_check(const qkv_gpt_config *cfg);

typedef struct qkv_gpt {
    qkv_gpt_config cfg;     /* the sizes */
    qkv_params *params;     /* every parameter, by name, in one flat buffer */
    qkv_embed wte;          /* token embedding (V, C); also the lm head */
    qkv_embed wpe;          /* position embedding (block_size, C); unused with RoPE */
    qkv_block *h;           /* n_layer causal blocks */
    qkv_ln ln_f;            /* final LayerNorm (or RMSNorm) */
    qkv_linear lm_head;     /* with cfg.opts.untied: C -> V, no bias; else unused */
    qkv_block_config block; /* the blocks' shared sizes */
} qkv_gpt;

/* A model with freshly initialised parameters drawn from seed; NULL with a
 * message on a bad config or no memory. */
qkv_gpt *qkv_gpt_new(const qkv_gpt_config *cfg, uint64_t seed);

/* Free the model and its parameters (NULL is fine). */
void qkv_gpt_free(qkv_gpt *m);

/* Logits (B,T,V) for token ids idx (B,T), T <= block_size. When weights is
 * not NULL it must hold n_layer slots and receives each layer's attention
 * weights (B,H,T,T). An id outside [0, V) is an error naming it. */
qkv_tensor *qkv_gpt_logits(const qkv_gpt *m, const qkv_ctx *ctx, const int32_t *idx, int B, int T,
                           qkv_tensor **weights);

/* Mean cross-entropy of the next-token predictions for idx (B,T) against
 * targets (B,T), shape (1). */
qkv_tensor *qkv_gpt_loss(const qkv_gpt *m, const qkv_ctx *ctx, const int32_t *idx,
                         const int32_t *targets, int B, int T);

/* ---- sampling (the options and the loop are in qkv/generate.h) ---- */

/* The model as a qkv_lm, for qkv_generate and qkv_generate_text; with
 * use_cache it owns a key/value cache (each new token costs O(T)), without
 * it every token recomputes the whole window. m must outlive it. Free it
 * with qkv_gpt_lm_free. NULL with a message. */
qkv_lm *qkv_gpt_lm_new(const qkv_gpt *m, bool use_cache);

/* Free a qkv_lm made by qkv_gpt_lm_new and its cache (NULL is fine); any
 * other qkv_lm is refused with a message and left alone. */
void qkv_gpt_lm_free(qkv_lm *lm);

/* Continue prompt (n_prompt >= 1 ids) with n_new tokens, calling emit for
 * each. With use_cache, keys and values of past tokens are kept (each new
 * token costs O(T)); without, every step recomputes the whole window
 * (O(T²)); both give the same tokens. When the context is full the window
 * slides by block_size/2: the cache is refilled from the newest half. Runs in
 * no-grad mode. This is qkv_generate with qkv_gpt_lm_new(m, use_cache). 0 or -1. */
int qkv_gpt_generate(const qkv_gpt *m, const int32_t *prompt, int n_prompt, int n_new,
                     const qkv_sample_opts *opts, qkv_rng *rng, bool use_cache, qkv_emit_fn emit,
                     void *ud);

/* ---- training (a qkv_training run) and loading ---- */

/* Fill out with m's side of a qkv_training run on corpus, whose vocabulary
 * size must be m's (kind "gpt"): the loss of the next batch of the run's
 * batch_size windows of block_size characters, evaluations 0 and 1 (the mean
 * loss of eval_iters batches of the train and the val split, QKV_SPLIT_TRAIN
 * and QKV_SPLIT_VAL), m's config blob and corpus's vocabulary for the
 * checkpoint, the three batch streams (seeded from the run's seed + 1..3).
 * The run it is given to owns the batches; m and corpus must outlive it.
 * 0, or -1 with a message. */
int qkv_gpt_training_model(qkv_gpt *m, const qkv_corpus *corpus, qkv_training_model *out);

/* The mean loss of m over iters batches from s (no-grad, no dropout), using
 * arena for the activations and x, y (B·T each) for the batch; NAN with a
 * message on failure. */
double qkv_gpt_mean_loss(const qkv_gpt *m, qkv_batcher *s, int iters, qkv_arena *arena,
                         int32_t *x, int32_t *y);

/* The model saved at path (by a qkv_training run, for sampling, evaluation
 * or resuming), and its vocabulary into vocab. NULL with a message on failure. */
qkv_gpt *qkv_gpt_load(const char *path, qkv_tokenizer *vocab);

/* As qkv_gpt_training_model, for a model of BPE tokens: corpus is
 * qkv_bpe_corpus's (its ids bpe's), bpe has m's vocab_size tokens, and the
 * checkpoint carries bpe after m's config blob (a character checkpoint is
 * unchanged). bpe must outlive the call only. 0, or -1 with a message. */
int qkv_gpt_training_model_bpe(qkv_gpt *m, const qkv_corpus *corpus, const qkv_bpe *bpe,
                               qkv_training_model *out);

/* As qkv_gpt_load, and the model's BPE tokenizer into *bpe (free it with
 * qkv_bpe_free), or NULL there for a character model. NULL with a message. */
qkv_gpt *qkv_gpt_load_bpe(const char *path, qkv_tokenizer *vocab, qkv_bpe **bpe);

/* The exact evaluation of a loaded model in one call: qkv_eval_split over
 * m's windows of block_size tokens of split of c (the whole split, or its
 * first max_tokens when max_tokens > 0), arena as there (NULL: its own):
 *
 *     qkv_gpt *m = qkv_gpt_load("shakespeare.ckpt", &vocab);
 *     qkv_corpus *c = qkv_corpus_load("input.txt", &vocab);
 *     qkv_split_loss val;
 *     if (qkv_gpt_eval_split(m, c, QKV_SPLIT_VAL, 0, NULL, &val) == 0)
 *         printf("val loss %.4f +- %.4f\n", val.loss, val.se);
 *
 * 0, or -1 with a message. */
int qkv_gpt_eval_split(const qkv_gpt *m, const qkv_corpus *c, qkv_split split,
                       int64_t max_tokens, qkv_arena *arena, qkv_split_loss *out);

/* GPT-2's weights from the .safetensors file at path, in Hugging Face's
 * layout (wte, wpe, h.N.ln_1, h.N.attn.c_attn, h.N.attn.c_proj, h.N.ln_2,
 * h.N.mlp.c_fc, h.N.mlp.c_proj, ln_f; "transformer." before them or not;
 * Conv1D weights (in, out), transposed here; the attn.bias masks ignored; an
 * lm_head.weight equal to wte or absent: tied). The config comes from the
 * shapes: vocab_size and n_embd from wte, block_size from wpe, n_layer from
 * the blocks; n_head is n_head when > 0, else the file's metadata "n_head",
 * else n_embd / 64 (GPT-2's head size). Every option off (GPT-2's layout),
 * dropout 0. A tensor of the wrong shape or one that is no part of the model
 * is an error. NULL with a message naming the file and the tensor. */
qkv_gpt *qkv_gpt_load_safetensors(const char *path, int n_head);

QKV_END_DECLS
#endif
