/* Internal: what token sampling and generation (decode/) share with the
 * models' decoders (models/). Not installed. */
#ifndef QKV_DECODE_H
#define QKV_DECODE_H

#include "qkv/generate.h"

/* Index of the largest of x[0..n) (the first one on ties): the greedy choice (sample.c). */
int32_t qkv__argmax(const qkv_real *x, int n);

/* qkv_sample_opts_check, with fn naming the public function in a message
 * (sample.c). Greedy options (temperature 0) need no rng. */
int qkv__check_sample_opts(const char *fn, const qkv_sample_opts *o);

/* qkv_generate, with fn naming the public function in its messages
 * (generate.c): qkv_gpt_generate is this loop under its own name. */
int qkv__generate(const char *fn, const qkv_lm *lm, const int32_t *prompt, int n_prompt,
                  int n_new, const qkv_sample_opts *opts, qkv_rng *rng, qkv_emit_fn emit,
                  void *ud);

#endif
