/* Generation from the encoder-decoder: the input encoded once, its memory's
 * keys and values computed once, and the decoder as a qkv_lm for the
 * model-agnostic loop in decode/generate.c (see qkv/seq2seq.h). */
#include <string.h>

#include "tensor/check.h"
#include "internal.h"

/* The encoder-decoder as generation sees it, for B given inputs: the qkv_lm
 * first (so a qkv_lm * is a seq2seq_lm *), then what decoding reads. */
typedef struct seq2seq_lm {
    qkv_lm lm;
    const qkv_seq2seq *m;
    int B;
    qkv_arena *arena;     /* the memory and its keys and values, for the lm's life */
    qkv_tensor *memory;   /* (B,Ts,C): the encoder's output */
    uint8_t *src_valid;   /* (B,Ts) copy of the padding mask, or NULL */
    qkv_tensor **k, **v;  /* each layer's cross-attention keys and values (with the cache) */
    qkv_kv_cache *cache;  /* the decoder's self-attention cache, or NULL */
} seq2seq_lm;

/* The qkv_logits_fn of the decoder: logits (B,1,V) after ids (B,n) at
 * positions pos.. . With the cache only these tokens go through the decoder
 * (pos 0: a new window, an empty cache) and the memory's keys and values are
 * the ones computed once; without, the whole window is decoded again. */
static qkv_tensor *seq2seq_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B,
                                  int n, int pos)
{
    seq2seq_lm *s = model;
    const qkv_seq2seq *m = s->m;
    if (B != s->B) {
        qkv_set_error("seq2seq_logits: %d rows, but the lm was made for %d inputs", B, s->B);
        return NULL;
    }
    qkv_tensor *x;
    if (!s->cache) {
        x = qkv_seq2seq_decode(m, ctx, s->memory, s->src_valid, ids, B, n, NULL); /* (B,n,V) */
        return x ? qkv_slice_axis(ctx->arena, x, 1, n - 1, 1) : NULL;
    }
    if (pos == 0)
        qkv_kv_cache_reset(s->cache);
    x = qkv__seq2seq_dec_embed(m, ctx, ids, B, n, pos);
    for (int l = 0; l < m->cfg.n_layer; l++)
        x = qkv_cross_block_forward_cached(&m->dec[l], ctx, x, s->cache, l, s->k[l], s->v[l],
                                           s->src_valid);
    x = x ? qkv_slice_axis(ctx->arena, x, 1, n - 1, 1) : NULL; /* (B,1,C): each row's last */
    return qkv__seq2seq_head(m, ctx, x);
}

/* Encode src into s's arena, with the cache also every layer's memory keys and values. */
static int encode_once(seq2seq_lm *s, const int32_t *src, int Ts, bool use_cache)
{
    const qkv_seq2seq *m = s->m;
    int L = m->cfg.n_layer;
    qkv_ctx mem = {.arena = s->arena, .train = false, .rng = NULL};
    bool was = qkv_set_grad_enabled(false);
    s->memory = qkv_seq2seq_encode(m, &mem, src, s->src_valid, s->B, Ts);
    s->k = qkv_arena_calloc(s->arena, 2 * (size_t)L * sizeof *s->k);
    s->v = s->k ? s->k + L : NULL;
    int rc = s->memory && s->k ? 0 : -1;
    for (int l = 0; rc == 0 && use_cache && l < L; l++)
        rc = qkv_cross_attn_memory(&m->dec[l].cross, &mem, s->memory, &s->k[l], &s->v[l]);
    qkv_set_grad_enabled(was);
    return rc;
}

qkv_lm *qkv_seq2seq_lm_new(const qkv_seq2seq *m, const int32_t *src, const uint8_t *src_valid,
                           int B, int Ts, bool use_cache)
{
    const char *fn = "qkv_seq2seq_lm_new";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "src", src))
        return NULL;
    seq2seq_lm *s = qkv_calloc(sizeof *s);
    if (!s || !(s->arena = qkv_arena_new((size_t)1 << 20)))
        goto fail;
    s->m = m;
    s->B = B;
    if (src_valid && B > 0 && Ts > 0) {
        if (!(s->src_valid = qkv_arena_alloc(s->arena, (size_t)B * Ts)))
            goto fail;
        memcpy(s->src_valid, src_valid, (size_t)B * Ts);
    }
    if (encode_once(s, src, Ts, use_cache) < 0 ||
        (use_cache && !(s->cache = qkv_kv_cache_new(&m->block, B, m->cfg.max_tgt))))
        goto fail;
    s->lm = (qkv_lm){.model = s, .logits = seq2seq_logits, .vocab_size = m->vocab_size,
                     .context = m->cfg.max_tgt, .cached = use_cache};
    return &s->lm;
fail:
    qkv__fail_in(fn);
    if (s)
        qkv_arena_free(&s->arena);
    qkv_free(s);
    return NULL;
}

void qkv_seq2seq_lm_free(qkv_lm *lm)
{
    if (!lm)
        return;
    if (lm->logits != seq2seq_logits) { /* not ours: freeing it would corrupt the heap */
        qkv_set_error("qkv_seq2seq_lm_free: lm was not made by qkv_seq2seq_lm_new");
        return;
    }
    seq2seq_lm *s = (seq2seq_lm *)lm;
    qkv_kv_cache_free(s->cache);
    qkv_arena_free(&s->arena);
    qkv_free(s);
}
