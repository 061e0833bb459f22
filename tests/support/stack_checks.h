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

#endif
