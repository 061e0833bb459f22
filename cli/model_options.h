/* The model options on the command line: their flags, --help lines and
 * words, all from the one table in qkv/options.h. */
#ifndef QKV_CLI_MODEL_OPTIONS_H
#define QKV_CLI_MODEL_OPTIONS_H

#include <stddef.h>

#include "args.h"
#include "qkv/options.h"

/* One flag per option (QKV_N_MODEL_OPTIONS of them, in the table's order,
 * the table's help as their --help line), each setting its field of o, into
 * specs; returns how many it wrote. */
int model_option_specs(qkv_model_options *o, arg_spec *specs);

/* Turn on in o every option on in more (a preset's, under the flags given). */
void model_options_add(qkv_model_options *o, const qkv_model_options *more);

/* The flag of option i (0 <= i < QKV_N_MODEL_OPTIONS), "--rope". */
const char *model_option_flag(int i);

/* Whether option i is on in o. */
bool model_option_on(const qkv_model_options *o, int i);

/* The options on in o for a run's summary, each as ", " and its flag's
 * name (", rope, qk-norm"), into text (len bytes; "" when none is on). */
void model_options_words(const qkv_model_options *o, char *text, size_t len);

#endif
