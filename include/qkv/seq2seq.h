/* qkv/seq2seq.h — an encoder-decoder transformer with cross-attention, its
 * training on a generated task (dates), greedy decoding and its cross-attention
 * (`qkv attn --html` draws it).
 *
 * The encoder reads the whole input at once (token + position embeddings,
 * n_layer unmasked blocks, a final LayerNorm); the decoder writes the output
 * one character at a time (token + position embeddings, n_layer blocks of
 * causal self-attention, cross-attention over the encoder's output and an
 * MLP, a final LayerNorm, an lm head). The lm head is tied to the decoder's
 * token embedding (logits = x · dec.wteᵀ), as in the GPT: one table fewer,
 * and the task learns as well with it.
 *
 * Every model option (qkv/options.h) applies as in the GPT: no_bias to every
 * Linear and LayerNorm (the cross-attention's too); rope positions to the
 * encoder's and the decoder's self-attention, which then need no wpe tables
 * (the cross-attention's queries and keys come from two sequences whose
 * positions do not compare, so they are not rotated); norm to every norm
 * (both ln_f); activation to every MLP; qk_norm to every self-attention; untied gives
 * the decoder an lm head "dec.lm_head.weight" (V, C) of its own.
 *
 * Token ids: 0 PAD, 1 BOS, 2 EOS, then one id per character of the model's
 * alphabet. In a batch, inputs are padded with PAD up to the longest one and
 * a mask keeps every query away from the padding, in the encoder and in the
 * cross-attention; the decoder reads BOS + target and predicts target + EOS.
 *
 *     const qkv_seq2seq_task *task = qkv_seq2seq_task_find("dates");
 *     qkv_seq2seq_config mc = qkv_seq2seq_config_for(task, 2, 4, 64, 0);
 *     qkv_train_config tc = qkv_train_defaults();
 *     tc.iters = 1500, tc.batch_size = 64, tc.lr = 3e-3, tc.eval_iters = 4;
 *     qkv_tokenizer chars;                                    // the task's alphabet
 *     qkv_seq2seq *m = qkv_seq2seq_task_chars(task, &chars) == 0
 *                          ? qkv_seq2seq_new(&mc, &chars, tc.seed) : NULL;
 *     qkv_training_model tm;                                  // a qkv_training run (qkv/training.h)
 *     qkv_training *run = m && qkv_seq2seq_training_model(m, task, &tm) == 0
 *                             ? qkv_training_new(&tm, &tc) : NULL;
 *     while (run && run->step < tc.iters)
 *         if (qkv_training_step(run, NULL, NULL) < 0) break;
 *     if (run)
 *         printf("held-out exact match %.3f\n", qkv_training_eval(run, 0));
 *     qkv_training_free(run);
 *     char out[16];
 *     const char *in = "March 3rd, 1998";
 *     char *outs[1] = {out};
 *     if (m && qkv_seq2seq_translate(m, 1, &in, outs) == 0)
 *         puts(out);                                          // 1998-03-03
 *     qkv_seq2seq_free(m);
 *
 * Configs: a field left 0 takes the default its comment names (see qkv/base.h);
 * the sizes of a qkv_seq2seq_config are required.
 */
#ifndef QKV_SEQ2SEQ_H
#define QKV_SEQ2SEQ_H

#include "qkv/data.h"
#include "qkv/generate.h"
#include "qkv/nn.h"
#include "qkv/training.h"

QKV_BEGIN_DECLS

/* The special tokens; the alphabet's characters follow them. */
enum {
    QKV_SEQ2SEQ_PAD = 0,      /* fills an input or decoder input after its end */
    QKV_SEQ2SEQ_BOS = 1,      /* the decoder's first input: "begin writing" */
    QKV_SEQ2SEQ_EOS = 2,      /* the decoder's last target: "the output ends here" */
    QKV_SEQ2SEQ_N_SPECIAL = 3 /* id of the alphabet's first character */
};

/* Target value of padded decoder positions: the loss skips them. */
#define QKV_SEQ2SEQ_IGNORE (-1)

typedef struct qkv_seq2seq_config {
    int max_src;    /* longest input in characters (encoder positions) */
    int max_tgt;    /* decoder positions: the longest output plus one (EOS) */
    int n_layer;    /* encoder blocks, and as many decoder blocks */
    int n_head;     /* attention heads; n_embd must be a multiple */
    int n_embd;     /* C: width of both residual streams */
    double dropout; /* dropout probability in training; 0 = none; [0, QKV_DROPOUT_MAX] */
    qkv_model_options opts; /* the options (qkv/options.h, above); all false, the zero value, is
                               the original model (and every checkpoint written before them) */
} qkv_seq2seq_config;

/* Bytes of a serialised config (the checkpoint's config blob). The last
 * field is a word of flags, the options' values as in qkv/gpt.h's (0 in the
 * checkpoints written before the options). */
#define QKV_SEQ2SEQ_CONFIG_BYTES 32

/* Write cfg as QKV_SEQ2SEQ_CONFIG_BYTES portable bytes (little-endian fields). */
void qkv_seq2seq_config_pack(const qkv_seq2seq_config *cfg,
                             uint8_t out[QKV_SEQ2SEQ_CONFIG_BYTES]);

/* Read a config written by qkv_seq2seq_config_pack (the first
 * QKV_SEQ2SEQ_CONFIG_BYTES of blob; a training run's checkpoint carries its
 * settings after them) and check it; 0, or -1 naming the first bad field
 * (or a short blob). */
int qkv_seq2seq_config_unpack(qkv_seq2seq_config *cfg, const void *blob, size_t len);

/* 0 when every size is usable; otherwise -1 naming the bad field. */
int qkv_seq2seq_config_check(const qkv_seq2seq_config *cfg);

typedef struct qkv_seq2seq {
    qkv_seq2seq_config cfg;  /* the sizes */
    qkv_tokenizer chars;     /* the alphabet: character c is token N_SPECIAL + chars.id[c] */
    int vocab_size;          /* V: N_SPECIAL + chars.size */
    qkv_params *params;      /* every parameter, by name, in one flat buffer */
    qkv_embed enc_wte;       /* encoder token embedding (V, C) */
    qkv_embed enc_wpe;       /* encoder position embedding (max_src, C); unused with RoPE */
    qkv_block *enc;          /* n_layer unmasked blocks */
    qkv_ln enc_ln_f;         /* LayerNorm of the encoder's output (the memory) */
    qkv_embed dec_wte;       /* decoder token embedding (V, C); also the lm head unless untied */
    qkv_embed dec_wpe;       /* decoder position embedding (max_tgt, C); unused with RoPE */
    qkv_cross_block *dec;    /* n_layer decoder blocks with cross-attention */
    qkv_ln dec_ln_f;         /* LayerNorm before the lm head */
    qkv_linear lm_head;      /* with cfg.opts.untied: C -> V, no bias; else unused */
    qkv_block_config block;  /* the blocks' shared sizes */
} qkv_seq2seq;

/* A model over the alphabet chars (1..253 characters) with fresh parameters
 * drawn from seed; NULL with a message on a bad config or no memory. */
qkv_seq2seq *qkv_seq2seq_new(const qkv_seq2seq_config *cfg, const qkv_tokenizer *chars,
                             uint64_t seed);

/* Free the model and its parameters (NULL is fine). */
void qkv_seq2seq_free(qkv_seq2seq *m);

/* Ablation: zero the output projection of every cross-attention, so each one
 * adds exactly 0 to the decoder's residual stream and the decoder no longer
 * sees the input at all. Irreversible on this model. */
void qkv_seq2seq_zero_cross(qkv_seq2seq *m);

/* ---- batches ---- */

/* B padded (input, target) pairs as token ids, laid out for the model. */
typedef struct qkv_seq2seq_batch {
    int cap;            /* pairs the buffers hold */
    int B;              /* pairs in use */
    int Ts;             /* encoder length: the longest input of the batch */
    int Tt;             /* decoder length: the longest target of the batch + 1 */
    int32_t *src;       /* (B,Ts) input ids, PAD after each input's end */
    uint8_t *src_valid; /* (B,Ts) 1 = a real character, 0 = padding */
    int32_t *dec_in;    /* (B,Tt) BOS + target, PAD after */
    int32_t *dec_out;   /* (B,Tt) target + EOS, QKV_SEQ2SEQ_IGNORE after */
} qkv_seq2seq_batch;

/* Buffers for up to cap pairs of m's longest sizes; NULL on failure. */
qkv_seq2seq_batch *qkv_seq2seq_batch_new(const qkv_seq2seq *m, int cap);

/* Free a batch (NULL is fine). */
void qkv_seq2seq_batch_free(qkv_seq2seq_batch *b);

/* Fill b with n pairs: inputs[i] (NUL-terminated, 1..max_src characters)
 * and targets[i] (0..max_tgt-1 characters), or targets NULL for inputs only
 * (then Tt is 0 and dec_in, dec_out are not touched). -1 with a message
 * naming the string and the first character outside the alphabet, an empty
 * or too long string, or n outside [1, cap]. */
int qkv_seq2seq_batch_fill(const qkv_seq2seq *m, qkv_seq2seq_batch *b, int n,
                           const char *const *inputs, const char *const *targets);

/* ---- forward ---- */

/* The memory (B,Ts,C): the encoder's output for src (B,Ts) with padding
 * mask src_valid (B,Ts) (NULL = no padding). */
qkv_tensor *qkv_seq2seq_encode(const qkv_seq2seq *m, const qkv_ctx *ctx, const int32_t *src,
                               const uint8_t *src_valid, int B, int Ts);

/* Logits (B,Tt,V) of the decoder reading dec_in (B,Tt) over memory, whose
 * padding is masked by src_valid (B,Ts) or NULL. When cross_weights is not
 * NULL it holds n_layer slots and receives each layer's cross-attention
 * weights (B,H,Tt,Ts). */
qkv_tensor *qkv_seq2seq_decode(const qkv_seq2seq *m, const qkv_ctx *ctx, qkv_tensor *memory,
                               const uint8_t *src_valid, const int32_t *dec_in, int B, int Tt,
                               qkv_tensor **cross_weights);

/* Teacher-forced mean cross-entropy of b's targets (padding skipped), shape (1). */
qkv_tensor *qkv_seq2seq_loss(const qkv_seq2seq *m, const qkv_ctx *ctx, const qkv_seq2seq_batch *b);

/* ---- generation ---- */

/* The decoder as a language model for qkv_generate_batch (qkv/generate.h),
 * for the B padded inputs src (B,Ts) (padding masked by src_valid (B,Ts), or
 * NULL): the inputs are encoded once here, and with use_cache the memory's
 * keys and values of every layer too, and the decoder's own keys and values
 * are kept across steps. Prompt each row with QKV_SEQ2SEQ_BOS and stop at
 * QKV_SEQ2SEQ_EOS; the lm reads m and copies src_valid. Free with
 * qkv_seq2seq_lm_free. NULL with a message. */
qkv_lm *qkv_seq2seq_lm_new(const qkv_seq2seq *m, const int32_t *src, const uint8_t *src_valid,
                           int B, int Ts, bool use_cache);

/* Free a qkv_lm made by qkv_seq2seq_lm_new (NULL is fine); any other lm is
 * refused with a message and left alone. */
void qkv_seq2seq_lm_free(qkv_lm *lm);

/* Write out (B, max_tgt): qkv_generate_batch, greedy, over qkv_seq2seq_lm_new: for each of the B padded inputs src (B,Ts), the
 * most likely token at every step, each fed back as the next input, until
 * every row has produced EOS or max_tgt tokens. With use_cache the
 * decoder's self-attention keys and values are kept across steps and the
 * cross-attention's are computed once; without, every step reruns the whole
 * decoder; both give the same tokens. Runs in no-grad mode. 0 or -1. */
int qkv_seq2seq_greedy(const qkv_seq2seq *m, const int32_t *src, const uint8_t *src_valid, int B,
                       int Ts, bool use_cache, int32_t *out);

/* The characters of a decoded row (max_tgt tokens) up to its first special
 * token (EOS), NUL-terminated, into text (max_tgt + 1 bytes). */
void qkv_seq2seq_detokenize(const qkv_seq2seq *m, const int32_t *row, char *text);

/* Greedy, cached decoding of n strings: outputs[i] (max_tgt + 1 bytes each)
 * receives the model's answer to inputs[i]. -1 with a message naming a bad
 * input (a character outside the alphabet, empty, too long). */
int qkv_seq2seq_translate(const qkv_seq2seq *m, int n, const char *const *inputs,
                          char *const *outputs);

/* ---- checkpoints (kind "seq2seq": config blob, the alphabet as vocabulary) ---- */

/* Save m's parameters and the training step to path, atomically (no
 * optimizer state: for sampling and evaluation, not for resuming). 0 or -1. */
int qkv_seq2seq_save(const qkv_seq2seq *m, const char *path, int64_t step);

/* The model saved at path (by qkv_seq2seq_save or a qkv_training run, which
 * it then resumes with qkv_seq2seq_training_model and qkv_training_resume);
 * NULL with a message on failure. */
qkv_seq2seq *qkv_seq2seq_load(const char *path);

/* ---- tasks: generators of (input, output) pairs ---- */

/* Draw one pair from rng, from the test split (test) or the training split;
 * returns >= 0, or -1 with a message. qkv_dates_sample_split is one. */
typedef int (*qkv_pair_fn)(qkv_rng *rng, bool test, char *input, size_t in_len, char *output,
                           size_t out_len);

/* A task: every field is required (qkv_seq2seq_training_model and the
 * accuracy check refuse a task missing one, naming it). */
typedef struct qkv_seq2seq_task {
    const char *name;              /* "dates" */
    const char *(*alphabet)(void); /* every character of inputs and outputs, NUL-terminated
                                      (never NULL) */
    int max_input;                 /* longest input, in characters (1..255) */
    int max_output;                /* longest output, in characters (1..255) */
    qkv_pair_fn sample;            /* the generator */
} qkv_seq2seq_task;

/* The task called name ("dates"), or NULL with a message listing the tasks. */
const qkv_seq2seq_task *qkv_seq2seq_task_find(const char *name);

/* A config sized for task's strings with the given depth, heads and width. */
qkv_seq2seq_config qkv_seq2seq_config_for(const qkv_seq2seq_task *task, int n_layer, int n_head,
                                          int n_embd, double dropout);

/* The characters of task's alphabet, into chars: a model's for the task
 * (qkv_seq2seq_new). 0, or -1 naming what the task lacks. */
int qkv_seq2seq_task_chars(const qkv_seq2seq_task *task, qkv_tokenizer *chars);

/* Called by qkv_seq2seq_accuracy for each wrong answer. */
typedef void (*qkv_seq2seq_miss_fn)(const char *input, const char *expected, const char *got,
                                    void *ud);

/* Exact-match accuracy (0..1) of greedy decoding on n pairs drawn from
 * task's test split with a generator seeded with seed; on_miss (or NULL)
 * sees every wrong answer. NAN with a message on failure. */
double qkv_seq2seq_accuracy(const qkv_seq2seq *m, const qkv_seq2seq_task *task, int n,
                            uint64_t seed, qkv_seq2seq_miss_fn on_miss, void *ud);

/* ---- training (a qkv_training run) ---- */

/* Fill out with m's side of a qkv_training run on task, whose alphabet must
 * be m's (kind "seq2seq"): the teacher-forced loss of the run's batch_size
 * fresh pairs of the task's training split per step (drawn from the run's
 * seed + 1), evaluation 0 (exact-match accuracy on eval_iters batches of
 * batch_size held-out pairs, the same pairs at every call, drawn from seed
 * + 2), m's config blob and alphabet for the checkpoint (which
 * qkv_seq2seq_load reads too). The run it is given to owns the batch; m and
 * task must outlive it. 0, or -1 with a message. */
int qkv_seq2seq_training_model(qkv_seq2seq *m, const qkv_seq2seq_task *task,
                               qkv_training_model *out);

/* ---- attention pictures ---- */

/* Greedy-decode input with m into output (max_tgt + 1 bytes) and give the
 * cross-attention weights of that layer during the decoding, (1,H,Tt,Ts):
 * Ts = strlen(input) columns, one per input character; row t is the
 * decoder position that produced output[t], and the last row the one that
 * produced EOS (Tt = strlen(output) + 1, or max_tgt if no EOS came). The
 * weights come from ctx's arena. NULL with a message. */
qkv_tensor *qkv_seq2seq_cross_weights(const qkv_seq2seq *m, const qkv_ctx *ctx, const char *input,
                                      int layer, char *output);

/* Greedy-decode the padded input src (1,Ts) (padding masked by src_valid, or
 * NULL) into output (max_tgt + 1 bytes), then replay that decoding
 * teacher-forced with ctx, whose record (ctx->record, if any) then holds every
 * attention call of the replay in order: the encoder's layers, then each
 * decoder layer's self- and cross-attention; row t of a decoder call is the
 * position that produced token t. Memory comes from ctx->arena. The number of
 * decoder positions Tt (>= 1), or -1 with a message. */
int qkv_seq2seq_replay(const qkv_seq2seq *m, const qkv_ctx *ctx, const int32_t *src,
                       const uint8_t *src_valid, int Ts, char *output);

QKV_END_DECLS
#endif
