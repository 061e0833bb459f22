/* The encoder-decoder: config, parameters, forward to logits and loss,
 * checkpoints (see qkv/seq2seq.h). */
#include <stdio.h>
#include <string.h>

#include "nn/internal.h"
#include "tensor/check.h"
#include "train/bytes.h"
#include "internal.h"
#include "models/transformer.h"

enum { N_SIZES = 5 };

void qkv_seq2seq_config_pack(const qkv_seq2seq_config *cfg, uint8_t out[QKV_SEQ2SEQ_CONFIG_BYTES])
{
    if (qkv__null("qkv_seq2seq_config_pack", "cfg", cfg) ||
        qkv__null("qkv_seq2seq_config_pack", "out", out))
        return;
    memset(out, 0, QKV_SEQ2SEQ_CONFIG_BYTES);
    const int sizes[N_SIZES] = {cfg->max_src, cfg->max_tgt, cfg->n_layer, cfg->n_head, cfg->n_embd};
    for (int i = 0; i < N_SIZES; i++)
        qkv__put_u32(out + 4 * i, (uint32_t)sizes[i]);
    qkv__put_f64(out + 4 * N_SIZES, cfg->dropout);
    /* Zero before the options: the older checkpoints read as every option off. */
    qkv__put_u32(out + 4 * N_SIZES + 8, qkv__options_word(&cfg->opts));
}

static int check_config(const qkv_seq2seq_config *c);

int qkv_seq2seq_config_unpack(qkv_seq2seq_config *cfg, const void *blob, size_t len)
{
    const char *fn = "qkv_seq2seq_config_unpack";
    if (qkv__null(fn, "cfg", cfg) || qkv__null(fn, "blob", blob))
        return -1;
    if (len < QKV_SEQ2SEQ_CONFIG_BYTES)
        return qkv_set_error("%s: seq2seq config: %zu bytes, expected at least %d", fn, len,
                             QKV_SEQ2SEQ_CONFIG_BYTES);
    const uint8_t *p = blob;
    int *sizes[N_SIZES] = {&cfg->max_src, &cfg->max_tgt, &cfg->n_layer, &cfg->n_head, &cfg->n_embd};
    for (int i = 0; i < N_SIZES; i++)
        *sizes[i] = qkv__get_size(p + 4 * i);
    cfg->dropout = qkv__get_f64(p + 4 * N_SIZES);
    if (qkv__options_from_word("seq2seq", qkv__get_u32(p + 4 * N_SIZES + 8), &cfg->opts) < 0 ||
        check_config(cfg) < 0)
        return qkv__fail_in(fn);
    return 0;
}

/* qkv_seq2seq_config_check, its messages naming the config ("seq2seq config: ..."). */
static int check_config(const qkv_seq2seq_config *c)
{
    if (c->max_src < 1 || c->max_src > 65536)
        return qkv_set_error("seq2seq config: max_src %d is not in [1, 65536]", c->max_src);
    if (c->max_tgt < 2 || c->max_tgt > 65536)
        return qkv_set_error("seq2seq config: max_tgt %d is not in [2, 65536] (an output and EOS)",
                             c->max_tgt);
    return qkv__check_model_sizes("seq2seq", c->n_layer, c->n_head, c->n_embd, c->dropout,
                                  &c->opts);
}

int qkv_seq2seq_config_check(const qkv_seq2seq_config *cfg)
{
    if (qkv__null("qkv_seq2seq_config_check", "cfg", cfg))
        return -1;
    return check_config(cfg) < 0 ? qkv__fail_in("qkv_seq2seq_config_check") : 0;
}

/* Declare one side's token and position embeddings, "<side>.wte" and
 * "<side>.wpe" (none with rope: the positions enter in attention). */
static int embed_init(qkv_embed *wte, qkv_embed *wpe, qkv_params *p, const char *side, int V,
                      int positions, int C, bool rope)
{
    char name[QKV_PARAM_NAME_MAX];
    snprintf(name, sizeof name, "%s.wte", side);
    if (qkv_embed_init(wte, p, name, V, C, 0.02) < 0)
        return -1;
    snprintf(name, sizeof name, "%s.wpe", side);
    return rope ? 0 : qkv_embed_init(wpe, p, name, positions, C, 0.02);
}

/* The model of cfg over chars with every parameter declared but none
 * allocated: small however large cfg is, so a loader can compare the values
 * a file holds with what the model needs before allocating them. */
static qkv_seq2seq *declare(const qkv_seq2seq_config *cfg, const qkv_tokenizer *chars)
{
    const char *fn = "qkv_seq2seq_new";
    if (qkv__null(fn, "cfg", cfg) || qkv__null(fn, "chars", chars))
        return NULL;
    if (check_config(cfg) < 0) {
        qkv__fail_in(fn);
        return NULL;
    }
    if (chars->size < 1 || chars->size > 256 - QKV_SEQ2SEQ_N_SPECIAL) {
        qkv_set_error("%s: an alphabet of %d characters; it needs 1 to %d", fn, chars->size,
                      256 - QKV_SEQ2SEQ_N_SPECIAL);
        return NULL;
    }
    qkv_seq2seq *m = qkv_calloc(sizeof *m);
    if (!m)
        return NULL;
    m->cfg = *cfg;
    m->chars = *chars;
    m->vocab_size = QKV_SEQ2SEQ_N_SPECIAL + chars->size;
    m->block = (qkv_block_config){.n_embd = cfg->n_embd, .n_head = cfg->n_head,
                                  .n_layer = cfg->n_layer, .dropout = (qkv_real)cfg->dropout,
                                  .opts = cfg->opts};
    int L = cfg->n_layer, C = cfg->n_embd, V = m->vocab_size;
    m->params = qkv_params_new();
    m->enc = qkv_calloc((size_t)L * sizeof *m->enc);
    m->dec = qkv_calloc((size_t)L * sizeof *m->dec);
    if (!m->params || !m->enc || !m->dec)
        goto fail;
    /* The declaration order fixes the order of init draws and of the checkpoint. */
    bool rope = cfg->opts.positions == QKV_POSITIONS_ROPE;
    if (embed_init(&m->enc_wte, &m->enc_wpe, m->params, "enc", V, cfg->max_src, C, rope) < 0)
        goto fail;
    char name[QKV_PARAM_NAME_MAX];
    for (int l = 0; l < L; l++) {
        snprintf(name, sizeof name, "enc.h.%d", l);
        if (qkv_block_init(&m->enc[l], m->params, name, &m->block, false) < 0)
            goto fail;
    }
    if (qkv__norm_init(&m->enc_ln_f, m->params, "enc.ln_f", &m->block) < 0 ||
        embed_init(&m->dec_wte, &m->dec_wpe, m->params, "dec", V, cfg->max_tgt, C, rope) < 0)
        goto fail;
    for (int l = 0; l < L; l++) {
        snprintf(name, sizeof name, "dec.h.%d", l);
        if (qkv_cross_block_init(&m->dec[l], m->params, name, &m->block, C) < 0)
            goto fail;
    }
    if (qkv__norm_init(&m->dec_ln_f, m->params, "dec.ln_f", &m->block) < 0 ||
        (cfg->opts.untied &&
         qkv_linear_init(&m->lm_head, m->params, "dec.lm_head", C, V, false, 0.02) < 0))
        goto fail;
    return m;
fail:
    qkv_seq2seq_free(m);
    return NULL;
}

int qkv__seq2seq_check_holds(const qkv_checkpoint *ck, const qkv_seq2seq_config *cfg,
                             const char *path)
{
    qkv_seq2seq *m = declare(cfg, &ck->vocab);
    if (!m)
        return -1;
    size_t want = 0;
    for (int i = 0; i < m->params->count; i++)
        want += m->params->items[i].t->size;
    qkv_seq2seq_free(m);
    if (want != ck->n_values)
        return qkv_set_error("%s: its config describes a model of %zu parameter values but it "
                             "holds %zu", path, want, ck->n_values);
    return 0;
}

qkv_seq2seq *qkv_seq2seq_new(const qkv_seq2seq_config *cfg, const qkv_tokenizer *chars,
                             uint64_t seed)
{
    qkv_seq2seq *m = declare(cfg, chars);
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    if (m && qkv_params_alloc(m->params, &rng) < 0) {
        qkv_seq2seq_free(m);
        return NULL;
    }
    return m;
}

void qkv_seq2seq_free(qkv_seq2seq *m)
{
    if (!m)
        return;
    qkv_params_free(&m->params);
    qkv_free(m->enc);
    qkv_free(m->dec);
    qkv_free(m);
}

void qkv_seq2seq_zero_cross(qkv_seq2seq *m)
{
    if (qkv__null("qkv_seq2seq_zero_cross", "m", m))
        return;
    for (int l = 0; l < m->cfg.n_layer; l++) {
        const qkv_linear *proj = &m->dec[l].cross.c_proj;
        memset(proj->weight->data, 0, proj->weight->size * sizeof(qkv_real));
        if (proj->bias)
            memset(proj->bias->data, 0, proj->bias->size * sizeof(qkv_real));
    }
}

/* Token plus position embeddings (then dropout) of ids (B,T) at positions
 * pos0.., on a side of `positions` positions -> (B,T,C). With rope the
 * positions enter in attention instead, as rotations. */
static qkv_tensor *embed(const qkv_seq2seq *m, const qkv_ctx *ctx, const qkv_embed *wte,
                         const qkv_embed *wpe, int positions, const int32_t *ids, int B, int T,
                         int pos0)
{
    if (B < 1 || T < 1 || pos0 + T > positions) {
        qkv_set_error("%d sequences of %d positions from %d; the model has %d positions",
                      B, T, pos0, positions);
        return NULL;
    }
    bool rope = m->cfg.opts.positions == QKV_POSITIONS_ROPE;
    return qkv__embed_tokens(wte, rope ? NULL : wpe, ctx, ids, B, T, pos0,
                             (qkv_real)m->cfg.dropout);
}

/* 0 when m and ctx can run a forward over ids (named what); else -1 naming fn. */
static int check_forward(const char *fn, const qkv_seq2seq *m, const qkv_ctx *ctx, const void *ids,
                         const char *what)
{
    if (qkv__null(fn, "m", m) || qkv__null(fn, "ctx", ctx) || qkv__null(fn, what, ids))
        return -1;
    if (!ctx->arena)
        return qkv_set_error("%s: ctx->arena is NULL: a qkv_ctx needs the arena the forward builds "
                             "in",
                             fn);
    return 0;
}

/* The memory, once check_forward passed. */
static qkv_tensor *encode(const qkv_seq2seq *m, const qkv_ctx *ctx, const int32_t *src,
                          const uint8_t *src_valid, int B, int Ts)
{
    qkv_tensor *x = embed(m, ctx, &m->enc_wte, &m->enc_wpe, m->cfg.max_src, src, B, Ts, 0);
    if (!x) /* say what is wrong, not that a NULL reached the first block */
        return NULL;
    for (int l = 0; l < m->cfg.n_layer; l++)
        x = qkv_block_forward(&m->enc[l], ctx, x, src_valid, NULL);
    return qkv_ln_forward(&m->enc_ln_f, ctx, x);
}

qkv_tensor *qkv_seq2seq_encode(const qkv_seq2seq *m, const qkv_ctx *ctx, const int32_t *src,
                               const uint8_t *src_valid, int B, int Ts)
{
    const char *fn = "qkv_seq2seq_encode";
    if (check_forward(fn, m, ctx, src, "src") < 0)
        return NULL;
    return qkv__result(fn, encode(m, ctx, src, src_valid, B, Ts));
}

qkv_tensor *qkv__seq2seq_dec_embed(const qkv_seq2seq *m, const qkv_ctx *ctx, const int32_t *ids,
                                   int B, int T, int pos0)
{
    return embed(m, ctx, &m->dec_wte, &m->dec_wpe, m->cfg.max_tgt, ids, B, T, pos0);
}

qkv_tensor *qkv__seq2seq_head(const qkv_seq2seq *m, const qkv_ctx *ctx, qkv_tensor *x)
{
    return qkv__lm_head(&m->dec_ln_f, &m->dec_wte, m->cfg.opts.untied ? &m->lm_head : NULL, ctx,
                        x);
}

/* The logits, once check_forward passed. */
static qkv_tensor *decode(const qkv_seq2seq *m, const qkv_ctx *ctx, qkv_tensor *memory,
                          const uint8_t *src_valid, const int32_t *dec_in, int B, int Tt,
                          qkv_tensor **cross_weights)
{
    qkv_tensor *x = qkv__seq2seq_dec_embed(m, ctx, dec_in, B, Tt, 0);
    if (!x)
        return NULL;
    for (int l = 0; l < m->cfg.n_layer; l++)
        x = qkv_cross_block_forward(&m->dec[l], ctx, x, memory, src_valid, NULL,
                                    cross_weights ? &cross_weights[l] : NULL);
    return qkv__seq2seq_head(m, ctx, x);
}

qkv_tensor *qkv_seq2seq_decode(const qkv_seq2seq *m, const qkv_ctx *ctx, qkv_tensor *memory,
                               const uint8_t *src_valid, const int32_t *dec_in, int B, int Tt,
                               qkv_tensor **cross_weights)
{
    const char *fn = "qkv_seq2seq_decode";
    if (check_forward(fn, m, ctx, dec_in, "dec_in") < 0 || qkv__check_input(fn, "memory", memory) < 0)
        return NULL;
    return qkv__result(fn, decode(m, ctx, memory, src_valid, dec_in, B, Tt, cross_weights));
}

qkv_tensor *qkv_seq2seq_loss(const qkv_seq2seq *m, const qkv_ctx *ctx, const qkv_seq2seq_batch *b)
{
    const char *fn = "qkv_seq2seq_loss";
    if (check_forward(fn, m, ctx, b, "b") < 0)
        return NULL;
    if (b->Tt < 1) {
        qkv_set_error("%s: the batch has no targets", fn);
        return NULL;
    }
    qkv_tensor *memory = encode(m, ctx, b->src, b->src_valid, b->B, b->Ts);
    qkv_tensor *logits = decode(m, ctx, memory, b->src_valid, b->dec_in, b->B, b->Tt, NULL);
    return qkv__result(fn, qkv_cross_entropy(ctx->arena, logits, b->dec_out, QKV_SEQ2SEQ_IGNORE));
}

int qkv_seq2seq_save(const qkv_seq2seq *m, const char *path, int64_t step)
{
    const char *fn = "qkv_seq2seq_save";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "path", path))
        return -1;
    if (step < 0)
        return qkv_set_error("%s: step %lld is negative", fn, (long long)step);
    uint8_t blob[QKV_SEQ2SEQ_CONFIG_BYTES];
    qkv_seq2seq_config_pack(&m->cfg, blob);
    qkv_ckpt_model model = {.kind = "seq2seq", .config = blob, .config_len = sizeof blob,
                            .vocab = &m->chars};
    qkv_ckpt_progress prog = {.step = step};
    return qkv_checkpoint_save(path, &model, m->params, NULL, &prog) < 0 ? qkv__fail_in(fn) : 0;
}

qkv_seq2seq *qkv_seq2seq_load(const char *path)
{
    if (qkv__null("qkv_seq2seq_load", "path", path))
        return NULL;
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "seq2seq");
    if (!ck) {
        qkv__fail_in("qkv_seq2seq_load");
        return NULL;
    }
    qkv_seq2seq_config cfg;
    qkv_seq2seq *m = NULL;
    if (qkv_seq2seq_config_unpack(&cfg, ck->config, ck->config_len) == 0 &&
        qkv__seq2seq_check_holds(ck, &cfg, path) == 0 && (m = qkv_seq2seq_new(&cfg, &ck->vocab, 0)) &&
        qkv_checkpoint_load(ck, m->params, NULL, NULL) < 0) {
        qkv_seq2seq_free(m);
        m = NULL;
    }
    qkv_checkpoint_close(ck);
    if (!m)
        qkv__fail_in("qkv_seq2seq_load");
    return m;
}
