/* The recipe of a budgeted run (see recipe.h).
 *
 * What was measured (docs/speedrun.md has every run; a 2-core AMD EPYC
 * Zen 4, 4-5 December 2026; tiny Shakespeare to tune, the King James Bible
 * never tuned on):
 * - Tokens: a BPE of 1,024 against one token a byte, fast's model, 300 s:
 *   0.23-0.30 bits per byte better on both corpora (BPE_VOCAB).
 * - Dropout: fast's model on BPE tokens for the 6,500 steps of a quiet
 *   300 s at 2 threads (12 epochs of Shakespeare): val 2.05-2.07 bits per
 *   byte without (3 seeds), 1.951 at 0.1, 1.975 at 0.2 (DROPOUT_PER_EPOCH).
 * - Size: at the FLOPs of 1,800 s on one core, 4 x 192 with dropout 0.2
 *   (10,500 steps) read 1.965 and 6 x 256 (4,200 steps) 1.973, no better
 *   than fast's 4 x 128 at a third of the FLOPs: on a text this short a
 *   larger model only overfits sooner, so size is capped by the text's
 *   tokens (PARAMS_PER_TOKEN) as well as by the budget (TOKENS_PER_PARAM).
 * - Optimizer: AdamW. Muon gains 0.07-0.08 per step (2,000 steps, both
 *   corpora) but its step costs 1.5x at this size, and a Muon recipe lost
 *   to AdamW's fast by 0.074 at 300 s; it stays a flag (--optim muon). */
#include "recipe.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>

#include "runtime.h"

/* The model sizes the rule climbs, smallest first: layers and width, heads
 * of 32 channels each. The first is the `fast` preset's. */
static const struct { int layers, embd; } SIZES[] = {
    {4, 128}, {4, 192}, {6, 192}, {6, 256}, {8, 320}, {8, 384},
};
enum { N_SIZES = sizeof SIZES / sizeof SIZES[0], HEAD_DIM = 32 };

/* One step's sequences and their context: fast's. */
enum { BATCH = 6, BLOCK = 128 };

/* The least tokens per hidden-matrix parameter a size must read in the
 * budget, and the most hidden-matrix parameters per token of the training
 * split it may have (fast's 0.79M on Shakespeare's 411k BPE tokens is 1.9;
 * 4 x 192's 4.3 lost): the largest size within both is the rule's, else
 * the smallest. */
static const double TOKENS_PER_PARAM = 4.0, PARAMS_PER_TOKEN = 2.0;

/* Dropout for the epochs read: none in the first, then this much more per
 * epoch beyond it (0.11 at Shakespeare's 12 epochs in 300 s), up to
 * DROPOUT_MAX. */
static const double DROPOUT_PER_EPOCH = 0.01, DROPOUT_MAX = 0.2;

/* The peak learning rate at width 128 (fast's), and how it falls with width: ∝ 1/√C. */
static const double LR_128 = 2e-3;

/* The part of a budget that trains: the rest goes to the evaluations
 * (train_loop.c's 5%), the exact final one, the saves and this measurement. */
static const double TRAIN_SHARE = 0.9;

/* Steps of the measurement: one to size the buffers, then the timed ones,
 * of which the fastest counts: what the machine can do, not what a
 * neighbour's burst left of it in that second (on the shared machine of
 * docs/speedrun.md a median of four read 23 GFLOP/s where a quiet one reads 115). */
enum { MEASURE_STEPS = 6 };

/* The most of a budget the measurement may take: it stops after the step
 * that passes it (at least one timed step), so a few-second budget is not
 * spent measuring (on a busy machine a first step can take a second). */
static const double MEASURE_SHARE = 0.02;

/* The recipe's tokens: a byte-level BPE of BPE_VOCAB learned from the
 * training split, which beat one token a byte by 0.23-0.30 bits per byte
 * at 300 s on both corpora (docs/speedrun.md, "Tokens, not characters");
 * only on a text of at least BPE_MIN_BYTES, 256 bytes for each token of
 * the vocabulary, so that its rarer tokens are still seen often enough to
 * learn (the least measured: 0.8 MB, qkv's own sources). */
enum { BPE_VOCAB = 1024 };
static const double BPE_MIN_BYTES = 256.0 * BPE_VOCAB;

int recipe_tokenizer(double text_bytes)
{
    return text_bytes >= BPE_MIN_BYTES ? BPE_VOCAB : 0;
}

double recipe_flops_per_token(int layers, int embd, int block, int vocab)
{
    double c = embd;
    return 6 * (12 * layers * c * c + (double)vocab * c) + 6.0 * layers * block * c;
}

/* The peak learning rate for a model of width embd (its end is a tenth of it). */
static double recipe_lr(int embd)
{
    return LR_128 * sqrt(128.0 / embd);
}

void recipe_choose(double budget, double flops, double train_tokens, int vocab, recipe *r)
{
    double seconds = TRAIN_SHARE * budget;
    int pick = 0;
    for (int i = 1; i < N_SIZES; i++) {
        double c = SIZES[i].embd, n = 12 * SIZES[i].layers * c * c;
        double tokens = seconds * flops / recipe_flops_per_token(SIZES[i].layers, SIZES[i].embd,
                                                                 BLOCK, vocab);
        if (tokens >= TOKENS_PER_PARAM * n && n <= PARAMS_PER_TOKEN * train_tokens)
            pick = i;
    }
    int L = SIZES[pick].layers, C = SIZES[pick].embd;
    double tokens = seconds * flops / recipe_flops_per_token(L, C, BLOCK, vocab);
    double epochs = train_tokens > 0 ? tokens / train_tokens : 0;
    double lr = recipe_lr(C);
    double dropout = fmin(DROPOUT_MAX, fmax(0, DROPOUT_PER_EPOCH * (epochs - 1)));
    *r = (recipe){.layers = L, .heads = C / HEAD_DIM, .embd = C, .block = BLOCK, .batch = BATCH,
                  .vocab = vocab,
                  .dropout = round(100 * dropout) / 100, /* to a hundredth, for the plan line */
                  .lr = lr, .min_lr = lr / 10, .flops = flops,
                  .seconds = seconds, .tokens = tokens, .params = 12.0 * L * C * C,
                  .epochs = epochs};
}

double recipe_measure(const qkv_corpus *corpus, const qkv_bpe *bpe,
                      const qkv_model_options *opts, uint64_t seed, double budget)
{
    const int vocab = bpe ? qkv_bpe_size(bpe) : corpus->tok.size;
    const double end = cli_now() + MEASURE_SHARE * budget;
    const int L = SIZES[0].layers, C = SIZES[0].embd;
    int T = BLOCK; /* shorter on a text too short for the recipe's context */
    while (T > 8 && (size_t)T * 2 > corpus->n_train)
        T /= 2;
    qkv_gpt_config mc = {.vocab_size = vocab, .block_size = T, .n_layer = L,
                         .n_head = C / HEAD_DIM, .n_embd = C, .opts = *opts};
    qkv_train_config tc = {.iters = MEASURE_STEPS, .batch_size = BATCH, .seed = seed};
    qkv_gpt *m = qkv_gpt_new(&mc, seed);
    qkv_training_model tm;
    qkv_training *run = m && (bpe ? qkv_gpt_training_model_bpe(m, corpus, bpe, &tm)
                                  : qkv_gpt_training_model(m, corpus, &tm)) == 0
                            ? qkv_training_new(&tm, &tc) : NULL;
    double best = INFINITY, speed = NAN;
    int n = 0;
    for (bool ok = run != NULL; ok && n < MEASURE_STEPS && (n < 2 || cli_now() < end); n++) {
        double t0 = cli_now();
        if (!(ok = qkv_training_step(run, NULL, NULL) == 0))
            break;
        if (n > 0)
            best = fmin(best, cli_now() - t0);
    }
    if (isfinite(best))
        speed = BATCH * T * recipe_flops_per_token(L, C, T, vocab) / best;
    qkv_training_free(run);
    qkv_gpt_free(m);
    return speed;
}

void recipe_words(const recipe *r, double budget, char *text, size_t len)
{
    snprintf(text, len, "recipe for %g s at %.1f GFLOP/s: %d layers x %d (%.2fM), vocabulary %d, "
             "%.1fM tokens (%.1f per parameter), %.1f epochs -> dropout %g, lr %g", budget,
             r->flops / 1e9, r->layers, r->embd, r->params / 1e6, r->vocab, r->tokens / 1e6,
             r->tokens / r->params, r->epochs, r->dropout, r->lr);
}
