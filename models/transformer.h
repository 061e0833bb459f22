/* Internal to models/: what every transformer here shares: the checks of
 * its config, its options' flag word (the ends around its blocks are nn/stack.h's). Not
 * installed. */
#ifndef QKV_TRANSFORMER_H
#define QKV_TRANSFORMER_H

#include "nn/stack.h"

/* 1..256 layers, a width of 1..65536 that n_head divides, dropout in [0, 1),
 * each option one of its values, and with rope positions an even head size:
 * 0, or -1 with "<who> config: ..."
 * naming the first bad field. The upper bounds keep a corrupt or hostile
 * config from asking for a giant model. */
int qkv__check_model_sizes(const char *who, int n_layer, int n_head, int n_embd, double dropout,
                           const qkv_model_options *opts);

/* The options as a checkpoint's flag word: bit k of the value of row i of
 * QKV_MODEL_OPTIONS is bit 8·k + i (so a value 0 or 1 is bit i, as when
 * every option was a bool). */
uint32_t qkv__options_word(const qkv_model_options *opts);

/* The options of a flag word into opts (bits of no option, or a value that
 * is none of its option's: -1 with "<who> config: ..." naming them; opts is
 * then untouched). */
int qkv__options_from_word(const char *who, uint32_t word, qkv_model_options *opts);

#endif
