/* qkv/generate.h — drawing tokens from logits, and generating text with any
 * language model: the built-in GPT or one you build from qkv's nn modules.
 *
 * Your model supplies one function, the logits of the next token; the loop
 * here does the rest (the window, its positions, sampling, decoding):
 *
 *     typedef struct bigram {          // the smallest model: the next token's logits
 *         qkv_params *params;            // are the row of a (V, V) table for this token
 *         qkv_embed table;
 *     } bigram;
 *
 *     // logits (B, n, V) for the B rows of n tokens ids at positions pos, pos+1, ...
 *     static qkv_tensor *bigram_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B,
 *                                      int n, int pos)
 *     {
 *         bigram *m = model;
 *         (void)pos;                     // a bigram model has no use for positions
 *         return qkv_embed_forward(&m->table, ctx, ids, QKV_SHAPE(B, n));
 *     }
 *     static int print(const char *text, size_t len, void *ud)
 *     {
 *         fwrite(text, 1, len, ud);
 *         return 0;                      // non-zero stops the generation
 *     }
 *
 *     qkv_tokenizer tok;
 *     qkv_tokenizer_build(&tok, "ROMEO: JULIET", 13);
 *     bigram mine = {.params = qkv_params_new()};
 *     qkv_embed_init(&mine.table, mine.params, "table", tok.size, tok.size, 1);
 *     qkv_rng rng;
 *     qkv_rng_seed(&rng, 1337);
 *     qkv_params_alloc(mine.params, &rng);   // untrained: it writes noise
 *     qkv_lm lm = {.model = &mine, .logits = bigram_logits, .vocab_size = tok.size, .context = 64};
 *     qkv_sample_opts opts = {.temperature = 0.8, .top_k = 5};   // top_p 0: the default, 1
 *     if (qkv_generate_text(&lm, &tok, "ROMEO:", 200, &opts, &rng, print, stdout) < 0)
 *         fprintf(stderr, "qkv: %s\n", qkv_last_error());
 *     qkv_params_free(&mine.params);
 *
 * A model with a key/value cache sets .cached: it is then given only the
 * tokens it has not seen yet, and pos says where they go (see qkv_lm).
 *
 * An encoder-decoder generates the same way: encode the input once, keep
 * the memory's keys and values in the model (qkv_cross_attn_memory), and let
 * logits run the decoder over them. qkv_generate_batch decodes B inputs at
 * once and ends each row at its stop token (an end-of-sequence token);
 * qkv_seq2seq_lm_new (qkv/seq2seq.h) is such a model for the built-in
 * encoder-decoder.
 *
 * Configs: a field left 0 takes the default its comment names (see qkv/base.h).
 */
#ifndef QKV_GENERATE_H
#define QKV_GENERATE_H

#include "qkv/data.h"
#include "qkv/nn.h"

QKV_BEGIN_DECLS

/* ---- one token from logits ---- */

/* How a token is drawn. Zero-initialised it is greedy decoding. */
typedef struct qkv_sample_opts {
    double temperature; /* logits are divided by it; 0 = always the most likely token */
    int top_k;          /* keep only the k most likely tokens; 0 = all */
    double top_p;       /* keep the smallest set of tokens whose probability reaches p; 0 = 1 = all */
} qkv_sample_opts;

/* 0 when the options are usable (temperature >= 0, top_k >= 0, 0 <= top_p <= 1), else -1. */
int qkv_sample_opts_check(const qkv_sample_opts *o);

/* Draw a token from logits (V values) under opts: one uniform draw from rng
 * (none when greedy, and then rng may be NULL). scratch holds 2·V values.
 * -1 with a message on a NULL argument, bad options, V < 1, or logits that
 * are not finite. */
int32_t qkv_sample_token(const qkv_real *logits, int V, const qkv_sample_opts *opts, qkv_rng *rng,
                         qkv_real *scratch);

/* ---- generation with any model ---- */

/* The model's forward for generation: the logits after the B rows of n
 * (>= 1) tokens ids (B, n), which stand at positions pos .. pos+n-1 of each
 * row's window, built in ctx's arena (reset before every call; grad mode is
 * off). The tensor's values are B equal rows, and the last V values of a
 * row are that row's next-token logits, so (B,n,V), (B,1,V) and (B,V) all
 * do. B is 1 from qkv_generate. NULL with a message stops the generation.
 * A model without a cache (qkv_lm.cached false) always gets the whole window,
 * pos 0. A cached model gets each token once: the window's tokens it has
 * not seen, pos = how many it has; pos 0 means a new window, so forget
 * (reset) everything kept. */
typedef qkv_tensor *(*qkv_logits_fn)(void *model, const qkv_ctx *ctx, const int32_t *ids, int B,
                                     int n, int pos);

/* A language model as generation sees it. */
typedef struct qkv_lm {
    void *model;          /* given to logits as it is */
    qkv_logits_fn logits; /* the forward */
    int vocab_size;       /* V: token ids are 0..V-1 */
    int context;          /* the longest window the model reads (its block size), >= 1 */
    bool cached;          /* it keeps what it has seen (a key/value cache): send only new tokens */
} qkv_lm;

/* Called with each generated token; return non-zero to stop early. */
typedef int (*qkv_emit_fn)(int32_t token, void *ud);

/* Continue prompt (n_prompt >= 1 ids) with n_new tokens drawn under opts,
 * calling emit (may be NULL) for each. The window holds the newest tokens,
 * at most lm->context; when it is full it slides: the newest context/2
 * stay, at positions from 0 again (a cached model starts over with them).
 * rng may be NULL when opts is greedy. Runs in no-grad mode. In bf16
 * (qkv/precision.h) each parameter a product reads is rounded to bf16 once
 * per call and held for its tokens: a callback that changes parameters'
 * values mid-call must do it through qkv (an optimizer step, a checkpoint's
 * load), not by writing their data. 0, or -1 with a message. */
int qkv_generate(const qkv_lm *lm, const int32_t *prompt, int n_prompt, int n_new,
                 const qkv_sample_opts *opts, qkv_rng *rng, qkv_emit_fn emit, void *ud);

/* qkv_generate for B (>= 1) rows at once, prompts (B, n_prompt): out (B,
 * n_new) receives each row's new tokens. A row that draws stop (when stop
 * >= 0) ends there, the rest of its row is stop, and the generation ends
 * when every row has. Each step draws from rng once for every row still
 * going, in row order, so a batch of one gives qkv_generate's tokens. 0, or
 * -1 with a message. */
int qkv_generate_batch(const qkv_lm *lm, int B, const int32_t *prompts, int n_prompt, int n_new,
                       const qkv_sample_opts *opts, qkv_rng *rng, int32_t stop, int32_t *out);

/* Called with each piece of generated text, as it is decoded (len bytes, no
 * terminator); return non-zero to stop early. */
typedef int (*qkv_text_fn)(const char *text, size_t len, void *ud);

/* qkv_generate from a text: prompt (a non-empty C string) is encoded with
 * tok, and each new token goes to out (may be NULL) as its text. The prompt
 * itself is not repeated. 0, or -1 with a message (e.g. a prompt character
 * outside tok's vocabulary, or tok->size != lm->vocab_size). */
int qkv_generate_text(const qkv_lm *lm, const qkv_tokenizer *tok, const char *prompt, int n_new,
                      const qkv_sample_opts *opts, qkv_rng *rng, qkv_text_fn out, void *ud);

QKV_END_DECLS
#endif
