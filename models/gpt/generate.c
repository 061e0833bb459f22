/* Generation from the GPT, with or without its key/value cache: the GPT's
 * forward as a qkv_lm for the model-agnostic loop in decode/generate.c
 * (see qkv/gpt.h). */
#include "tensor/check.h"
#include "decode/decode.h"
#include "internal.h"

/* A GPT as generation sees it: the qkv_lm (first, so a qkv_lm * is a
 * gpt_lm *), the model and, when used, its cache for cache_rows rows. */
typedef struct gpt_lm {
    qkv_lm lm;
    const qkv_gpt *m;
    bool use_cache;
    qkv_kv_cache *cache; /* NULL until the first window, and without a cache */
    int cache_rows;
} gpt_lm;

/* The qkv_logits_fn of the GPT: logits (B,1,V) after ids (B,n) at positions
 * pos.. . With a cache only these tokens go through the blocks and the
 * earlier ones' keys and values come from the cache (pos 0: a new window, an
 * empty cache, made anew when B changes). Only the last position goes
 * through the head: the others' logits would not be used. */
static qkv_tensor *gpt_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B, int n,
                              int pos)
{
    gpt_lm *g = model;
    if (g->use_cache && pos == 0 && (!g->cache || g->cache_rows != B)) {
        qkv_kv_cache_free(g->cache);
        g->cache_rows = B;
        if (!(g->cache = qkv_kv_cache_new(&g->m->block, B, g->m->cfg.block_size)))
            return NULL;
    }
    if (g->use_cache && pos == 0)
        qkv_kv_cache_reset(g->cache);
    qkv_tensor *x = qkv__gpt_embed(g->m, ctx, ids, B, n, pos);
    for (int l = 0; l < g->m->cfg.n_layer; l++)
        x = g->use_cache ? qkv_block_forward_cached(&g->m->h[l], ctx, x, g->cache, l)
                         : qkv_block_forward(&g->m->h[l], ctx, x, NULL, NULL);
    x = qkv_slice_axis(ctx->arena, x, 1, n - 1, 1); /* (B,1,C): each row's last position */
    return qkv__gpt_head(g->m, ctx, x);
}

qkv_lm *qkv_gpt_lm_new(const qkv_gpt *m, bool use_cache)
{
    if (qkv__null("qkv_gpt_lm_new", "m", m))
        return NULL;
    gpt_lm *g = qkv_calloc(sizeof *g);
    if (!g) {
        qkv__fail_in("qkv_gpt_lm_new");
        return NULL;
    }
    g->m = m;
    g->use_cache = use_cache;
    g->lm = (qkv_lm){.model = g, .logits = gpt_logits, .vocab_size = m->cfg.vocab_size,
                     .context = m->cfg.block_size, .cached = use_cache};
    return &g->lm;
}

void qkv_gpt_lm_free(qkv_lm *lm)
{
    if (!lm)
        return;
    if (lm->logits != gpt_logits) { /* not ours: freeing it would corrupt the heap */
        qkv_set_error("qkv_gpt_lm_free: lm was not made by qkv_gpt_lm_new");
        return;
    }
    gpt_lm *g = (gpt_lm *)lm;
    qkv_kv_cache_free(g->cache);
    qkv_free(g);
}

int qkv_gpt_generate(const qkv_gpt *m, const int32_t *prompt, int n_prompt, int n_new,
                     const qkv_sample_opts *opts, qkv_rng *rng, bool use_cache, qkv_emit_fn emit,
                     void *ud)
{
    const char *fn = "qkv_gpt_generate";
    if (qkv__null(fn, "m", m))
        return -1;
    qkv_lm *lm = qkv_gpt_lm_new(m, use_cache);
    if (!lm)
        return qkv__fail_in(fn);
    int rc = qkv__generate(fn, lm, prompt, n_prompt, n_new, opts, rng, emit, ud);
    qkv_gpt_lm_free(lm);
    return rc;
}
