/* The training loop's side of data parallelism (see dist.h): N ranks train
 * one model, each computing its slice of every global batch.
 *
 * Every rank takes the same decisions at the same steps, so that no rank
 * ever waits in a collective for one that has gone: each step's gradient
 * sum is preceded by a vote (did a rank fail? was one asked to stop?),
 * saving is rank 0's and followed by a vote on its result. With one rank
 * (the default build) every function here is a plain pass-through. */
#ifndef QKV_CLI_TRAIN_RANKS_H
#define QKV_CLI_TRAIN_RANKS_H

#include <stdbool.h>

#include "qkv/training.h"

/* Split run's global batch over the ranks and sum gradients through its grad
 * hook. -1 with a message when the batch does not divide evenly. */
int ranks_join(qkv_training *run);

/* Before a step: forget the last step's votes. */
void ranks_step_begin(void);

/* After a failed step: a rank that failed before the step's vote (its
 * forward or backward) casts it now, so the others stop waiting. */
void ranks_step_failed(void);

/* Whether the run stops after this step: this process's own Ctrl-C or
 * SIGTERM with one rank; with several, the step's vote (any rank's). */
bool ranks_stop(bool local);

/* True on every rank when failed is true on any (one vote; every rank calls it). */
bool ranks_any(bool failed);

/* Every rank's value of a per-rank mean, averaged (each rank had an equal share). */
void ranks_mean(double *v, int n);

/* The largest of every rank's iters: a time budget's run length, which each
 * rank estimates from its own clock, agreed on. */
int64_t ranks_longest(int64_t iters);

/* Whether this process writes the run's files (rank 0, or a rank that took over). */
bool ranks_writer(void);

/* Whether this rank is cut off from the others (dist_lost): a rank died, or
 * a signal stopped the ranks while one waited for the rest. Each survivor
 * then holds the weights of the last completed step, and decides alone. */
bool ranks_lost(void);

/* A rank cut off from the others that is not rank 0 claims the run's files
 * (OUT and its log, as `qkv CMD` would) when no live rank 0 holds them: a
 * rank 0 killed with -9 left its lock free. Whether this rank now writes. */
bool ranks_take_over(const char *cmd, const char *out);

#endif
