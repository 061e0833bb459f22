/* The exact evaluation's figures for the program: how many tokens it reads
 * at most, and what it will cost. The evaluation itself is the library's,
 * qkv_gpt_eval_split (qkv/gpt.h): a budgeted `qkv train` ends with it, `qkv
 * eval --full` prints it. */
#ifndef QKV_CLI_FULL_EVAL_H
#define QKV_CLI_FULL_EVAL_H

#include "qkv/qkv.h"

/* The most tokens the program's exact evaluation reads: the whole split of a
 * text up to about 5 MB, the first 500k tokens of a larger one. */
#define FULL_EVAL_MAX_TOKENS 500000

/* Seconds the whole exact evaluation of split (of at most
 * FULL_EVAL_MAX_TOKENS) will take, measured now on a few of its windows
 * (after one unmeasured, which sizes the arena); NAN with a message when
 * they fail. */
double full_eval_cost(const qkv_gpt *m, const qkv_corpus *c, qkv_split split, qkv_arena *arena);

#endif
