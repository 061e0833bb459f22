/* Multi-head self-attention, with a key/value-cached forward for generation (see qkv/nn.h). */
#include "tensor/attention.h"
#include "internal.h"

int qkv_self_attn_init(qkv_self_attn *m, qkv_params *p, const char *name,
                       const qkv_block_config *cfg, bool causal)
{
    const char *fn = "qkv_self_attn_init";
    if (qkv__check_init(fn, m, p, name) < 0 || qkv__check_config(fn, name, cfg) < 0)
        return -1;
    int C = cfg->n_embd;
    *m = (qkv_self_attn){.n_embd = C, .n_head = cfg->n_head, .causal = causal,
                         .dropout = cfg->dropout, .opts = cfg->opts};
    int D = C / cfg->n_head;
    if (cfg->opts.positions == QKV_POSITIONS_ROPE && D % 2 != 0)
        return qkv_set_error("qkv_self_attn_init: '%s': RoPE turns pairs of coordinates, but the "
                             "head size %d is odd", name, D);
    bool bias = !cfg->opts.no_bias;
    if (qkv__linear_sub(&m->c_attn, p, name, "c_attn", C, 3 * C, bias,
                        qkv__init_std(cfg)) < 0 ||
        qkv__linear_sub(&m->c_proj, p, name, "c_proj", C, C, bias, qkv__resid_std(cfg)) < 0)
        return -1;
    char qn[QKV_PARAM_NAME_MAX], kn[QKV_PARAM_NAME_MAX];
    if (cfg->opts.qk_norm &&
        (qkv__nn_name(qn, name, "q_norm") < 0 || qkv__nn_name(kn, name, "k_norm") < 0 ||
         qkv_rmsnorm_init(&m->q_norm, p, qn, D) < 0 || qkv_rmsnorm_init(&m->k_norm, p, kn, D) < 0))
        return -1;
    return 0;
}

/* norm applied to each head of x (B,T,H·D) on its own: viewed as (B,T,H,D),
 * every row of D values is one head's vector. */
static qkv_tensor *per_head_norm(const qkv_ln *norm, const qkv_ctx *ctx, qkv_tensor *x, int H)
{
    int B = x->shape[0], T = x->shape[1], C = x->shape[2];
    qkv_tensor *heads = qkv_reshape(ctx->arena, x, QKV_SHAPE(B, T, H, C / H));
    return qkv_reshape(ctx->arena, qkv_ln_forward(norm, ctx, heads), QKV_SHAPE(B, T, C));
}

/* The queries, keys and values of every head, (B,T,C) each, for the rows of
 * x at positions pos0... W_attn stacks W_Q (rows [0,C)), W_K ([C,2C)) and
 * W_V ([2C,3C)); within each product, head h owns the columns [h·D, (h+1)·D).
 * 0 or -1. */
static int project_qkv(const qkv_self_attn *m, const qkv_ctx *ctx, qkv_tensor *x, int pos0,
                       qkv_tensor **q, qkv_tensor **k, qkv_tensor **v)
{
    int C = m->n_embd, H = m->n_head;
    *q = qkv__linear_part(&m->c_attn, ctx, x, 0, C);
    *k = qkv__linear_part(&m->c_attn, ctx, x, C, C);
    *v = qkv__linear_part(&m->c_attn, ctx, x, 2 * C, C);
    if (!*q || !*k || !*v)
        return -1;
    /* QK-norm: every head's query and key rescaled to unit root mean square
     * (times a learned scale), so no score can grow without bound. */
    if (m->opts.qk_norm) {
        *q = per_head_norm(&m->q_norm, ctx, *q, H);
        *k = per_head_norm(&m->k_norm, ctx, *k, H);
    }
    /* RoPE: queries and keys turned by their position, so that q_t·k_s sees
     * only t − s. The values are not rotated: they carry content, not place. */
    if (m->opts.positions == QKV_POSITIONS_ROPE) {
        *q = qkv_rope(ctx->arena, *q, H, pos0);
        *k = qkv_rope(ctx->arena, *k, H, pos0);
    }
    return *q && *k ? 0 : -1;
}

/* True when the queries, keys and values can stay side by side as one
 * product makes them: nothing turns or rescales q and k on their own (RoPE,
 * QK-norm), and nobody asks for the weights or keeps q and k (a record). */
static bool packable(const qkv_self_attn *m, const qkv_ctx *ctx, qkv_tensor **weights)
{
    return !m->opts.qk_norm && m->opts.positions != QKV_POSITIONS_ROPE && !weights &&
           !qkv__record_keeps(ctx);
}

qkv_tensor *qkv_self_attn_forward(const qkv_self_attn *m, const qkv_ctx *ctx, qkv_tensor *x,
                                  const uint8_t *key_valid, qkv_tensor **weights)
{
    qkv_tensor *q, *k, *v;
    const char *fn = "qkv_self_attn_forward";
    if (qkv__check_forward(fn, m, ctx, m ? m->c_attn.weight : NULL) < 0 ||
        qkv__check_dropout(fn, ctx, m->dropout) < 0 || qkv__check_btc(fn, x, m->n_embd) < 0)
        return NULL;
    qkv_mask mask = {.causal = m->causal, .key_valid = key_valid};
    /* One product (B,T,C)·W_attnᵀ makes every position's q, k and v side by
     * side, and the attention reads them in place: the same values as three
     * products, and in backward one dX and one dW product instead of three
     * each (the three dX summed as one K = 3C product, not three passes over
     * x's gradient). */
    if (packable(m, ctx, weights)) {
        qkv_tensor *qkv = qkv_linear_forward(&m->c_attn, ctx, x);
        return qkv__result(fn, qkv ? qkv__attend_packed(ctx, &m->c_proj, m->n_head, m->dropout,
                                                        qkv, &mask)
                                   : NULL);
    }
    if (project_qkv(m, ctx, x, 0, &q, &k, &v) < 0)
        return NULL;
    return qkv__result(fn,
                       qkv__attend(ctx, &m->c_proj, m->n_head, m->dropout, q, k, v, &mask, weights));
}

qkv_tensor *qkv_self_attn_forward_cached(const qkv_self_attn *m, const qkv_ctx *ctx, qkv_tensor *x,
                                         qkv_kv_cache *c, int layer)
{
    const char *fn = "qkv_self_attn_forward_cached";
    if (qkv__check_forward(fn, m, ctx, m ? m->c_attn.weight : NULL) < 0 || qkv__null(fn, "c", c))
        return NULL;
    if (layer < 0 || layer >= c->n_layer) {
        qkv_set_error("%s: layer %d does not exist; the cache has %d layers", fn, layer,
                      c->n_layer);
        return NULL;
    }
    if (!m->causal) {
        qkv_set_error("qkv_self_attn_forward_cached: a cached forward needs causal attention "
                      "(earlier positions "
                      "would otherwise see later ones)");
        return NULL;
    }
    if (qkv_grad_enabled()) {
        qkv_set_error("qkv_self_attn_forward_cached: the cached forward is for generation; turn "
                      "grad mode off "
                      "(qkv_set_grad_enabled(false))");
        return NULL;
    }
    qkv_tensor *q, *k, *v, *k_all, *v_all;
    /* The new rows sit after the cached ones: with RoPE their queries and keys
     * are turned at those positions, and the cache keeps keys already turned. */
    size_t kv_batch;
    int pos0 = qkv__kv_cache_filled(fn, c, layer);
    if (pos0 < 0 || qkv__check_btc(fn, x, m->n_embd) < 0 ||
        project_qkv(m, ctx, x, pos0, &q, &k, &v) < 0 ||
        qkv__kv_cache_append(fn, c, layer, k, v, ctx->arena, &k_all, &v_all, &kv_batch) < 0)
        return NULL;
    /* The new queries are the last Tnew of len positions: the core's causal
     * rule j <= i + (len - Tnew) lets query i see every cached position and
     * the new ones up to itself. The keys and values are read in the cache. */
    qkv_mask mask = {.causal = true};
    qkv_tensor *w = NULL;
    /* A kept call gets its weights whatever qkv_set_record_weights says: its
     * keys are read in place in the cache, where qkv_attention_weights cannot
     * follow them, and a step's few new rows cost little. */
    qkv_tensor *y = qkv__attention_heads_view(ctx->arena, q, k_all, v_all, kv_batch, m->n_head, &mask,
                                              qkv__record_keeps(ctx) ? &w : NULL);
    qkv__attend_record(ctx, q, k_all, v_all, w, y, &mask, m->n_head);
    return qkv__result(fn, qkv__attend_project(ctx, &m->c_proj, m->dropout, y));
}
