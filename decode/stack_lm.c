/* Generation from a stack, with or without a key/value cache: the stack's
 * forward as a qkv_lm for the loop in generate.c (see qkv/stack.h). The
 * built-in GPT generates through it too (models/gpt/generate.c). */
#include "decode.h"
#include "nn/stack.h"
#include "tensor/check.h"

/* A stack as generation sees it: the qkv_lm (first, so a qkv_lm * is a
 * stack_lm *), the stack's modules and, when used, its cache for cache_rows rows. */
typedef struct stack_lm {
    qkv_lm lm;
    qkv_stack s;         /* a copy of the handle: the blocks and parameters are the owner's */
    const char *fn;      /* the function that made it, named in the forward's messages */
    bool use_cache;
    qkv_kv_cache *cache; /* NULL until the first window, and without a cache */
    int cache_rows;
} stack_lm;

/* The qkv_logits_fn of a stack: logits (B,1,V) after ids (B,n) at positions
 * pos.. . With a cache only these tokens go through the blocks (pos 0: a new
 * window, an empty cache, made anew when B changes); without one the loop
 * gives the whole window from position 0. Only the last position goes
 * through the head: the others' logits would not be used. */
static qkv_tensor *stack_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B, int n,
                                int pos)
{
    stack_lm *g = model;
    if (g->use_cache && pos == 0 && (!g->cache || g->cache_rows != B)) {
        qkv_kv_cache_free(g->cache);
        g->cache_rows = B;
        if (!(g->cache = qkv_kv_cache_new(&g->s.cfg.block, B, g->s.cfg.block_size)))
            return NULL;
    }
    if (g->use_cache && pos == 0)
        qkv_kv_cache_reset(g->cache);
    return qkv__stack_run(g->fn, &g->s, ctx, ids, B, n, g->use_cache ? g->cache : NULL, true);
}

qkv_lm *qkv__stack_lm_new(const char *fn, const qkv_stack *s, bool use_cache)
{
    stack_lm *g = qkv_calloc(sizeof *g);
    if (!g) {
        qkv__fail_in(fn);
        return NULL;
    }
    g->s = *s;
    g->fn = fn;
    g->use_cache = use_cache;
    g->lm = (qkv_lm){.model = g, .logits = stack_logits, .vocab_size = s->cfg.vocab_size,
                     .context = s->cfg.block_size, .cached = use_cache};
    return &g->lm;
}

qkv_lm *qkv_stack_lm_new(const qkv_stack *s, bool use_cache)
{
    const char *fn = "qkv_stack_lm_new";
    if (qkv__null(fn, "s", s))
        return NULL;
    if (!s->h || !s->wte.weight) {
        qkv_set_error("%s: s was not made by qkv_stack_init (or was freed)", fn);
        return NULL;
    }
    return qkv__stack_lm_new(fn, s, use_cache);
}

void qkv__stack_lm_free(const char *fn, const char *made_by, qkv_lm *lm)
{
    if (!lm)
        return;
    if (lm->logits != stack_logits) { /* not ours: freeing it would corrupt the heap */
        qkv_set_error("%s: lm was not made by %s", fn, made_by);
        return;
    }
    stack_lm *g = (stack_lm *)lm;
    qkv_kv_cache_free(g->cache);
    qkv_free(g);
}

void qkv_stack_lm_free(qkv_lm *lm)
{
    qkv__stack_lm_free("qkv_stack_lm_free", "qkv_stack_lm_new", lm);
}
