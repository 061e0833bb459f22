/* The public encoder-decoder stack: source and target embeddings, encoder
 * blocks, cross blocks, the norms and the head, declared by one call and run
 * by one (see qkv/stack.h). */
#include "internal.h"
#include "s2s_stack.h"
#include "stack.h"

#include <stdio.h>
#include <string.h>

/* 0 when cfg describes an encoder-decoder; else -1 naming fn and the field. */
static int check_config(const char *fn, const qkv_s2s_config *cfg)
{
    const struct {
        const char *name;
        int value, lo, hi;
    } sizes[] = {{"vocab_size", cfg->vocab_size, 1, 1 << 24},
                 {"src_vocab_size", cfg->src_vocab_size, 0, 1 << 24},
                 {"max_src", cfg->max_src, 1, 1 << 20},
                 {"max_tgt", cfg->max_tgt, 1, 1 << 20}};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        if (sizes[i].value < sizes[i].lo || sizes[i].value > sizes[i].hi)
            return qkv_set_error("%s: cfg->%s %d is not in [%d, %d]", fn, sizes[i].name,
                                 sizes[i].value, sizes[i].lo, sizes[i].hi);
    return qkv__check_config(fn, "cfg->block", &cfg->block);
}

/* One side's token and position embeddings, "<side>.wte" and "<side>.wpe"
 * (no position table with rope: the positions enter in attention). */
static int declare_embeds(qkv_embed *wte, qkv_embed *wpe, qkv_params *p, const char *side, int V,
                          int positions, const qkv_block_config *b)
{
    char name[QKV_PARAM_NAME_MAX];
    qkv_real std = qkv__init_std(b);
    if (qkv__nn_name(name, side, "wte") < 0 || qkv_embed_init(wte, p, name, V, b->n_embd, std) < 0)
        return -1;
    return b->opts.positions == QKV_POSITIONS_ROPE ||
                   (qkv__nn_name(name, side, "wpe") == 0 &&
                    qkv_embed_init(wpe, p, name, positions, b->n_embd, std) == 0)
               ? 0
               : -1;
}

/* The encoder's modules into s, named "<enc>.*". */
static int declare_encoder(qkv_s2s_stack *s, qkv_params *p, const char *enc)
{
    const qkv_block_config *b = &s->cfg.block;
    char name[QKV_PARAM_NAME_MAX], sub[16];
    if (declare_embeds(&s->enc_wte, &s->enc_wpe, p, enc, s->cfg.src_vocab_size, s->cfg.max_src, b) <
        0)
        return -1;
    for (int l = 0; l < b->n_layer; l++) {
        snprintf(sub, sizeof sub, "h.%d", l);
        if (qkv__nn_name(name, enc, sub) < 0 || qkv_block_init(&s->enc[l], p, name, b, false) < 0)
            return -1;
    }
    return qkv__nn_name(name, enc, "ln_f") < 0 ? -1 : qkv__norm_init(&s->enc_ln_f, p, name, b);
}

/* The decoder's modules into s, named "<dec>.*". */
static int declare_decoder(qkv_s2s_stack *s, qkv_params *p, const char *dec)
{
    const qkv_block_config *b = &s->cfg.block;
    char name[QKV_PARAM_NAME_MAX], sub[16];
    if (declare_embeds(&s->dec_wte, &s->dec_wpe, p, dec, s->cfg.vocab_size, s->cfg.max_tgt, b) < 0)
        return -1;
    for (int l = 0; l < b->n_layer; l++) {
        snprintf(sub, sizeof sub, "h.%d", l);
        if (qkv__nn_name(name, dec, sub) < 0 ||
            qkv_cross_block_init(&s->dec[l], p, name, b, b->n_embd) < 0)
            return -1;
    }
    if (qkv__nn_name(name, dec, "ln_f") < 0 || qkv__norm_init(&s->dec_ln_f, p, name, b) < 0)
        return -1;
    return b->opts.untied && (qkv__nn_name(name, dec, "lm_head") < 0 ||
                              qkv_linear_init(&s->lm_head, p, name, b->n_embd, s->cfg.vocab_size,
                                              false, qkv__init_std(b)) < 0)
               ? -1
               : 0;
}

int qkv_s2s_stack_init(qkv_s2s_stack *s, qkv_params *p, const char *prefix,
                       const qkv_s2s_config *cfg)
{
    const char *fn = "qkv_s2s_stack_init";
    if (qkv__null(fn, "s", s) || qkv__null(fn, "p", p) || qkv__null(fn, "cfg", cfg) ||
        check_config(fn, cfg) < 0)
        return -1;
    memset(s, 0, sizeof *s);
    s->cfg = *cfg;
    s->cfg.block.n_layer = qkv__n_layer(&cfg->block);
    if (!s->cfg.src_vocab_size)
        s->cfg.src_vocab_size = cfg->vocab_size;
    s->enc = qkv_calloc((size_t)s->cfg.block.n_layer * sizeof *s->enc);
    s->dec = qkv_calloc((size_t)s->cfg.block.n_layer * sizeof *s->dec);
    char enc[QKV_PARAM_NAME_MAX], dec[QKV_PARAM_NAME_MAX];
    if (!s->enc || !s->dec || qkv__nn_name(enc, prefix, "enc") < 0 ||
        qkv__nn_name(dec, prefix, "dec") < 0 || declare_encoder(s, p, enc) < 0 ||
        declare_decoder(s, p, dec) < 0) {
        qkv_s2s_stack_free(s);
        return qkv__fail_in(fn);
    }
    return 0;
}

void qkv_s2s_stack_free(qkv_s2s_stack *s)
{
    if (!s)
        return;
    qkv_free(s->enc);
    qkv_free(s->dec);
    s->enc = NULL;
    s->dec = NULL;
}

/* 0 when s and ctx can run a forward; else -1 naming fn. */
static int check_stack(const char *fn, const qkv_s2s_stack *s, const qkv_ctx *ctx)
{
    if (qkv__check_forward(fn, s, ctx, s ? s->enc_wte.weight : NULL) < 0)
        return -1;
    if (!s->enc || !s->dec)
        return qkv_set_error("%s: s has no blocks (freed, or never made by qkv_s2s_stack_init)",
                             fn);
    return qkv__check_dropout(fn, ctx, s->cfg.block.dropout);
}

/* One side's embeddings of ids (B,n) at positions pos0.. (none with rope). */
static qkv_tensor *embed(const qkv_s2s_stack *s, const qkv_ctx *ctx, const qkv_embed *wte,
                         const qkv_embed *wpe, const int32_t *ids, int B, int n, int pos0)
{
    bool rope = s->cfg.block.opts.positions == QKV_POSITIONS_ROPE;
    return qkv__embed_tokens(wte, rope ? NULL : wpe, ctx, ids, B, n, pos0, s->cfg.block.dropout);
}

/* The final norm and the head of x (B,T,C). */
static qkv_tensor *head(const qkv_s2s_stack *s, const qkv_ctx *ctx, qkv_tensor *x)
{
    return qkv__lm_head(&s->dec_ln_f, &s->dec_wte, s->cfg.block.opts.untied ? &s->lm_head : NULL,
                        ctx, x);
}

qkv_tensor *qkv__s2s_encode(const char *fn, const qkv_s2s_stack *s, const qkv_ctx *ctx,
                            const int32_t *src, const uint8_t *src_valid, int B, int Ts)
{
    if (check_stack(fn, s, ctx) < 0 || qkv__check_ids(fn, "src", "Ts", "max_src", src, B, Ts, 0,
                                                      s->cfg.max_src, s->cfg.src_vocab_size) < 0)
        return NULL;
    qkv_tensor *x = embed(s, ctx, &s->enc_wte, &s->enc_wpe, src, B, Ts, 0);
    for (int l = 0; l < s->cfg.block.n_layer; l++)
        x = qkv_block_forward(&s->enc[l], ctx, x, src_valid, NULL);
    return qkv__result(fn, qkv_ln_forward(&s->enc_ln_f, ctx, x));
}

qkv_tensor *qkv__s2s_decode(const char *fn, const qkv_s2s_stack *s, const qkv_ctx *ctx,
                            qkv_tensor *memory, const uint8_t *src_valid, const int32_t *ids, int B,
                            int Tt, qkv_tensor **cross_weights)
{
    if (check_stack(fn, s, ctx) < 0 || qkv__check_input(fn, "memory", memory) < 0 ||
        qkv__check_ids(fn, "ids", "Tt", "max_tgt", ids, B, Tt, 0, s->cfg.max_tgt,
                       s->cfg.vocab_size) < 0)
        return NULL;
    qkv_tensor *x = embed(s, ctx, &s->dec_wte, &s->dec_wpe, ids, B, Tt, 0);
    for (int l = 0; l < s->cfg.block.n_layer; l++)
        x = qkv_cross_block_forward(&s->dec[l], ctx, x, memory, src_valid, NULL,
                                    cross_weights ? &cross_weights[l] : NULL);
    return qkv__result(fn, head(s, ctx, x));
}

qkv_tensor *qkv__s2s_decode_cached(const char *fn, const qkv_s2s_stack *s, const qkv_ctx *ctx,
                                   const qkv_s2s_memory *mem, const int32_t *ids, int B, int n,
                                   qkv_kv_cache *c, bool last_only)
{
    if (check_stack(fn, s, ctx) < 0 || qkv__null(fn, "mem", mem) || qkv__null(fn, "c", c))
        return NULL;
    const qkv_block_config *b = &s->cfg.block, *mb = &mem->s->cfg.block;
    if (mb->n_layer != b->n_layer || mb->n_embd != b->n_embd) {
        qkv_set_error("%s: mem was encoded by a stack of %d layers of width %d, s has %d of %d", fn,
                      mb->n_layer, mb->n_embd, b->n_layer, b->n_embd);
        return NULL;
    }
    if (mem->B != B || c->batch != B || c->n_layer != s->cfg.block.n_layer) {
        qkv_set_error("%s: B %d, but mem holds %d rows and c %d rows of %d layers (s has %d)", fn,
                      B, mem->B, c->batch, c->n_layer, s->cfg.block.n_layer);
        return NULL;
    }
    int pos0 = c->len[0];
    if (qkv__check_ids(fn, "ids", "n", "max_tgt", ids, B, n, pos0, s->cfg.max_tgt,
                       s->cfg.vocab_size) < 0)
        return NULL;
    qkv_tensor *x = embed(s, ctx, &s->dec_wte, &s->dec_wpe, ids, B, n, pos0);
    for (int l = 0; l < s->cfg.block.n_layer; l++)
        x = qkv_cross_block_forward_cached(&s->dec[l], ctx, x, c, l, mem->k[l], mem->v[l],
                                           mem->src_valid);
    if (last_only) /* (B,1,C): each row's last position, the only one generation reads */
        x = qkv_slice_axis(ctx->arena, x, 1, n - 1, 1);
    return qkv__result(fn, head(s, ctx, x));
}

qkv_tensor *qkv_s2s_stack_encode(const qkv_s2s_stack *s, const qkv_ctx *ctx, const int32_t *src,
                                 const uint8_t *src_valid, int B, int Ts)
{
    return qkv__s2s_encode("qkv_s2s_stack_encode", s, ctx, src, src_valid, B, Ts);
}

qkv_tensor *qkv_s2s_stack_forward(const qkv_s2s_stack *s, const qkv_ctx *ctx, const int32_t *src,
                                  const uint8_t *src_valid, int Ts, const int32_t *ids, int B,
                                  int Tt)
{
    const char *fn = "qkv_s2s_stack_forward";
    qkv_tensor *memory = qkv__s2s_encode(fn, s, ctx, src, src_valid, B, Ts);
    return memory ? qkv__s2s_decode(fn, s, ctx, memory, src_valid, ids, B, Tt, NULL) : NULL;
}

qkv_tensor *qkv_s2s_stack_loss(const qkv_s2s_stack *s, const qkv_ctx *ctx, const int32_t *src,
                               const uint8_t *src_valid, int Ts, const int32_t *ids,
                               const int32_t *targets, int B, int Tt)
{
    const char *fn = "qkv_s2s_stack_loss";
    if (qkv__null(fn, "targets", targets))
        return NULL;
    qkv_tensor *memory = qkv__s2s_encode(fn, s, ctx, src, src_valid, B, Ts);
    qkv_tensor *logits = memory ? qkv__s2s_decode(fn, s, ctx, memory, src_valid, ids, B, Tt, NULL)
                                : NULL;
    return logits ? qkv__result(fn, qkv_cross_entropy(ctx->arena, logits, targets, -1)) : NULL;
}

qkv_tensor *qkv_s2s_stack_forward_cached(const qkv_s2s_stack *s, const qkv_ctx *ctx,
                                         const qkv_s2s_memory *mem, const int32_t *ids, int B,
                                         int n, qkv_kv_cache *c)
{
    return qkv__s2s_decode_cached("qkv_s2s_stack_forward_cached", s, ctx, mem, ids, B, n, c, false);
}
