/* Internal: the greedy choice, shared by the token sampler (train/sample.c)
 * and the seq2seq greedy decoder. Not installed. */
#ifndef QKV_DECODE_H
#define QKV_DECODE_H

#include "qkv/base.h"

/* Index of the largest of x[0..n) (the first one on ties): the greedy choice (sample.c). */
int32_t qkv__argmax(const qkv_real *x, int n);

#endif
