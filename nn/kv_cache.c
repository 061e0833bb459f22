/* The key/value cache for generation (see qkv/nn.h). */
#include <string.h>

#include "internal.h"

qkv_kv_cache *qkv_kv_cache_new(const qkv_block_config *cfg, int batch, int max_len)
{
    const char *fn = "qkv_kv_cache_new";
    if (qkv__check_config(fn, "", cfg) < 0)
        return NULL;
    if (batch < 1 || max_len < 1) {
        qkv_set_error("%s: batch %d and max_len %d must be >= 1", fn, batch, max_len);
        return NULL;
    }
    /* in double, so the check itself cannot wrap around */
    if ((double)cfg->n_layer * batch * max_len * cfg->n_embd * sizeof(qkv_real) >
        (double)(SIZE_MAX / 4)) {
        qkv_set_error("%s: %d layers of %d sequences of %d positions of width %d are too large", fn,
                      cfg->n_layer, batch, max_len, cfg->n_embd);
        return NULL;
    }
    qkv_kv_cache *c = qkv_calloc(sizeof *c);
    if (!c)
        return NULL;
    *c = (qkv_kv_cache){.n_layer = qkv__n_layer(cfg), .batch = batch, .n_head = cfg->n_head,
                        .max_len = max_len, .head_size = cfg->n_embd / cfg->n_head};
    size_t n = (size_t)c->n_layer * batch * c->n_head * max_len * c->head_size;
    c->len = qkv_calloc((size_t)c->n_layer * sizeof *c->len);
    c->k = qkv_alloc(n * sizeof(qkv_real));
    c->v = qkv_alloc(n * sizeof(qkv_real));
    if (!c->len || !c->k || !c->v) {
        qkv_kv_cache_free(c);
        return NULL;
    }
    return c;
}

void qkv_kv_cache_free(qkv_kv_cache *c)
{
    if (!c)
        return;
    qkv_free(c->len);
    qkv_free(c->k);
    qkv_free(c->v);
    qkv_free(c);
}

void qkv_kv_cache_reset(qkv_kv_cache *c)
{
    if (!qkv__null("qkv_kv_cache_reset", "c", c))
        memset(c->len, 0, (size_t)c->n_layer * sizeof *c->len);
}

int qkv__kv_cache_filled(const char *fn, const qkv_kv_cache *c, int layer)
{
    if (!c)
        return qkv_set_error("%s: the cache is NULL", fn);
    if (layer < 0 || layer >= c->n_layer)
        return qkv_set_error("%s: layer %d does not exist; the cache has %d layers", fn, layer,
                             c->n_layer);
    return c->len[layer];
}

/* 0 when k (B,Tnew,C) fits layer's cache; otherwise -1 with a message. */
static int check_fits(const char *fn, const qkv_kv_cache *c, int layer, const qkv_tensor *k)
{
    char s[64];
    if (qkv__kv_cache_filled(fn, c, layer) < 0)
        return -1;
    if (k->shape[0] != c->batch)
        return qkv_set_error("%s: input has batch %d but the cache was made for batch %d", fn,
                             k->shape[0], c->batch);
    if (k->ndim != 3 || k->shape[2] != c->n_head * c->head_size)
        return qkv_set_error("%s: keys %s do not fit a cache of %d heads of size %d", fn,
                             qkv_shape_str(k, s, sizeof s), c->n_head, c->head_size);
    if (c->len[layer] + k->shape[1] > c->max_len)
        return qkv_set_error("%s: the cache's layer %d holds %d of %d positions; %d new ones do "
                             "not fit", fn, layer, c->len[layer], c->max_len, k->shape[1]);
    return 0;
}

/* Copy t (B,Tnew,C) into buf (B,Tmax,C) at positions [at, at+Tnew) and
 * return a view of positions [0, at+Tnew) of buf: shape (B,len,C), batch
 * entries Tmax·C apart, nothing copied but the new positions. */
static qkv_tensor *append_view(qkv_real *buf, const qkv_tensor *t, int at, int max_len,
                               qkv_arena *a)
{
    int B = t->shape[0], Tn = t->shape[1], C = t->shape[2], len = at + Tn;
    qkv_tensor *all = qkv_arena_calloc(a, sizeof *all);
    if (!all)
        return NULL;
    for (int b = 0; b < B; b++)
        memcpy(buf + ((size_t)b * max_len + at) * C, t->data + (size_t)b * Tn * C,
               (size_t)Tn * C * sizeof *buf);
    *all = (qkv_tensor){.data = buf, .ndim = 3, .shape = {B, len, C}, .size = (size_t)B * len * C};
    return all;
}

int qkv__kv_cache_append(const char *fn, qkv_kv_cache *c, int layer, const qkv_tensor *k,
                         const qkv_tensor *v, qkv_arena *a, qkv_tensor **k_all,
                         qkv_tensor **v_all, size_t *kv_batch)
{
    if (check_fits(fn, c, layer, k) < 0)
        return -1;
    size_t per_layer = (size_t)c->batch * c->max_len * c->n_head * c->head_size;
    int at = c->len[layer];
    *k_all = append_view(c->k + layer * per_layer, k, at, c->max_len, a);
    *v_all = append_view(c->v + layer * per_layer, v, at, c->max_len, a);
    if (!*k_all || !*v_all)
        return -1;
    *kv_batch = (size_t)c->max_len * c->n_head * c->head_size;
    c->len[layer] = at + k->shape[1];
    return 0;
}
