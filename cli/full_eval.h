/* The exact evaluation: a model's mean loss over a whole split of its text
 * (every window of the split, not a sample of batches), with its standard
 * error. A budgeted `qkv train` ends with it, `qkv eval --full` prints it. */
#ifndef QKV_CLI_FULL_EVAL_H
#define QKV_CLI_FULL_EVAL_H

#include <stdint.h>

#include "qkv/qkv.h"

/* The most tokens an exact evaluation reads: the whole split of a text up
 * to about 5 MB, the first 500k tokens of a larger one. */
#define FULL_EVAL_MAX_TOKENS 500000

/* What one exact evaluation found. */
typedef struct full_loss {
    double loss;     /* the mean of the windows' mean losses */
    double se;       /* its standard error: the windows' sample standard deviation / √windows
                        (NAN for one window) */
    int64_t windows; /* windows read */
    int64_t tokens;  /* tokens predicted: windows × block_size */
} full_loss;

/* Windows an exact evaluation of split reads with m's block size T: the
 * split cut from its start into windows of T inputs (the targets one token
 * further), at most FULL_EVAL_MAX_TOKENS / T of them; 0 when the split has
 * fewer than T + 1 tokens. */
int64_t full_eval_windows(const qkv_gpt *m, const qkv_corpus *c, qkv_split split);

/* The mean loss of m over the first n windows (at most
 * full_eval_windows's) of split, one window at a time (no gradients, no
 * dropout), activations in arena. 0, or -1 with a message (no window, a
 * failed or NaN loss). */
int full_eval(const qkv_gpt *m, const qkv_corpus *c, qkv_split split, int64_t n, qkv_arena *arena,
              full_loss *out);

/* Seconds the whole exact evaluation of split will take, measured now on
 * a few of its windows (after one unmeasured, which sizes the arena);
 * NAN with a message when they fail. */
double full_eval_cost(const qkv_gpt *m, const qkv_corpus *c, qkv_split split, qkv_arena *arena);

#endif
