/* The encoder-decoder: config, parameters, forward to logits and loss,
 * checkpoints (see qkv/seq2seq.h). */
#include <stdio.h>
#include <string.h>

#include "nn/internal.h"
#include "nn/s2s_stack.h"
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
    /* The encoder-decoder stack, declared without a prefix ("enc.wte", ...):
     * its declaration order fixes the order of init draws and of the checkpoint. */
    qkv_s2s_config sc = {.vocab_size = m->vocab_size, .max_src = cfg->max_src,
                         .max_tgt = cfg->max_tgt, .block = m->block};
    qkv_s2s_stack s;
    if (!(m->params = qkv_params_new()) || qkv_s2s_stack_init(&s, m->params, NULL, &sc) < 0)
        goto fail;
    m->enc_wte = s.enc_wte, m->enc_wpe = s.enc_wpe, m->enc = s.enc, m->enc_ln_f = s.enc_ln_f;
    m->dec_wte = s.dec_wte, m->dec_wpe = s.dec_wpe, m->dec = s.dec, m->dec_ln_f = s.dec_ln_f;
    m->lm_head = s.lm_head; /* the blocks are m's now: qkv_seq2seq_free frees them */
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

qkv_s2s_stack qkv__seq2seq_stack(const qkv_seq2seq *m)
{
    qkv_s2s_config sc = {.vocab_size = m->vocab_size,
                         .src_vocab_size = m->vocab_size,
                         .max_src = m->cfg.max_src,
                         .max_tgt = m->cfg.max_tgt,
                         .block = m->block};
    return (qkv_s2s_stack){.cfg = sc,
                           .enc_wte = m->enc_wte,
                           .enc_wpe = m->enc_wpe,
                           .enc = m->enc,
                           .enc_ln_f = m->enc_ln_f,
                           .dec_wte = m->dec_wte,
                           .dec_wpe = m->dec_wpe,
                           .dec = m->dec,
                           .dec_ln_f = m->dec_ln_f,
                           .lm_head = m->lm_head};
}

/* 0 when m is there and B sequences of T positions fit one of its sides of
 * `positions` positions; else -1 naming fn (the stack checks the rest). */
static int check_positions(const char *fn, const qkv_seq2seq *m, int B, int T, int positions)
{
    if (qkv__null(fn, "m", m))
        return -1;
    if (B < 1 || T < 1 || T > positions)
        return qkv_set_error("%s: %d sequences of %d positions from 0; the model has %d positions",
                             fn, B, T, positions);
    return 0;
}

qkv_tensor *qkv_seq2seq_encode(const qkv_seq2seq *m, const qkv_ctx *ctx, const int32_t *src,
                               const uint8_t *src_valid, int B, int Ts)
{
    const char *fn = "qkv_seq2seq_encode";
    if (check_positions(fn, m, B, Ts, m ? m->cfg.max_src : 0) < 0)
        return NULL;
    qkv_s2s_stack s = qkv__seq2seq_stack(m);
    return qkv__s2s_encode(fn, &s, ctx, src, src_valid, B, Ts);
}

qkv_tensor *qkv_seq2seq_decode(const qkv_seq2seq *m, const qkv_ctx *ctx, qkv_tensor *memory,
                               const uint8_t *src_valid, const int32_t *dec_in, int B, int Tt,
                               qkv_tensor **cross_weights)
{
    const char *fn = "qkv_seq2seq_decode";
    if (check_positions(fn, m, B, Tt, m ? m->cfg.max_tgt : 0) < 0 ||
        qkv__null(fn, "dec_in", dec_in))
        return NULL;
    qkv_s2s_stack s = qkv__seq2seq_stack(m);
    return qkv__s2s_decode(fn, &s, ctx, memory, src_valid, dec_in, B, Tt, cross_weights);
}

qkv_tensor *qkv_seq2seq_loss(const qkv_seq2seq *m, const qkv_ctx *ctx, const qkv_seq2seq_batch *b)
{
    const char *fn = "qkv_seq2seq_loss";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "b", b))
        return NULL;
    if (b->Tt < 1) {
        qkv_set_error("%s: the batch has no targets", fn);
        return NULL;
    }
    qkv_s2s_stack s = qkv__seq2seq_stack(m);
    qkv_tensor *memory = qkv__s2s_encode(fn, &s, ctx, b->src, b->src_valid, b->B, b->Ts);
    qkv_tensor *logits = memory ? qkv__s2s_decode(fn, &s, ctx, memory, b->src_valid, b->dec_in,
                                                  b->B, b->Tt, NULL)
                                : NULL;
    return logits ? qkv__result(
                        fn, qkv_cross_entropy(ctx->arena, logits, b->dec_out, QKV_SEQ2SEQ_IGNORE))
                  : NULL;
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
    qkv_ckpt_model model = {
        .kind = "seq2seq", .config = blob, .config_len = sizeof blob, .vocab = &m->chars};
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
