/* The model options on the command line, from qkv/options.h's table (see model_options.h). */
#include "model_options.h"

#include <stdio.h>

/* The table's rows with where each option lives in a qkv_model_options. */
static const struct {
    const char *flag, *help;
    size_t offset;
} rows[QKV_N_MODEL_OPTIONS] = {
#define ROW(field, flag, help) {flag, help, offsetof(qkv_model_options, field)},
    QKV_MODEL_OPTIONS(ROW)
#undef ROW
};

/* Option i's field in o. */
static bool *field(qkv_model_options *o, int i) { return (bool *)((char *)o + rows[i].offset); }

int model_option_specs(qkv_model_options *o, arg_spec *specs)
{
    for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++)
        specs[i] = (arg_spec){rows[i].flag, ARG_FLAG, field(o, i), 0, 0, NULL, rows[i].help};
    return QKV_N_MODEL_OPTIONS;
}

void model_options_add(qkv_model_options *o, const qkv_model_options *more)
{
    for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++)
        *field(o, i) |= model_option_on(more, i);
}

const char *model_option_flag(int i) { return rows[i].flag; }

bool model_option_on(const qkv_model_options *o, int i)
{
    return *(const bool *)((const char *)o + rows[i].offset);
}

void model_options_words(const qkv_model_options *o, char *text, size_t len)
{
    size_t n = 0;
    text[0] = 0;
    for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++)
        if (model_option_on(o, i) && n < len)
            n += (size_t)snprintf(text + n, len - n, ", %s", rows[i].flag + 2);
}
