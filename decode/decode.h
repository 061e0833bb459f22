/* Internal: what token sampling and generation (decode/) share with the
 * models' decoders (models/). Not installed. */
#ifndef QKV_DECODE_H
#define QKV_DECODE_H

#include "qkv/generate.h"
#include "qkv/stack.h"

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

/* qkv_stack_lm_new under fn's name, over a copy of the stack's modules *s
 * (its blocks and parameters must outlive the lm); made_by names the
 * function in qkv__stack_lm_free's message (decode/stack_lm.c). */
qkv_lm *qkv__stack_lm_new(const char *fn, const qkv_stack *s, bool use_cache);

/* Free a qkv_lm of qkv__stack_lm_new; an lm it did not make is refused with
 * "<fn>: lm was not made by <made_by>" (decode/stack_lm.c). */
void qkv__stack_lm_free(const char *fn, const char *made_by, qkv_lm *lm);

/* qkv_s2s_stack_lm_new under fn's name, over a copy of the encoder-decoder's
 * modules *s (its blocks and parameters must outlive the lm) (decode/s2s_stack_lm.c). */
qkv_lm *qkv__s2s_lm_new(const char *fn, const qkv_s2s_stack *s, const int32_t *src,
                        const uint8_t *src_valid, int B, int Ts, bool use_cache);

/* Free a qkv_lm of qkv__s2s_lm_new; an lm it did not make is refused with
 * "<fn>: lm was not made by <made_by>" (decode/s2s_stack_lm.c). */
void qkv__s2s_lm_free(const char *fn, const char *made_by, qkv_lm *lm);

#endif
