/* Names and configuration checks shared by the modules (see internal.h). */
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "internal.h"

int qkv__nn_name(char out[QKV_PARAM_NAME_MAX], const char *prefix, const char *suffix)
{
    bool bare = !prefix || !prefix[0];
    int n = bare ? snprintf(out, QKV_PARAM_NAME_MAX, "%s", suffix)
                 : snprintf(out, QKV_PARAM_NAME_MAX, "%s.%s", prefix, suffix);
    if (n < 0 || n >= QKV_PARAM_NAME_MAX)
        return qkv_set_error("parameter name '%s%s%s' is longer than %d characters",
                             bare ? "" : prefix, bare ? "" : ".", suffix, QKV_PARAM_NAME_MAX - 1);
    return 0;
}

qkv_tensor *qkv__nn_param(qkv_params *p, const char *prefix, const char *suffix, int ndim,
                          const int *shape, qkv_init init, qkv_real std)
{
    char name[QKV_PARAM_NAME_MAX];
    if (qkv__nn_name(name, prefix, suffix) < 0)
        return NULL;
    return qkv_params_add(p, name, ndim, shape, init, std);
}

int qkv__check_init(const char *fn, const void *m, const qkv_params *p, const char *name)
{
    return qkv__null(fn, "m", m) || qkv__null(fn, "p", p) || qkv__null(fn, "name", name) ? -1 : 0;
}

int qkv__check_forward(const char *fn, const void *m, const qkv_ctx *ctx, const qkv_tensor *param)
{
    if (qkv__null(fn, "m", m) || qkv__null(fn, "ctx", ctx))
        return -1;
    if (!ctx->arena)
        return qkv_set_error("%s: ctx->arena is NULL: a qkv_ctx needs the arena the forward "
                             "builds in",
                             fn);
    /* A record's count indexes its slots and grows by one per attention:
     * a negative one would write before them, INT_MAX would overflow. */
    const qkv_attn_record *rec = ctx->record;
    if (rec && (rec->n < 0 || rec->n == INT_MAX || rec->cap < 0))
        return qkv_set_error("%s: ctx->record has n %d and cap %d: a record counts from n 0 "
                             "(below INT_MAX) into cap >= 0 slots",
                             fn, rec->n, rec->cap);
    if (!param)
        return qkv_set_error("%s: the module m is not initialised: call its _init first", fn);
    if (!param->data)
        return qkv_set_error("%s: the module's parameters (%s) have no values yet: call "
                             "qkv_params_alloc first",
                             fn, param->name ? param->name : "weight");
    return 0;
}

int qkv__check_dropout(const char *fn, const qkv_ctx *ctx, qkv_real p)
{
    if (ctx->train && p > 0 && !ctx->rng)
        return qkv_set_error("%s: training with dropout %g needs ctx->rng, which is NULL", fn,
                             (double)p);
    return 0;
}

int qkv__check_config(const char *who, const char *name, const qkv_block_config *cfg)
{
    if (qkv__null(who, "cfg", cfg))
        return -1;
    if (cfg->n_embd < 1 || cfg->n_head < 1)
        return qkv_set_error("%s '%s': n_embd %d and n_head %d must be >= 1", who, name,
                             cfg->n_embd, cfg->n_head);
    if (cfg->n_layer < 0)
        return qkv_set_error("%s '%s': n_layer %d must be >= 0 (0 = 1, a block on its own)", who,
                             name, cfg->n_layer);
    if (cfg->n_embd % cfg->n_head != 0)
        return qkv_set_error("%s '%s': n_embd %d is not a multiple of n_head %d", who, name,
                             cfg->n_embd, cfg->n_head);
    if (!(cfg->dropout >= 0 && cfg->dropout <= QKV_DROPOUT_MAX))
        return qkv_set_error("%s '%s': dropout %g is not in [0, %g]", who, name,
                             (double)cfg->dropout, QKV_DROPOUT_MAX);
    int v[QKV_N_MODEL_OPTIONS];
    qkv__options_get(&cfg->opts, v);
    char what[QKV_PARAM_NAME_MAX + 4];
    snprintf(what, sizeof what, " '%s'", name);
    if (qkv__check_option_values(who, what, v) < 0)
        return -1;
    if (!(cfg->init_std >= 0 && isfinite(cfg->init_std)))
        return qkv_set_error("%s '%s': init_std %g must be finite and >= 0 (0 = 0.02)", who, name,
                             (double)cfg->init_std);
    return 0;
}

qkv_real qkv__init_std(const qkv_block_config *cfg)
{
    return cfg->init_std > 0 ? cfg->init_std : (qkv_real)0.02;
}

qkv_real qkv__resid_std(const qkv_block_config *cfg)
{
    return (qkv_real)(qkv__init_std(cfg) / sqrt(2.0 * qkv__n_layer(cfg)));
}

int qkv__n_layer(const qkv_block_config *cfg) { return cfg->n_layer > 0 ? cfg->n_layer : 1; }

int qkv__check_btc(const char *who, const qkv_tensor *x, int C)
{
    if (qkv__check_input(who, "x", x) < 0)
        return -1;
    if (x->ndim != 3 || x->shape[2] != C) {
        char s[64];
        return qkv_set_error("%s: input has shape %s; expected (B,T,%d)", who,
                             qkv_shape_str(x, s, sizeof s), C);
    }
    return 0;
}

int qkv__check_same_batch(const char *who, const qkv_tensor *x, const qkv_tensor *memory)
{
    if (qkv__check_input(who, "x", x) < 0 || qkv__check_input(who, "memory", memory) < 0)
        return -1;
    if (x->shape[0] != memory->shape[0]) {
        char sx[64], sm[64];
        return qkv_set_error("%s: x %s and memory %s have different batch sizes", who,
                             qkv_shape_str(x, sx, sizeof sx), qkv_shape_str(memory, sm, sizeof sm));
    }
    return 0;
}
