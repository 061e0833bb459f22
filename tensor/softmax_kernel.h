/* Internal: the mask rules shared by qkv_softmax_masked and qkv_attention
 * (defined in op_softmax.c). Not installed. */
#ifndef QKV_SOFTMAX_KERNEL_H
#define QKV_SOFTMAX_KERNEL_H

#include "graph.h"
#include "qkv/ops.h"

/* 0 when mask suits scores of t's number of dims; otherwise -1 with a message
 * naming op and t's shape. causal needs (..., Tq, Tk); key_valid needs a batch
 * dim first, (B, ..., Tq, Tk). mask may be NULL. */
int qkv__check_mask(const char *op, const qkv_mask *mask, const qkv_tensor *t);

/* -1 with a message naming op when a causal mask would leave queries with no
 * key at all: Tq > Tk (query i sees keys j <= i + Tk - Tq). */
int qkv__check_causal(const char *op, const qkv_mask *mask, int tq, int tk);

/* How many leading keys query i of tq may see: all tk without a causal mask;
 * under one the keys j <= i + (tk - tq), so the last query sees every key
 * (with tk > tq the extra keys are an earlier context); none when tk < tq and
 * i is early. */
int qkv__visible_keys(bool causal, int i, int tq, int tk);

#endif
