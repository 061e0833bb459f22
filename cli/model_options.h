/* The model options on the command line: their flags, --help lines, words
 * and terms, all from the one list in qkv/options.h. */
#ifndef QKV_CLI_MODEL_OPTIONS_H
#define QKV_CLI_MODEL_OPTIONS_H

#include <stddef.h>

#include "args.h"
#include "qkv/options.h"

/* The most specs model_option_specs writes: one per flag, two per choice
 * (--norm NAME and the flag it was, --rmsnorm). */
enum { MODEL_OPTION_SPECS = 2 * QKV_N_MODEL_OPTIONS };

/* What a command line said of the model options, before a preset's. */
typedef struct model_option_args {
    bool on[QKV_N_MODEL_OPTIONS];          /* a flag given, or a choice's 1.x flag (--rope) */
    const char *word[QKV_N_MODEL_OPTIONS]; /* a choice's value given (--positions rope) */
} model_option_args;

/* The specs of every option, in the list's order with the list's help, into
 * specs (room for MODEL_OPTION_SPECS), each storing into a; returns how
 * many it wrote. */
int model_option_specs(model_option_args *a, arg_spec *specs);

/* The options a asks for over base (a preset's) into o: a flag on when given
 * or on in base, a choice the value given (by name or by its 1.x flag) or
 * else base's. -1, or the exit status of a usage error (args_error: a name
 * that is no value of the choice, or a 1.x flag that says another value). */
int model_options_choose(const arg_cmd *cmd, const model_option_args *a,
                         const qkv_model_options *base, qkv_model_options *o);

/* The flag of option i (0 <= i < QKV_N_MODEL_OPTIONS): "--no-bias", "--positions". */
const char *model_option_flag(int i);

/* Option i's value in o as a word: a flag's "on" or "off", a choice's value ("rope"). */
const char *model_option_word(const qkv_model_options *o, int i);

/* The options in o that are not GPT-2's, for a run's summary: each as ", "
 * and a flag's name or a choice's value (", rope, qk-norm"), into text (len
 * bytes; "" for GPT-2). */
void model_options_words(const qkv_model_options *o, char *text, size_t len);

#endif
