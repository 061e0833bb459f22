/* The model options as values, row by row of qkv/options.h's list: what the
 * modules check a config's options with and what a checkpoint's option word
 * is made from (see internal.h). */
#include "internal.h"

#include <stdio.h>

/* Each option's name (its field's) and how many values it takes: 2 for a
 * flag, the length of its list for a choice. */
#define ONE(...) +1
#define FLAG_ROW(field, flag, help) {#field, 2},
#define CHOICE_ROW(field, alias, values, help) {#field, 0 values(ONE)},
static const struct {
    const char *name;
    int n_values;
} rows[QKV_N_MODEL_OPTIONS] = {QKV_MODEL_OPTIONS(FLAG_ROW, CHOICE_ROW)};
#undef ONE
#undef FLAG_ROW
#undef CHOICE_ROW

const char *qkv__option_name(int i) { return rows[i].name; }

void qkv__options_get(const qkv_model_options *o, int v[QKV_N_MODEL_OPTIONS])
{
    int i = 0;
#define GET(field, ...) v[i++] = o->field;
    QKV_MODEL_OPTIONS(GET, GET)
#undef GET
}

void qkv__options_set(qkv_model_options *o, const int v[QKV_N_MODEL_OPTIONS])
{
    int i = 0;
#define SET(field, ...) o->field = (uint8_t)v[i++];
    QKV_MODEL_OPTIONS(SET, SET)
#undef SET
}

int qkv__check_option_values(const char *who, const char *what, const int v[QKV_N_MODEL_OPTIONS])
{
    for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++)
        if (v[i] < 0 || v[i] >= rows[i].n_values)
            return qkv_set_error("%s%s: option %s is %d, not one of its %d values", who, what,
                                 rows[i].name, v[i], rows[i].n_values);
    return 0;
}
