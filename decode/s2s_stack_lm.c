/* Generation from an encoder-decoder stack: the sources encoded once, the
 * decoder as a qkv_lm for the loop in generate.c, with or without its
 * key/value cache (see qkv/stack.h). The built-in seq2seq generates through
 * it too (models/seq2seq/generate.c). */
#include "decode.h"
#include "nn/s2s_stack.h"
#include "tensor/check.h"

/* The decoder as generation sees it: the qkv_lm (first, so a qkv_lm * is an
 * s2s_lm *), the stack's modules, the encoded sources and, when used, the cache. */
typedef struct s2s_lm {
    qkv_lm lm;
    qkv_s2s_stack s;     /* a copy of the handle: the blocks and parameters are the owner's */
    const char *fn;      /* the function that made it, named in the forward's messages */
    qkv_s2s_memory *mem; /* the sources, their memory and its keys and values */
    qkv_kv_cache *cache; /* the decoder's self-attention cache, or NULL */
} s2s_lm;

/* The qkv_logits_fn of the decoder: logits (B,1,V) after ids (B,n) at
 * positions pos.. . With the cache only these tokens go through the decoder
 * (pos 0: a new window, an empty cache) over the memory's keys and values
 * computed once; without, the whole window is decoded again over the memory. */
static qkv_tensor *s2s_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B, int n,
                              int pos)
{
    s2s_lm *g = model;
    if (B != g->mem->B) {
        qkv_set_error("%s: %d rows, but the lm was made for %d inputs", g->fn, B, g->mem->B);
        return NULL;
    }
    if (!g->cache) {
        qkv_tensor *x = qkv__s2s_decode(g->fn, &g->s, ctx, g->mem->memory, g->mem->src_valid, ids,
                                        B, n, NULL); /* (B,n,V) */
        return x ? qkv_slice_axis(ctx->arena, x, 1, n - 1, 1) : NULL;
    }
    if (pos == 0)
        qkv_kv_cache_reset(g->cache);
    return qkv__s2s_decode_cached(g->fn, &g->s, ctx, g->mem, ids, B, n, g->cache, true);
}

qkv_lm *qkv__s2s_lm_new(const char *fn, const qkv_s2s_stack *s, const int32_t *src,
                        const uint8_t *src_valid, int B, int Ts, bool use_cache)
{
    s2s_lm *g = qkv_calloc(sizeof *g);
    if (!g) {
        qkv__fail_in(fn);
        return NULL;
    }
    g->s = *s;
    g->fn = fn;
    if (!(g->mem = qkv__s2s_memory_new(fn, &g->s, src, src_valid, B, Ts)) ||
        (use_cache && !(g->cache = qkv_kv_cache_new(&s->cfg.block, B, s->cfg.max_tgt)))) {
        qkv__fail_in(fn);
        qkv_s2s_memory_free(g->mem);
        qkv_free(g);
        return NULL;
    }
    g->lm = (qkv_lm){.model = g,
                     .logits = s2s_logits,
                     .vocab_size = s->cfg.vocab_size,
                     .context = s->cfg.max_tgt,
                     .cached = use_cache};
    return &g->lm;
}

qkv_lm *qkv_s2s_stack_lm_new(const qkv_s2s_stack *s, const int32_t *src, const uint8_t *src_valid,
                             int B, int Ts, bool use_cache)
{
    const char *fn = "qkv_s2s_stack_lm_new";
    if (qkv__null(fn, "s", s))
        return NULL;
    if (!s->enc || !s->dec || !s->dec_wte.weight) {
        qkv_set_error("%s: s was not made by qkv_s2s_stack_init (or was freed)", fn);
        return NULL;
    }
    return qkv__s2s_lm_new(fn, s, src, src_valid, B, Ts, use_cache);
}

void qkv__s2s_lm_free(const char *fn, const char *made_by, qkv_lm *lm)
{
    if (!lm)
        return;
    if (lm->logits != s2s_logits) { /* not ours: freeing it would corrupt the heap */
        qkv_set_error("%s: lm was not made by %s", fn, made_by);
        return;
    }
    s2s_lm *g = (s2s_lm *)lm;
    qkv_kv_cache_free(g->cache);
    qkv_s2s_memory_free(g->mem);
    qkv_free(g);
}

void qkv_s2s_stack_lm_free(qkv_lm *lm)
{
    qkv__s2s_lm_free("qkv_s2s_stack_lm_free", "qkv_s2s_stack_lm_new", lm);
}
