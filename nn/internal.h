/* Internal: helpers the nn modules share. Not installed. */
#ifndef QKV_NN_INTERNAL_H
#define QKV_NN_INTERNAL_H

#include "tensor/activation.h"
#include "tensor/check.h"
#include "qkv/nn.h"

/* ---- names and configuration (common.c) ---- */

/* Write "<prefix>.<suffix>" (just suffix when prefix is empty) into out; 0, or
 * -1 with a message when it does not fit a parameter name. */
int qkv__nn_name(char out[QKV_PARAM_NAME_MAX], const char *prefix, const char *suffix);

/* qkv_params_add under the name "<prefix>.<suffix>". */
qkv_tensor *qkv__nn_param(qkv_params *p, const char *prefix, const char *suffix, int ndim,
                          const int *shape, qkv_init init, qkv_real std);

/* qkv_linear_init under the name "<prefix>.<suffix>" (linear.c). */
int qkv__linear_sub(qkv_linear *m, qkv_params *p, const char *prefix, const char *suffix, int in,
                    int out, bool bias, qkv_real std);

/* Outputs [first, first + count) of the Linear m: x·W[first:first+count]ᵀ +
 * b[first:first+count], the weight rows used in place (linear.c). */
qkv_tensor *qkv__linear_part(const qkv_linear *m, const qkv_ctx *ctx, qkv_tensor *x, int first,
                             int count);

/* act(the Linear m of x), the activation fused into the product (linear.c). */
qkv_tensor *qkv__linear_act(const qkv_linear *m, const qkv_ctx *ctx, qkv_tensor *x,
                            qkv_activation act);

/* 0 when an init's arguments are there (m, p, name); else -1 naming fn. */
int qkv__check_init(const char *fn, const void *m, const qkv_params *p, const char *name);

/* 0 when a forward can run: m and ctx are there, ctx has an arena, and param (the
 * module's first parameter, NULL when m was never initialised) has values;
 * else -1 naming fn and what is missing. Pass m ? m->weight : NULL. */
int qkv__check_forward(const char *fn, const void *m, const qkv_ctx *ctx, const qkv_tensor *param);

/* 0 unless a forward in training mode (ctx->train) with dropout p > 0 has no
 * ctx->rng to draw the masks from; then -1 naming fn. */
int qkv__check_dropout(const char *fn, const qkv_ctx *ctx, qkv_real p);

/* 0 when cfg describes a usable module; otherwise -1 with a message naming the
 * module kind (who), its name and the numbers at fault. */
int qkv__check_config(const char *who, const char *name, const qkv_block_config *cfg);

/* ---- the model options as values, row by row of QKV_MODEL_OPTIONS (options.c) ---- */

/* Option i's name, its field's: "activation". */
const char *qkv__option_name(int i);

/* o's options as values into v: a flag 0 or 1, a choice its value. */
void qkv__options_get(const qkv_model_options *o, int v[QKV_N_MODEL_OPTIONS]);

/* The options of values v (each checked by qkv__check_option_values) into o. */
void qkv__options_set(qkv_model_options *o, const int v[QKV_N_MODEL_OPTIONS]);

/* 0 when every value of v is one of its option's; else -1 with "<who><what>:
 * option activation is 7, not one of its 3 values" ("gpt", " config"). */
int qkv__check_option_values(const char *who, const char *what, const int v[QKV_N_MODEL_OPTIONS]);

/* The norm of cfg's blocks and model ends, "<name>.weight" (and, for a
 * LayerNorm with biases, "<name>.bias"): RMSNorm when cfg->opts.norm is,
 * else LayerNorm (block.c). 0 or -1. */
int qkv__norm_init(qkv_ln *m, qkv_params *p, const char *name, const qkv_block_config *cfg);

/* The initial std of the projections that write into the residual stream:
 * init_std/√(2·n_layer), so the stream's variance does not grow with depth (GPT-2). */
qkv_real qkv__resid_std(const qkv_block_config *cfg);

/* The std of cfg's weights: cfg->init_std, or 0.02 when it is 0. */
qkv_real qkv__init_std(const qkv_block_config *cfg);

/* The number of blocks cfg describes: its n_layer, 0 meaning 1 (a block on its own). */
int qkv__n_layer(const qkv_block_config *cfg);

/* 0 when x is (B,T,C) for this C; otherwise -1 with a message naming who, x's
 * shape and C. A NULL x (an earlier failure) is named as the input x. */
int qkv__check_btc(const char *who, const qkv_tensor *x, int C);

/* 0 when x and memory have the same batch size; otherwise -1 with a message
 * naming who and both shapes (or the NULL input). */
int qkv__check_same_batch(const char *who, const qkv_tensor *x, const qkv_tensor *memory);

/* ---- the end of multi-head attention (attend.c) ---- */

/* The common end of multi-head attention: the attention of every head over
 * q (B,Tq,C) and k, v (B,Tk,C), heads side by side (head h owns columns
 * [h·D, (h+1)·D)), with mask; then the output projection c_proj, then dropout. */
qkv_tensor *qkv__attend(const qkv_ctx *ctx, const qkv_linear *c_proj, int n_head, qkv_real dropout,
                        qkv_tensor *q, qkv_tensor *k, qkv_tensor *v, const qkv_mask *mask,
                        qkv_tensor **weights);

/* qkv__attend of q, k and v side by side in one (B,T,3C) tensor, read in
 * place (qkv__attention_packed): no weights, and a record only counts it. */
qkv_tensor *qkv__attend_packed(const qkv_ctx *ctx, const qkv_linear *c_proj, int n_head,
                               qkv_real dropout, qkv_tensor *qkv, const qkv_mask *mask);

/* True when ctx has a record that keeps the next call (a slot is free). */
bool qkv__record_keeps(const qkv_ctx *ctx);

/* Append one attention call to ctx->record when there is one (the weights w
 * may be NULL). k and v may be views into the key/value cache: for a batch
 * of more than one their entries are Tmax·C apart (qkv__kv_cache_append). */
void qkv__attend_record(const qkv_ctx *ctx, qkv_tensor *q, qkv_tensor *k, qkv_tensor *v,
                        qkv_tensor *w, qkv_tensor *y, const qkv_mask *mask, int n_head);

/* Its last part: y, what the heads found (B,Tq,C), through c_proj, then dropout. */
qkv_tensor *qkv__attend_project(const qkv_ctx *ctx, const qkv_linear *c_proj, qkv_real dropout,
                                qkv_tensor *y);

/* ---- key/value cache (kv_cache.c) ---- */

/* How many positions layer's cache holds (the position of the next one), or
 * -1 with a message naming fn when c is NULL or has no such layer. */
int qkv__kv_cache_filled(const char *fn, const qkv_kv_cache *c, int layer);

/* Append the new keys and values k, v (B,Tnew,C) to layer's cache and give
 * back views of all its positions so far, *k_all and *v_all (B,len,C), read
 * in place: their batch entries start *kv_batch values apart (Tmax·C), so
 * they are for qkv__attention_heads_view only. Checks every size first: on
 * error the cache is untouched and the message names fn. 0 or -1. */
int qkv__kv_cache_append(const char *fn, qkv_kv_cache *c, int layer, const qkv_tensor *k,
                         const qkv_tensor *v, qkv_arena *a, qkv_tensor **k_all,
                         qkv_tensor **v_all, size_t *kv_batch);

#endif
