/* The recipe of a budgeted `qkv train --time T`: the model's size, its
 * batch, context, dropout, learning rate and optimizer chosen from the
 * budget, the machine's measured speed and the corpus's size, so that a
 * longer budget buys a bigger (or better-regularised) model rather than
 * more epochs of the same one. The rule and the measurements it comes
 * from are in recipe.c and docs/speedrun.md. */
#ifndef QKV_CLI_RECIPE_H
#define QKV_CLI_RECIPE_H

#include <stddef.h>

#include "qkv/qkv.h"

/* What the rule chose, and what it chose it from. */
typedef struct recipe {
    int layers, heads, embd, block, batch; /* the model and one step's sequences */
    int vocab;                             /* its tokens (the tokenizer's size) */
    double dropout;                        /* from the epochs the run will read */
    double lr, min_lr;                     /* peak and end of the schedule */
    double flops;       /* the machine's training speed, FLOP/s (measured) */
    double seconds;     /* the part of the budget that trains */
    double tokens;      /* tokens the run will read at that speed */
    double params;      /* the hidden matrices' parameters (12·L·C²) */
    double epochs;      /* tokens / the corpus's training split */
} recipe;

/* The tokenizer the recipe trains on a text of text_bytes bytes: the size of
 * a BPE vocabulary (--tokenizer bpe:N), or 0 for one token a byte. */
int recipe_tokenizer(double text_bytes);

/* Training FLOPs per token of a GPT of layers × embd, context block and
 * vocabulary vocab: 6 per matrix parameter (forward and backward) plus the
 * causal attention's scores and mixing (6·L·T·C). */
double recipe_flops_per_token(int layers, int embd, int block, int vocab);

/* The rule: the recipe for a run of budget seconds on a machine that trains
 * at flops FLOP/s, on a corpus whose training split holds train_tokens
 * tokens of a vocab-sized vocabulary. A longer budget (or a faster machine)
 * never gives a smaller model; a short text caps the size (a larger model
 * would only overfit it sooner). Fills r; nothing can fail. */
void recipe_choose(double budget, double flops, double train_tokens, int vocab, recipe *r);

/* This machine's training speed in FLOP/s, measured on a few steps of a
 * small GPT with options opts on corpus (its ids bpe's tokens, or characters
 * when bpe is NULL), at the threads in use, the recipe's
 * steps: one unmeasured (it sizes the buffers), then the fastest of the next
 * few, as many as fit in a small part of budget (seconds) but at least one.
 * NAN with a message when the model cannot be made or a step fails. */
double recipe_measure(const qkv_corpus *corpus, const qkv_bpe *bpe,
                      const qkv_model_options *opts, uint64_t seed, double budget);

/* The choice in words for the plan line, into text (len bytes): "recipe for
 * 300 s at 21.3 GFLOP/s: 6 layers x 192 (2.65M), 1024 tokens' vocabulary, 4.1M
 * tokens, 4.1 epochs -> dropout 0.1". */
void recipe_words(const recipe *r, double budget, char *text, size_t len);

#endif
