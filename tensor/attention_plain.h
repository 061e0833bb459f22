/* Internal: one head of attention as plain loops, written from the formula
 * (attention_plain.c), to read before the fast core (op_attention.c) and to
 * check it against (tests/tensor/test_attention_core.c). Not installed. */
#ifndef QKV_ATTENTION_PLAIN_H
#define QKV_ATTENTION_PLAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "qkv/base.h"

/* O = softmax(Q·Kᵀ/√d + mask)·V for one head: q (tq×d), k and v (tk×d), all
 * rows packed; writes o (tq×d) and the weights p (tq×tk). causal hides the
 * keys j > i + tk − tq from query i; key_valid (tk, 1 = real key) or NULL. */
void qkv__attention_plain(qkv_real *o, qkv_real *p, const qkv_real *q, const qkv_real *k,
                          const qkv_real *v, int tq, int tk, int d, bool causal,
                          const uint8_t *key_valid);

/* Its backward from the forward's weights p and dO = dL/dO (tq×d): writes
 * dq (tq×d), dk and dv (tk×d), and ds (tq×tk), the gradient of the scores. */
void qkv__attention_plain_backward(qkv_real *dq, qkv_real *dk, qkv_real *dv, qkv_real *ds,
                                   const qkv_real *q, const qkv_real *k, const qkv_real *v,
                                   const qkv_real *p, const qkv_real *dout, int tq, int tk, int d);

#endif
