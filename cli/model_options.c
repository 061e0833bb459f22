/* The model options on the command line, from qkv/options.h's list (see model_options.h). */
#include "model_options.h"

#include <stdio.h>
#include <string.h>

/* Each choice's values by name: positions_words, norm_words, ...; a flag's are off and on. */
#define WORD(constant, word, help) #word,
#define NO_WORDS(...)
#define WORDS(field, alias, values, help) static const char *const field##_words[] = {values(WORD)};
QKV_MODEL_OPTIONS(NO_WORDS, WORDS)
#undef WORD
#undef NO_WORDS
#undef WORDS
static const char *const flag_words[] = {"off", "on"};

/* The list's rows with where each option lives in a qkv_model_options (a
 * byte: a flag's bool, a choice's value). */
static const struct {
    const char *flag, *alias, *help; /* alias: a choice's 1.x flag, for value 1; NULL for a flag */
    const char *const *words;
    int n_words;
    size_t offset;
} rows[QKV_N_MODEL_OPTIONS] = {
#define ONE(...) +1
#define FLAG_ROW(field, flag, help) \
    {flag, NULL, help, flag_words, 2, offsetof(qkv_model_options, field)},
#define CHOICE_ROW(field, alias, values, help)                                 \
    {"--" #field, "--" #alias, help, field##_words, 0 values(ONE),             \
     offsetof(qkv_model_options, field)},
    QKV_MODEL_OPTIONS(FLAG_ROW, CHOICE_ROW)
#undef ONE
#undef FLAG_ROW
#undef CHOICE_ROW
};

/* Option i's byte in o. */
static uint8_t value(const qkv_model_options *o, int i)
{
    return ((const uint8_t *)o)[rows[i].offset];
}

/* Choice i's values as "gelu, relu2 or silu" into text (len bytes). */
static void list_words(int i, char *text, size_t len)
{
    size_t n = 0;
    text[0] = 0;
    for (int v = 0; v < rows[i].n_words && n < len; v++)
        n += (size_t)snprintf(text + n, len - n, "%s%s", v == 0 ? "" :
                              v + 1 < rows[i].n_words ? ", " : " or ", rows[i].words[v]);
}

int model_option_specs(model_option_args *a, arg_spec *specs)
{
    /* A choice's --help line and its 1.x flag's, made once: "the MLP's
     * activation: gelu, relu2 or silu (default gelu)", "same as --activation relu2". */
    static char help[QKV_N_MODEL_OPTIONS][200], alias_help[QKV_N_MODEL_OPTIONS][64];
    int n = 0;
    for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++) {
        if (!rows[i].alias) {
            specs[n++] = (arg_spec){rows[i].flag, ARG_FLAG, &a->on[i], 0, 0, NULL, rows[i].help};
            continue;
        }
        char words[160];
        list_words(i, words, sizeof words);
        snprintf(help[i], sizeof help[i], "%s: %s (default %s)", rows[i].help, words,
                 rows[i].words[0]);
        snprintf(alias_help[i], sizeof alias_help[i], "same as %s %s", rows[i].flag,
                 rows[i].words[1]);
        specs[n++] = (arg_spec){rows[i].flag, ARG_STR, &a->word[i], 0, 0, "NAME", help[i]};
        specs[n++] = (arg_spec){rows[i].alias, ARG_FLAG, &a->on[i], 0, 0, NULL, alias_help[i]};
    }
    return n;
}

int model_options_choose(const arg_cmd *cmd, const model_option_args *a,
                         const qkv_model_options *base, qkv_model_options *o)
{
    *o = *base;
    for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++) {
        uint8_t *v = (uint8_t *)o + rows[i].offset;
        if (!rows[i].alias) {
            *v = *v || a->on[i];
            continue;
        }
        const char *word = a->word[i];
        if (word) {
            int k = 0;
            while (k < rows[i].n_words && strcmp(word, rows[i].words[k]) != 0)
                k++;
            if (k == rows[i].n_words) {
                char words[160];
                list_words(i, words, sizeof words);
                return args_error(cmd, "%s: '%s' is not one of %s", rows[i].flag, word, words);
            }
            if (a->on[i] && k != 1)
                return args_error(cmd, "%s says %s %s, but %s says %s", rows[i].alias,
                                  rows[i].flag, rows[i].words[1], rows[i].flag, word);
            *v = (uint8_t)k;
        } else if (a->on[i]) {
            *v = 1;
        }
    }
    return -1;
}

const char *model_option_flag(int i) { return rows[i].flag; }

const char *model_option_word(const qkv_model_options *o, int i)
{
    return rows[i].words[value(o, i)];
}

void model_options_words(const qkv_model_options *o, char *text, size_t len)
{
    size_t n = 0;
    text[0] = 0;
    for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++)
        if (value(o, i) && n < len)
            n += (size_t)snprintf(text + n, len - n, ", %s",
                                  rows[i].alias ? model_option_word(o, i) : rows[i].flag + 2);
}
