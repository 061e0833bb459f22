/* qkv/options.h — the model options: one list, read by every model and by the program.
 *
 * Each option swaps a part of GPT-2's transformer for the part a later recipe
 * uses. An option is a flag (on or off: no_bias, qk_norm, untied) or a
 * choice among named values (norm: layernorm or rmsnorm); the zero value of
 * each is GPT-2's part. QKV_MODEL_OPTIONS lists them once, one row each, and
 * each choice's values are a list of their own; everything that names an
 * option is made from these lists: the field of qkv_model_options, the
 * choices' enums, the option's place in a checkpoint (the row's place: the
 * first row is slot 0), the flags of `qkv train` and `qkv s2s train`, their
 * --help lines, the run summary and the ranks' agreement. docs/options.md
 * says how to add an option or a value (a row here, its part in the module it
 * changes); new rows and values go last, so every checkpoint keeps its
 * meaning.
 *
 *     qkv_gpt_config cfg = {.vocab_size = 65, .block_size = 64, .n_layer = 4, .n_head = 4,
 *                           .n_embd = 128,
 *                           .opts = {.positions = QKV_POSITIONS_ROPE, .norm = QKV_NORM_RMSNORM}};
 *     qkv_gpt *m = qkv_gpt_new(&cfg, 1337);     // no wpe table, RMSNorm in every norm
 *     printf("%zu parameters\n", m ? m->params->total : 0);
 *     qkv_gpt_free(m);
 *
 * A flag's row: FLAG(field, flag, help) — the field's name, the command-line
 * flag that turns it on, and one line saying what it does. A choice's row:
 * CHOICE(field, alias, values, help) — the field's name (also its flag,
 * `--norm rmsnorm`), the name of the bool it was before it was a choice (an
 * alias of the field for the code written then, and the flag `--rmsnorm`
 * meaning value 1), the list of its values and what it chooses. A value's
 * row: V(constant, word, help) — its enum constant, its word on the command
 * line and in messages, and what it is.
 */
#ifndef QKV_OPTIONS_H
#define QKV_OPTIONS_H

#include "qkv/base.h"

QKV_BEGIN_DECLS

/* How the model knows where a token is. */
#define QKV_POSITIONS(V)                                                                      \
    V(QKV_POSITIONS_LEARNED, learned, "a learned embedding per position (wpe), added to x")   \
    V(QKV_POSITIONS_ROPE, rope, "rotary embeddings: q and k rotated by their position")

/* The norm before each sublayer and the final one. */
#define QKV_NORMS(V)                                                                          \
    V(QKV_NORM_LAYERNORM, layernorm, "LayerNorm: less the mean, over the deviation")          \
    V(QKV_NORM_RMSNORM, rmsnorm, "RMSNorm: over the root mean square, no mean, no bias")

/* The MLP's nonlinearity (qkv/ops.h has each as an op of its own). */
#define QKV_ACTIVATIONS(V)                                                                    \
    V(QKV_ACTIVATION_GELU, gelu, "GELU, tanh form: qkv_gelu")                                 \
    V(QKV_ACTIVATION_RELU2, relu2, "ReLU², max(x, 0)²: qkv_relu2")                            \
    V(QKV_ACTIVATION_SILU, silu, "SiLU (swish), x·σ(x): qkv_silu")

#define QKV_MODEL_OPTIONS(FLAG, CHOICE)                                                       \
    FLAG(no_bias, "--no-bias", "Linear layers and LayerNorms without biases")                 \
    CHOICE(positions, rope, QKV_POSITIONS, "how positions enter the model")                   \
    CHOICE(norm, rmsnorm, QKV_NORMS, "every norm of the model")                               \
    CHOICE(activation, relu2, QKV_ACTIVATIONS, "the MLP's activation")                        \
    FLAG(qk_norm, "--qk-norm", "RMS-normalise each head's queries and keys")                  \
    FLAG(untied, "--untied", "an lm head of its own (not the token embedding)")

/* Each choice's values as an enum, qkv_positions, qkv_norm and
 * qkv_activation, and how many values each has (QKV_N_POSITIONS, ...: not
 * in the enum, so that a switch over one can name every value). */
#define QKV__VALUE(constant, word, help) constant,
#define QKV__ONE(...) +1
typedef enum qkv_positions { QKV_POSITIONS(QKV__VALUE) } qkv_positions;
typedef enum qkv_norm { QKV_NORMS(QKV__VALUE) } qkv_norm;
typedef enum qkv_activation { QKV_ACTIVATIONS(QKV__VALUE) } qkv_activation;
enum {
    QKV_N_POSITIONS = 0 QKV_POSITIONS(QKV__ONE),
    QKV_N_NORMS = 0 QKV_NORMS(QKV__ONE),
    QKV_N_ACTIVATIONS = 0 QKV_ACTIVATIONS(QKV__ONE)
};

/* The options a model is built with: a bool per flag, a byte per choice
 * holding one of its values (the choice's enum); zero, every field, is GPT-2.
 * A choice's field shares its byte with the bool it was before (rope,
 * rmsnorm, relu2: true is value 1): code written then still builds and means
 * what it meant. Set that bool, read the choice: a value past 1 is no bool.
 * A module reads the options that concern it: a block all but untied, the MLP
 * activation, the self-attention positions and qk_norm; the models
 * (qkv/gpt.h, qkv/seq2seq.h) say where each applies. */
typedef struct qkv_model_options {
#define QKV__OPTION_FLAG(field, flag, help) bool field;
#define QKV__OPTION_CHOICE(field, alias, values, help) union { uint8_t field; bool alias; };
    QKV_MODEL_OPTIONS(QKV__OPTION_FLAG, QKV__OPTION_CHOICE)
#undef QKV__OPTION_FLAG
#undef QKV__OPTION_CHOICE
} qkv_model_options;

/* The number of options (rows of QKV_MODEL_OPTIONS). */
enum { QKV_N_MODEL_OPTIONS = 0 QKV_MODEL_OPTIONS(QKV__ONE, QKV__ONE) };
#undef QKV__VALUE
#undef QKV__ONE

QKV_END_DECLS
#endif
