/* Sampling from the GPT: temperature, top-k, top-p, and generation with or
 * without a key/value cache (see qkv/gpt.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../tensor/check.h"
#include "decode.h"
#include "gpt_internal.h"

/* qkv_sample_opts_check, with fn naming the public function in a message. */
static int check_opts(const char *fn, const qkv_sample_opts *o)
{
    if (qkv__null(fn, "opts", o))
        return -1;
    if (!(o->temperature >= 0) || !isfinite(o->temperature))
        return qkv_set_error("%s: temperature %g must be >= 0", fn, o->temperature);
    if (o->top_k < 0)
        return qkv_set_error("%s: top_k %d must be >= 0", fn, o->top_k);
    if (!(o->top_p > 0 && o->top_p <= 1))
        return qkv_set_error("%s: top_p %g must be in (0, 1]", fn, o->top_p);
    return 0;
}

int qkv_sample_opts_check(const qkv_sample_opts *o) { return check_opts("qkv_sample_opts_check", o); }

static int descending(const void *x, const void *y)
{
    qkv_real a = *(const qkv_real *)x, b = *(const qkv_real *)y;
    return (a < b) - (a > b);
}

/* tmp = v[0..n) sorted from largest to smallest. */
static void sorted_descending(qkv_real *tmp, const qkv_real *v, int n)
{
    memcpy(tmp, v, (size_t)n * sizeof *tmp);
    qsort(tmp, (size_t)n, sizeof *tmp, descending);
}

int32_t qkv__argmax(const qkv_real *x, int n)
{
    int32_t best = 0;
    for (int i = 1; i < n; i++)
        if (x[i] > x[best])
            best = i;
    return best;
}

int32_t qkv_sample_token(const qkv_real *logits, int V, const qkv_sample_opts *o, qkv_rng *rng,
                         qkv_real *scratch)
{
    const char *fn = "qkv_sample_token";
    if (qkv__null(fn, "logits", logits) || check_opts(fn, o) < 0 ||
        qkv__null(fn, "scratch", scratch) || (o->temperature > 0 && qkv__null(fn, "rng", rng)))
        return -1;
    if (V < 1)
        return qkv_set_error("%s: V %d must be >= 1", fn, V);
    qkv_real *p = scratch, *tmp = scratch + V;
    int32_t best = qkv__argmax(logits, V);
    if (o->temperature == 0)
        return best;
    /* top-k: only logits at or above the k-th largest survive (ties may keep a few more). */
    qkv_real floor = -INFINITY;
    if (o->top_k > 0 && o->top_k < V) {
        sorted_descending(tmp, logits, V);
        floor = tmp[o->top_k - 1];
    }
    double sum = 0;
    for (int i = 0; i < V; i++) {
        p[i] = logits[i] >= floor ? (qkv_real)exp((logits[i] - logits[best]) / o->temperature) : 0;
        sum += p[i];
    }
    if (!(sum > 0 && isfinite(sum))) /* NaN or inf logits: no distribution to draw from */
        return qkv_set_error("%s: the logits are not finite numbers (NaN or inf)", fn);
    for (int i = 0; i < V; i++)
        p[i] = (qkv_real)(p[i] / sum);
    sum = 1;
    /* top-p: keep the most likely tokens until their mass reaches top_p. */
    if (o->top_p < 1) {
        sorted_descending(tmp, p, V);
        double mass = 0;
        qkv_real cut = tmp[0];
        for (int i = 0; i < V && mass < o->top_p; i++) {
            mass += tmp[i];
            cut = tmp[i];
        }
        sum = 0;
        for (int i = 0; i < V; i++) {
            if (p[i] < cut)
                p[i] = 0;
            sum += p[i];
        }
    }
    /* One uniform draw, walked through the cumulative distribution in id order. */
    double u = qkv_rng_uniform(rng) * sum, c = 0;
    int last = best;
    for (int i = 0; i < V; i++) {
        if (p[i] == 0)
            continue;
        c += p[i];
        last = i;
        if (u < c)
            return i;
    }
    return last; /* u landed in the rounding gap at the very top */
}

/* Logits of the last of n new tokens ids at positions pos0.. . With a cache,
 * only these tokens are computed and the earlier ones come from the cache;
 * without, ids must be the whole window (pos0 = 0). */
static const qkv_real *next_logits(const qkv_gpt *m, const qkv_run *r, qkv_kv_cache *cache,
                                   const int32_t *ids, int n, int pos0)
{
    qkv_tensor *x = qkv__gpt_embed(m, r, ids, 1, n, pos0);
    for (int l = 0; l < m->cfg.n_layer; l++)
        x = cache ? qkv_block_forward_cached(&m->h[l], r, x, cache, l)
                  : qkv_block_forward(&m->h[l], r, x, NULL, NULL);
    qkv_tensor *logits = qkv__gpt_head(m, r, x);
    return logits ? logits->data + (size_t)(n - 1) * m->cfg.vocab_size : NULL;
}

int qkv_gpt_generate(const qkv_gpt *m, const int32_t *prompt, int n_prompt, int n_new,
                     const qkv_sample_opts *opts, qkv_rng *rng, bool use_cache, qkv_emit_fn emit,
                     void *ud)
{
    const char *fn = "qkv_gpt_generate";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "prompt", prompt) || check_opts(fn, opts) < 0 ||
        (opts->temperature > 0 && qkv__null(fn, "rng", rng)))
        return -1;
    int V = m->cfg.vocab_size, block = m->cfg.block_size;
    if (n_prompt < 1)
        return qkv_set_error("qkv_gpt_generate: the prompt needs at least one token (got %d)", n_prompt);
    if (n_new < 0)
        return qkv_set_error("qkv_gpt_generate: cannot generate %d new tokens", n_new);
    for (int i = 0; i < n_prompt; i++)
        if (prompt[i] < 0 || prompt[i] >= V)
            return qkv_set_error("qkv_gpt_generate: prompt token %d at position %d is outside the "
                                 "vocabulary of %d", prompt[i], i, V);
    int32_t *window = qkv_alloc((size_t)block * sizeof *window);
    qkv_real *scratch = qkv_alloc(2 * (size_t)V * sizeof *scratch);
    qkv_arena *arena = qkv_arena_new(1 << 20);
    qkv_kv_cache *cache = use_cache ? qkv_kv_cache_new(&m->block, 1, block) : NULL;
    int rc = -1;
    bool was = qkv_set_grad_enabled(false);
    if (!window || !scratch || !arena || (use_cache && !cache))
        goto done;
    /* The window holds the newest tokens; the cache holds the first `cached` of them. */
    int len = n_prompt < block ? n_prompt : block, cached = 0;
    memcpy(window, prompt + n_prompt - len, (size_t)len * sizeof *window);
    qkv_run run = {.arena = arena, .train = false, .rng = NULL};
    for (int i = 0; i < n_new; i++) {
        qkv_arena_reset(arena);
        const qkv_real *logits = use_cache
                                     ? next_logits(m, &run, cache, window + cached, len - cached, cached)
                                     : next_logits(m, &run, NULL, window, len, 0);
        if (!logits)
            goto done;
        cached = len;
        int32_t tok = qkv_sample_token(logits, V, opts, rng, scratch);
        if (emit && emit(tok, ud))
            break;
        if (len == block) { /* full: slide by half, the cache refills from the kept half */
            int keep = block / 2 > 0 ? block / 2 : 1;
            memmove(window, window + len - keep + 1, (size_t)(keep - 1) * sizeof *window);
            len = keep - 1;
            cached = 0;
            if (cache)
                qkv_kv_cache_reset(cache);
        }
        window[len++] = tok;
    }
    rc = 0;
done:
    qkv_set_grad_enabled(was);
    qkv_kv_cache_free(cache);
    qkv_arena_free(arena);
    qkv_free(scratch);
    qkv_free(window);
    return rc;
}
