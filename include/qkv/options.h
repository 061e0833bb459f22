/* qkv/options.h — the model options: one list, read by every model and by the program.
 *
 * Each option is a switch that swaps a part of GPT-2's transformer for the
 * part a later recipe uses. QKV_MODEL_OPTIONS lists them once, one X(...) row
 * each; everything that names an option is made from that list: the field of
 * qkv_model_options, its bit in a checkpoint's flag word (the row's place:
 * the first row is bit 0), the flag of `qkv train` and `qkv s2s train`, its
 * --help line, the run summary and the ranks' agreement. Adding an option is a
 * row here and its implementation in the module it changes (the modules keep
 * the qkv_model_options they were built with); new rows go last, so every
 * checkpoint keeps its bits.
 *
 *     qkv_gpt_config cfg = {.vocab_size = 65, .block_size = 64, .n_layer = 4, .n_head = 4,
 *                           .n_embd = 128, .opts = {.rope = true, .rmsnorm = true}};
 *     qkv_gpt *m = qkv_gpt_new(&cfg, 1337);     // no wpe table, RMSNorm in every norm
 *     printf("%zu parameters\n", m ? m->params->total : 0);
 *     qkv_gpt_free(m);
 *
 * A row: X(field, flag, help) — the field's name, the command-line flag that
 * turns it on, and one line saying what it does (the field's documentation).
 */
#ifndef QKV_OPTIONS_H
#define QKV_OPTIONS_H

#include "qkv/base.h"

QKV_BEGIN_DECLS

#define QKV_MODEL_OPTIONS(X)                                                                   \
    X(no_bias, "--no-bias", "Linear layers and LayerNorms without biases")                     \
    X(rope, "--rope", "rotary position embeddings instead of learned ones")                    \
    X(rmsnorm, "--rmsnorm", "RMSNorm instead of LayerNorm")                                    \
    X(relu2, "--relu2", "ReLU² instead of GELU in the MLP")                                    \
    X(qk_norm, "--qk-norm", "RMS-normalise each head's queries and keys")                      \
    X(untied, "--untied", "an lm head of its own (not the token embedding)")

/* The options a model is built with, one bool per row of QKV_MODEL_OPTIONS
 * (the row's help says what it does); false, the zero value, is GPT-2's part.
 * A module reads the ones that concern it: a block all but untied, the MLP
 * relu2, the self-attention rope and qk_norm; the models (qkv/gpt.h,
 * qkv/seq2seq.h) say where each applies. */
typedef struct qkv_model_options {
#define QKV__OPTION_FIELD(field, flag, help) bool field;
    QKV_MODEL_OPTIONS(QKV__OPTION_FIELD)
#undef QKV__OPTION_FIELD
} qkv_model_options;

/* The number of options (rows of QKV_MODEL_OPTIONS). */
enum {
#define QKV__OPTION_ONE(field, flag, help) +1
    QKV_N_MODEL_OPTIONS = 0 QKV_MODEL_OPTIONS(QKV__OPTION_ONE)
#undef QKV__OPTION_ONE
};

QKV_END_DECLS
#endif
