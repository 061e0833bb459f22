/* What the suites of the two public stacks (tests/nn/test_stack.c,
 * test_s2s_stack.c) check alike: the loss against its formula, and
 * generation with a key/value cache against generation without. */
#ifndef QKV_TEST_STACK_CHECKS_H
#define QKV_TEST_STACK_CHECKS_H

#include "qkv/generate.h"

/* The mean cross-entropy of logits (rows, V) against targets (rows), a
 * target < 0 skipped: the loss written from its formula, in double. */
double plain_mean_cross_entropy(const qkv_real *logits, const int32_t *targets, int rows, int V);

/* Generate n_new tokens after prompts (B, n_prompt) with opts, each run from
 * an rng seeded 5: once with `without` (no cache), twice with `with` (its
 * cache; the second run reuses it, so it must start anew). Fails naming what
 * at the first token where the runs differ. */
void assert_cache_changes_no_token(qkv_lm *without, qkv_lm *with, int B, const int32_t *prompts,
                                   int n_prompt, int n_new, const qkv_sample_opts *opts,
                                   const char *what);

/* A cached forward of n new positions ids (B,n) of the model ud, after what
 * its cache holds: their logits (B,n,V). */
typedef qkv_tensor *(*cached_step_fn)(void *ud, const int32_t *ids, int B, int n);

/* Feed ids (B,T) to step 3 positions at once, then one at a time, and compare
 * each step's logits with those of full (B,T,V) at the same positions
 * (relative 1e-5); fails naming what, the row and the position. */
void assert_cached_steps_are_full(cached_step_fn step, void *ud, const int32_t *ids,
                                  const qkv_tensor *full, int B, int T, int V, const char *what);

#endif
