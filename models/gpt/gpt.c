/* The character GPT: config, parameters, forward to logits and loss (see qkv/gpt.h). */
#include "tensor/check.h"
#include "train/bytes.h"
#include "internal.h"
#include "models/transformer.h"

#include <stdio.h>
#include <string.h>

/* The flag word's bits, in order: the first checkpoints hold only no_bias
 * (0 or 1), which reads as every later option off. */
enum { N_FLAGS = 6 };
static const char *const flag_names[N_FLAGS] = {"no_bias", "rope",    "rmsnorm",
                                                "relu2",   "qk_norm", "untied"};

/* The config's flags, in flag_names' order. */
static void flag_fields(const qkv_gpt_config *cfg, bool *out[N_FLAGS])
{
    qkv_gpt_config *c = (qkv_gpt_config *)cfg;
    bool *f[N_FLAGS] = {&c->no_bias, &c->rope, &c->rmsnorm, &c->relu2, &c->qk_norm, &c->untied};
    memcpy(out, f, sizeof f);
}

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
    bool *flags[N_FLAGS];
    flag_fields(cfg, flags);
    uint32_t word = 0;
    for (int i = 0; i < N_FLAGS; i++)
        word |= (uint32_t)*flags[i] << i;
    qkv__put_u32(out + 28, word);
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
    uint32_t word = qkv__get_u32(p + 28);
    if (word >> N_FLAGS)
        return qkv_set_error("gpt config: the flag word is 0x%x; this qkv knows bits 0-%d (%s..%s)",
                             word, N_FLAGS - 1, flag_names[0], flag_names[N_FLAGS - 1]);
    bool *flags[N_FLAGS];
    flag_fields(cfg, flags);
    for (int i = 0; i < N_FLAGS; i++)
        *flags[i] = (word >> i) & 1;
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
    if (qkv__check_model_sizes("gpt", c->n_layer, c->n_head, c->n_embd, c->dropout) < 0)
        return -1;
    if (c->rope && (c->n_embd / c->n_head) % 2 != 0)
        return qkv_set_error("gpt config: rope needs an even head size, not %d (n_embd %d / "
                             "n_head %d)", c->n_embd / c->n_head, c->n_embd, c->n_head);
    return 0;
}

int qkv_gpt_config_check(const qkv_gpt_config *cfg)
{
    if (qkv__null("qkv_gpt_config_check", "cfg", cfg))
        return -1;
    return check_config(cfg) < 0 ? qkv__fail_in("qkv_gpt_config_check") : 0;
}

qkv_gpt *qkv_gpt_new(const qkv_gpt_config *cfg, uint64_t seed)
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
                                  .bias = !cfg->no_bias, .rmsnorm = cfg->rmsnorm,
                                  .relu2 = cfg->relu2, .rope = cfg->rope,
                                  .qk_norm = cfg->qk_norm};
    m->params = qkv_params_new();
    m->h = qkv_calloc((size_t)cfg->n_layer * sizeof *m->h);
    if (!m->params || !m->h)
        goto fail;
    /* Declaration order is nanoGPT's; it fixes the order of init draws and of the checkpoint. */
    if (qkv_embed_init(&m->wte, m->params, "wte", cfg->vocab_size, cfg->n_embd, 0.02) < 0 ||
        (!cfg->rope &&
         qkv_embed_init(&m->wpe, m->params, "wpe", cfg->block_size, cfg->n_embd, 0.02) < 0))
        goto fail;
    for (int l = 0; l < cfg->n_layer; l++) {
        char name[16];
        snprintf(name, sizeof name, "h.%d", l);
        if (qkv_block_init(&m->h[l], m->params, name, &m->block, true) < 0)
            goto fail;
    }
    if ((cfg->rmsnorm ? qkv_rmsnorm_init(&m->ln_f, m->params, "ln_f", cfg->n_embd)
                      : qkv_ln_init(&m->ln_f, m->params, "ln_f", cfg->n_embd, !cfg->no_bias)) < 0)
        goto fail;
    if (cfg->untied && qkv_linear_init(&m->lm_head, m->params, "lm_head", cfg->n_embd,
                                       cfg->vocab_size, false, 0.02) < 0)
        goto fail;
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    if (qkv_params_alloc(m->params, &rng) < 0)
        goto fail;
    return m;
fail:
    qkv_gpt_free(m);
    return NULL;
}

uint64_t qkv__gpt_n_values(const qkv_gpt_config *c)
{
    /* wte and wpe (none with rope); per block two norms (C each), c_attn
     * (3C·C), the attention's c_proj (C·C), c_fc (4C·C), the MLP's c_proj
     * (4C·C), with qk_norm two scales (D each); ln_f (C); lm_head (V·C) when
     * untied. With biases, another 3C + C + 4C + C per block for the Linears
     * and, for LayerNorms (RMSNorm has none), 2C per block and C for ln_f.
     * Exact in 64 bits for every config qkv_gpt_config_check accepts. */
    uint64_t C = (uint64_t)c->n_embd, V = (uint64_t)c->vocab_size, D = C / (uint64_t)c->n_head;
    uint64_t bias = c->no_bias ? 0 : 1, ln_bias = bias && !c->rmsnorm;
    uint64_t pos = c->rope ? 0 : (uint64_t)c->block_size;
    uint64_t block = 12 * C * C + 2 * C + bias * 9 * C + ln_bias * 2 * C + (c->qk_norm ? 2 * D : 0);
    return (V + pos) * C + (uint64_t)c->n_layer * block + C + ln_bias * C +
           (c->untied ? V * C : 0);
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
        qkv_set_error("gpt: %d positions from %d exceed the block size %d", T, pos0,
                      m->cfg.block_size);
        return NULL;
    }
    /* With RoPE the positions enter in attention instead, as rotations. */
    return qkv__embed_tokens(&m->wte, m->cfg.rope ? NULL : &m->wpe, ctx, idx, B, T, pos0,
                             (qkv_real)m->cfg.dropout);
}

qkv_tensor *qkv__gpt_head(const qkv_gpt *m, const qkv_ctx *ctx, qkv_tensor *x)
{
    if (m->cfg.untied)
        return qkv_linear_forward(&m->lm_head, ctx, qkv_ln_forward(&m->ln_f, ctx, x));
    return qkv__tied_head(&m->ln_f, &m->wte, ctx, x);
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
