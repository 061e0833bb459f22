/* What every transformer here shares: its config's checks, its options'
 * flag word (see transformer.h). */
#include "transformer.h"
#include "nn/internal.h"

/* A checkpoint's option word holds each option's value in bit planes: bit k
 * of the value of row i is bit PLANE·k + i. Plane 0 is the word of the
 * checkpoints written when every option was a bool (bit i: row i on), so
 * they read as they were written, and a model with every value 0 or 1
 * writes that word still. */
#define PLANE 8
#define PLANES (32 / PLANE)
_Static_assert(QKV_N_MODEL_OPTIONS <= PLANE, "one bit per option in a plane");
#define ONE(...) +1
#define NO_CHECK(...)
#define FITS(field, alias, values, help) \
    _Static_assert(0 values(ONE) <= 1 << PLANES, "the values of " #field " fit the planes");
QKV_MODEL_OPTIONS(NO_CHECK, FITS)
#undef FITS
#undef NO_CHECK
#undef ONE

int qkv__check_model_sizes(const char *who, int n_layer, int n_head, int n_embd, double dropout,
                           const qkv_model_options *opts)
{
    if (n_layer < 1 || n_layer > 256)
        return qkv_set_error("%s config: n_layer %d is not in [1, 256]", who, n_layer);
    if (n_embd < 1 || n_embd > 65536)
        return qkv_set_error("%s config: n_embd %d is not in [1, 65536]", who, n_embd);
    if (n_head < 1 || n_embd % n_head)
        return qkv_set_error("%s config: n_embd %d is not a multiple of n_head %d", who, n_embd,
                             n_head);
    if (!(dropout >= 0 && dropout <= QKV_DROPOUT_MAX))
        return qkv_set_error("%s config: dropout %g is not in [0, %g]", who, dropout,
                             QKV_DROPOUT_MAX);
    int v[QKV_N_MODEL_OPTIONS];
    qkv__options_get(opts, v);
    if (qkv__check_option_values(who, " config", v) < 0)
        return -1;
    if (opts->positions == QKV_POSITIONS_ROPE && (n_embd / n_head) % 2 != 0)
        return qkv_set_error("%s config: rope needs an even head size, not %d (n_embd %d / "
                             "n_head %d)", who, n_embd / n_head, n_embd, n_head);
    return 0;
}

uint32_t qkv__options_word(const qkv_model_options *opts)
{
    int v[QKV_N_MODEL_OPTIONS];
    qkv__options_get(opts, v);
    uint32_t word = 0;
    for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++)
        for (int k = 0; k < PLANES; k++)
            word |= (uint32_t)(v[i] >> k & 1) << (PLANE * k + i);
    return word;
}

int qkv__options_from_word(const char *who, uint32_t word, qkv_model_options *opts)
{
    int v[QKV_N_MODEL_OPTIONS] = {0};
    uint32_t known = 0;
    for (int i = 0; i < QKV_N_MODEL_OPTIONS; i++)
        for (int k = 0; k < PLANES; k++) {
            uint32_t bit = (uint32_t)1 << (PLANE * k + i);
            v[i] |= (word & bit ? 1 : 0) << k;
            known |= bit;
        }
    if (word & ~known)
        return qkv_set_error("%s config: the flag word is 0x%x; its bits 0x%x hold no option this "
                             "qkv knows (it knows %d: %s..%s)", who, word, word & ~known,
                             QKV_N_MODEL_OPTIONS, qkv__option_name(0),
                             qkv__option_name(QKV_N_MODEL_OPTIONS - 1));
    if (qkv__check_option_values(who, " config", v) < 0)
        return -1;
    qkv__options_set(opts, v);
    return 0;
}
