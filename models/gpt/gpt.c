/* The character GPT: config, parameters, forward to logits and loss (see qkv/gpt.h). */
#include "nn/internal.h"
#include "tensor/check.h"
#include "train/bytes.h"
#include "internal.h"
#include "models/transformer.h"
#include "qkv/stack.h"

#include <stdio.h>
#include <string.h>

void qkv_gpt_config_pack(const qkv_gpt_config *cfg, uint8_t out[QKV_GPT_CONFIG_BYTES])
{
    if (qkv__null("qkv_gpt_config_pack", "cfg", cfg) ||
        qkv__null("qkv_gpt_config_pack", "out", out))
        return;
    memset(out, 0, QKV_GPT_CONFIG_BYTES);
    const int fields[5] = {cfg->vocab_size, cfg->block_size, cfg->n_layer, cfg->n_head, cfg->n_embd};
    for (int i = 0; i < 5; i++)
        qkv__put_u32(out + 4 * i, (uint32_t)fields[i]);
    qkv__put_f64(out + 20, cfg->dropout);
    /* The first checkpoints hold only no_bias (bit 0): every later option 0. */
    qkv__put_u32(out + 28, qkv__options_word(&cfg->opts));
}

static int check_config(const qkv_gpt_config *c);

static int unpack(qkv_gpt_config *cfg, const void *blob, size_t len)
{
    if (len < QKV_GPT_CONFIG_BYTES)
        return qkv_set_error("gpt config: %zu bytes, expected at least %d", len,
                             QKV_GPT_CONFIG_BYTES);
    const uint8_t *p = blob;
    int *fields[5] = {&cfg->vocab_size, &cfg->block_size, &cfg->n_layer, &cfg->n_head, &cfg->n_embd};
    for (int i = 0; i < 5; i++)
        *fields[i] = qkv__get_size(p + 4 * i);
    cfg->dropout = qkv__get_f64(p + 20);
    if (qkv__options_from_word("gpt", qkv__get_u32(p + 28), &cfg->opts) < 0)
        return -1;
    return check_config(cfg);
}

int qkv_gpt_config_unpack(qkv_gpt_config *cfg, const void *blob, size_t len)
{
    const char *fn = "qkv_gpt_config_unpack";
    if (qkv__null(fn, "cfg", cfg) || qkv__null(fn, "blob", blob))
        return -1;
    return unpack(cfg, blob, len) < 0 ? qkv__fail_in(fn) : 0;
}

/* qkv_gpt_config_check, its messages naming the config ("gpt config: ..."). */
static int check_config(const qkv_gpt_config *c)
{
    if (c->vocab_size < 1 || c->vocab_size > 65536)
        return qkv_set_error("gpt config: vocab_size %d is not in [1, 65536]", c->vocab_size);
    if (c->block_size < 1 || c->block_size > 65536)
        return qkv_set_error("gpt config: block_size %d is not in [1, 65536]", c->block_size);
    return qkv__check_model_sizes("gpt", c->n_layer, c->n_head, c->n_embd, c->dropout, &c->opts);
}

int qkv_gpt_config_check(const qkv_gpt_config *cfg)
{
    if (qkv__null("qkv_gpt_config_check", "cfg", cfg))
        return -1;
    return check_config(cfg) < 0 ? qkv__fail_in("qkv_gpt_config_check") : 0;
}

qkv_gpt *qkv__gpt_declare(const qkv_gpt_config *cfg)
{
    if (qkv__null("qkv_gpt_new", "cfg", cfg))
        return NULL;
    if (check_config(cfg) < 0) {
        qkv__fail_in("qkv_gpt_new");
        return NULL;
    }
    qkv_gpt *m = qkv_calloc(sizeof *m);
    if (!m)
        return NULL;
    m->cfg = *cfg;
    m->block = (qkv_block_config){.n_embd = cfg->n_embd, .n_head = cfg->n_head,
                                  .n_layer = cfg->n_layer, .dropout = (qkv_real)cfg->dropout,
                                  .opts = cfg->opts};
    m->params = qkv_params_new();
    /* The GPT is the public stack under no prefix: its parameters, names and init draws. */
    qkv_stack s;
    qkv_stack_config sc = {.vocab_size = cfg->vocab_size, .block_size = cfg->block_size,
                           .block = m->block};
    if (!m->params || qkv_stack_init(&s, m->params, "", &sc) < 0)
        goto fail;
    m->wte = s.wte, m->wpe = s.wpe, m->h = s.h, m->ln_f = s.ln_f, m->lm_head = s.lm_head;
    return m;
fail:
    qkv_gpt_free(m);
    return NULL;
}

qkv_gpt *qkv_gpt_new(const qkv_gpt_config *cfg, uint64_t seed)
{
    qkv_gpt *m = qkv__gpt_declare(cfg);
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    if (m && qkv_params_alloc(m->params, &rng) < 0) {
        qkv_gpt_free(m);
        return NULL;
    }
    return m;
}

uint64_t qkv__gpt_n_values(const qkv_gpt_config *c)
{
    /* What the model declares, whatever its options: no formula to keep in step with them. */
    qkv_gpt *m = qkv__gpt_declare(c);
    uint64_t n = 0;
    for (int i = 0; m && i < m->params->count; i++)
        n += m->params->items[i].t->size;
    qkv_gpt_free(m);
    return n;
}

void qkv_gpt_free(qkv_gpt *m)
{
    if (!m)
        return;
    qkv_params_free(&m->params);
    qkv_free(m->h);
    qkv_free(m);
}

qkv_tensor *qkv__gpt_embed(const qkv_gpt *m, const qkv_ctx *ctx, const int32_t *idx, int B, int T,
                           int pos0)
{
    if (pos0 + T > m->cfg.block_size) {
        qkv_set_error("%d positions from %d exceed the block size %d", T, pos0,
                      m->cfg.block_size);
        return NULL;
    }
    /* With RoPE the positions enter in attention instead, as rotations. */
    bool rope = m->cfg.opts.positions == QKV_POSITIONS_ROPE;
    return qkv__embed_tokens(&m->wte, rope ? NULL : &m->wpe, ctx, idx, B, T, pos0,
                             (qkv_real)m->cfg.dropout);
}

qkv_tensor *qkv__gpt_head(const qkv_gpt *m, const qkv_ctx *ctx, qkv_tensor *x)
{
    return qkv__lm_head(&m->ln_f, &m->wte, m->cfg.opts.untied ? &m->lm_head : NULL, ctx, x);
}

/* 0 when a forward of m over idx (B,T) in ctx can start; else -1 naming fn. */
static int check_forward(const char *fn, const qkv_gpt *m, const qkv_ctx *ctx, const int32_t *idx,
                         int B, int T)
{
    if (qkv__null(fn, "m", m) || qkv__null(fn, "ctx", ctx) || qkv__null(fn, "idx", idx))
        return -1;
    if (!ctx->arena)
        return qkv_set_error("%s: ctx->arena is NULL: a qkv_ctx needs the arena the forward builds "
                             "in",
                             fn);
    if (B < 1 || T < 1)
        return qkv_set_error("%s: batch %d and length %d must be >= 1", fn, B, T);
    return 0;
}

/* The logits, once check_forward passed. */
static qkv_tensor *logits(const qkv_gpt *m, const qkv_ctx *ctx, const int32_t *idx, int B, int T,
                          qkv_tensor **weights)
{
    qkv_tensor *x = qkv__gpt_embed(m, ctx, idx, B, T, 0);
    if (!x) /* say what is wrong, not that a NULL reached the first block */
        return NULL;
    for (int l = 0; l < m->cfg.n_layer; l++)
        x = qkv_block_forward(&m->h[l], ctx, x, NULL, weights ? &weights[l] : NULL);
    return qkv__gpt_head(m, ctx, x);
}

qkv_tensor *qkv_gpt_logits(const qkv_gpt *m, const qkv_ctx *ctx, const int32_t *idx, int B, int T,
                           qkv_tensor **weights)
{
    const char *fn = "qkv_gpt_logits";
    if (check_forward(fn, m, ctx, idx, B, T) < 0)
        return NULL;
    return qkv__result(fn, logits(m, ctx, idx, B, T, weights));
}

qkv_tensor *qkv_gpt_loss(const qkv_gpt *m, const qkv_ctx *ctx, const int32_t *idx,
                         const int32_t *targets, int B, int T)
{
    const char *fn = "qkv_gpt_loss";
    if (check_forward(fn, m, ctx, idx, B, T) < 0 || qkv__null(fn, "targets", targets))
        return NULL;
    return qkv__result(fn, qkv_cross_entropy(ctx->arena, logits(m, ctx, idx, B, T, NULL), targets, -1));
}
