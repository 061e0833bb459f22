/* The public decoder-only stack: embeddings, causal blocks, the final norm
 * and the head, declared by one call and run by one (see qkv/stack.h). */
#include "qkv/stack.h"
#include "internal.h"
#include "stack.h"

#include <stdio.h>
#include <string.h>

qkv_tensor *qkv_params_add_under(qkv_params *p, const char *prefix, const char *suffix, int ndim,
                                 const int *shape, qkv_init init, qkv_real std)
{
    const char *fn = "qkv_params_add_under";
    if (qkv__null(fn, "p", p) || qkv__null(fn, "suffix", suffix))
        return NULL;
    return qkv__result(fn, qkv__nn_param(p, prefix, suffix, ndim, shape, init, std));
}

/* 0 when cfg describes a stack; else -1 naming fn and the field. */
static int check_config(const char *fn, const qkv_stack_config *cfg)
{
    if (cfg->vocab_size < 1 || cfg->vocab_size > 1 << 24)
        return qkv_set_error("%s: cfg->vocab_size %d is not in [1, 2^24]", fn, cfg->vocab_size);
    if (cfg->block_size < 1 || cfg->block_size > 1 << 20)
        return qkv_set_error("%s: cfg->block_size %d is not in [1, 2^20]", fn, cfg->block_size);
    return qkv__check_config(fn, "cfg->block", &cfg->block);
}

/* The stack's modules into s, named under prefix (s->h allocated). */
static int declare(qkv_stack *s, qkv_params *p, const char *prefix)
{
    const qkv_stack_config *c = &s->cfg;
    const qkv_block_config *b = &c->block;
    qkv_real std = qkv__init_std(b);
    char name[QKV_PARAM_NAME_MAX];
    if (qkv__nn_name(name, prefix, "wte") < 0 ||
        qkv_embed_init(&s->wte, p, name, c->vocab_size, b->n_embd, std) < 0)
        return -1;
    if (b->opts.positions != QKV_POSITIONS_ROPE &&
        (qkv__nn_name(name, prefix, "wpe") < 0 ||
         qkv_embed_init(&s->wpe, p, name, c->block_size, b->n_embd, std) < 0))
        return -1;
    for (int l = 0; l < b->n_layer; l++) {
        char sub[16];
        snprintf(sub, sizeof sub, "h.%d", l);
        if (qkv__nn_name(name, prefix, sub) < 0 || qkv_block_init(&s->h[l], p, name, b, true) < 0)
            return -1;
    }
    if (qkv__nn_name(name, prefix, "ln_f") < 0 || qkv__norm_init(&s->ln_f, p, name, b) < 0)
        return -1;
    return b->opts.untied && (qkv__nn_name(name, prefix, "lm_head") < 0 ||
                              qkv_linear_init(&s->lm_head, p, name, b->n_embd, c->vocab_size,
                                              false, std) < 0)
               ? -1
               : 0;
}

int qkv_stack_init(qkv_stack *s, qkv_params *p, const char *prefix, const qkv_stack_config *cfg)
{
    const char *fn = "qkv_stack_init";
    if (qkv__null(fn, "s", s) || qkv__null(fn, "p", p) || qkv__null(fn, "cfg", cfg) ||
        check_config(fn, cfg) < 0)
        return -1;
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    s->cfg.block.n_layer = qkv__n_layer(&cfg->block);
    s->h = qkv_calloc((size_t)s->cfg.block.n_layer * sizeof *s->h);
    if (!s->h)
        return qkv__fail_in(fn);
    if (declare(s, p, prefix) < 0) {
        qkv_stack_free(s);
        return qkv__fail_in(fn);
    }
    return 0;
}

void qkv_stack_free(qkv_stack *s)
{
    if (!s)
        return;
    qkv_free(s->h);
    s->h = NULL;
}

/* 0 when a forward of s over ids (B,n) at positions pos0.. can start; else -1 naming fn. */
static int check_forward(const char *fn, const qkv_stack *s, const qkv_ctx *ctx,
                         const int32_t *ids, int B, int n, int pos0)
{
    if (qkv__check_forward(fn, s, ctx, s ? s->wte.weight : NULL) < 0)
        return -1;
    if (!s->h)
        return qkv_set_error("%s: s has no blocks (freed, or never made by qkv_stack_init)", fn);
    if (qkv__check_ids(fn, "ids", "T", "the block size", ids, B, n, pos0, s->cfg.block_size,
                       s->cfg.vocab_size) < 0)
        return -1;
    return qkv__check_dropout(fn, ctx, s->cfg.block.dropout);
}

/* The embeddings of ids (B,n) at positions pos0.. (positions in the blocks with rope). */
static qkv_tensor *embed(const qkv_stack *s, const qkv_ctx *ctx, const int32_t *ids, int B,
                         int n, int pos0)
{
    bool rope = s->cfg.block.opts.positions == QKV_POSITIONS_ROPE;
    return qkv__embed_tokens(&s->wte, rope ? NULL : &s->wpe, ctx, ids, B, n, pos0,
                             s->cfg.block.dropout);
}

/* The final norm and the head of x (B,T,C). */
static qkv_tensor *head(const qkv_stack *s, const qkv_ctx *ctx, qkv_tensor *x)
{
    return qkv__lm_head(&s->ln_f, &s->wte, s->cfg.block.opts.untied ? &s->lm_head : NULL, ctx, x);
}

qkv_tensor *qkv__stack_run(const char *fn, const qkv_stack *s, const qkv_ctx *ctx,
                           const int32_t *ids, int B, int n, qkv_kv_cache *c, bool last_only)
{
    if (c && c->n_layer != s->cfg.block.n_layer) {
        qkv_set_error("%s: c has %d layers, s has %d", fn, c->n_layer, s->cfg.block.n_layer);
        return NULL;
    }
    int pos0 = c ? c->len[0] : 0;
    if (check_forward(fn, s, ctx, ids, B, n, pos0) < 0)
        return NULL;
    qkv_tensor *x = embed(s, ctx, ids, B, n, pos0);
    for (int l = 0; l < s->cfg.block.n_layer; l++)
        x = c ? qkv_block_forward_cached(&s->h[l], ctx, x, c, l)
              : qkv_block_forward(&s->h[l], ctx, x, NULL, NULL);
    if (last_only) /* (B,1,C): each row's last position, the only one generation reads */
        x = qkv_slice_axis(ctx->arena, x, 1, n - 1, 1);
    return qkv__result(fn, head(s, ctx, x));
}

qkv_tensor *qkv_stack_forward(const qkv_stack *s, const qkv_ctx *ctx, const int32_t *ids, int B,
                              int T)
{
    return qkv__stack_run("qkv_stack_forward", s, ctx, ids, B, T, NULL, false);
}

qkv_tensor *qkv_stack_loss(const qkv_stack *s, const qkv_ctx *ctx, const int32_t *ids,
                           const int32_t *targets, int B, int T)
{
    const char *fn = "qkv_stack_loss";
    if (qkv__null(fn, "targets", targets))
        return NULL;
    qkv_tensor *logits = qkv_stack_forward(s, ctx, ids, B, T);
    if (!logits)
        return qkv__result(fn, NULL);
    return qkv__result(fn, qkv_cross_entropy(ctx->arena, logits, targets, -1));
}

qkv_tensor *qkv_stack_forward_cached(const qkv_stack *s, const qkv_ctx *ctx, const int32_t *ids,
                                     int B, int n, qkv_kv_cache *c)
{
    const char *fn = "qkv_stack_forward_cached";
    if (qkv__null(fn, "s", s) || qkv__null(fn, "c", c))
        return NULL;
    return qkv__stack_run(fn, s, ctx, ids, B, n, c, false);
}
