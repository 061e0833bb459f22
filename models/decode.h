/* Internal to models/: what the GPT's sampler and the seq2seq greedy decoder share. Not installed. */
#ifndef QKV_DECODE_H
#define QKV_DECODE_H

#include "qkv/base.h"

/* Index of the largest of x[0..n) (the first one on ties): the greedy choice (generate.c). */
int32_t qkv__argmax(const qkv_real *x, int n);

#endif
