/* GPT-2's weights from a .safetensors file in Hugging Face's layout (see
 * qkv_gpt_load_safetensors in qkv/gpt.h). The built-in GPT with every option
 * off is GPT-2's model: learned positions, LayerNorm with eps 1e-5 and
 * biases, GELU in its tanh form, a head tied to wte. Its parameters have
 * Hugging Face's names already; only the four Conv1D weights of each block
 * are stored (in, out), the transpose of a Linear's (out, in). */
#include "internal.h"
#include "tensor/check.h"
#include "qkv/gpt.h"
#include "qkv/safetensors.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The weights Hugging Face's Conv1D stores as (in, out). */
static const char *const CONV1D[] = {".attn.c_attn.weight", ".attn.c_proj.weight",
                                     ".mlp.c_fc.weight", ".mlp.c_proj.weight"};

/* Buffers of the module saved beside the weights: the causal mask, not a weight. */
static const char *const IGNORED[] = {".attn.bias", ".attn.masked_bias"};

static bool ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), k = strlen(suffix);
    return n >= k && !strcmp(s + n - k, suffix);
}

static bool ends_with_any(const char *s, const char *const *suffixes, int n)
{
    for (int i = 0; i < n; i++)
        if (ends_with(s, suffixes[i]))
            return true;
    return false;
}

/* The tensor prefix + name, or NULL (no message: the caller says what is missing). */
static const qkv_st_tensor *lookup(const qkv_safetensors *st, const char *prefix, const char *name)
{
    char full[QKV_PARAM_NAME_MAX + 16];
    snprintf(full, sizeof full, "%s%s", prefix, name);
    for (int i = 0; i < qkv_safetensors_count(st); i++) {
        const qkv_st_tensor *t = qkv_safetensors_tensor(st, i);
        if (!strcmp(t->name, full))
            return t;
    }
    return NULL;
}

/* The rows and columns of the matrix prefix + name. */
static int matrix(const qkv_safetensors *st, const char *prefix, const char *name, int *rows,
                  int *cols)
{
    const qkv_st_tensor *t = lookup(st, prefix, name);
    if (!t)
        return qkv_set_error("no tensor %s%s in the file: not GPT-2's layout", prefix, name);
    if (t->ndim != 2 || t->shape[0] < 1 || t->shape[1] < 1 || t->shape[0] > 1 << 30 ||
        t->shape[1] > 1 << 30)
        return qkv_set_error("%s: %d-d, expected a matrix", t->name, t->ndim);
    *rows = (int)t->shape[0], *cols = (int)t->shape[1];
    return 0;
}

/* The heads: n_head when given, else the metadata's "n_head", else GPT-2's head size 64. */
static int heads(const qkv_safetensors *st, int n_head, int n_embd)
{
    if (n_head > 0)
        return n_head;
    const char *meta = qkv_safetensors_meta(st, "n_head");
    if (meta) {
        char *end;
        long h = strtol(meta, &end, 10);
        if (*end || h < 1 || h > n_embd)
            return qkv_set_error("metadata n_head \"%s\" is not a head count", meta);
        return (int)h;
    }
    if (n_embd % 64)
        return qkv_set_error("n_embd %d is not a multiple of GPT-2's head size 64: give n_head",
                             n_embd);
    return n_embd / 64;
}

/* 1 when tensors a and b hold different values, 0 when the same, -1 on failure. */
static int differs(const qkv_safetensors *st, const qkv_st_tensor *a, const qkv_st_tensor *b)
{
    if (a->ndim != b->ndim || a->count != b->count ||
        memcmp(a->shape, b->shape, sizeof a->shape) != 0)
        return 1;
    qkv_real *x = qkv_alloc(2 * (a->count ? a->count : 1) * sizeof *x);
    int rc = !x || qkv_safetensors_read(st, a, x, a->count) < 0 ||
                     qkv_safetensors_read(st, b, x + a->count, b->count) < 0
                 ? -1
                 : memcmp(x, x + a->count, a->count * sizeof *x) != 0;
    qkv_free(x);
    return rc;
}

/* The config the file's shapes say, and whether it has an lm head of its own. */
static int infer_config(const qkv_safetensors *st, const char *prefix, int n_head,
                        qkv_gpt_config *cfg)
{
    *cfg = (qkv_gpt_config){0};
    int pos_width;
    if (matrix(st, prefix, "wte.weight", &cfg->vocab_size, &cfg->n_embd) < 0 ||
        matrix(st, prefix, "wpe.weight", &cfg->block_size, &pos_width) < 0)
        return -1;
    if (pos_width != cfg->n_embd)
        return qkv_set_error("wpe.weight is %d wide, wte.weight %d", pos_width, cfg->n_embd);
    char name[64];
    do
        snprintf(name, sizeof name, "h.%d.ln_1.weight", cfg->n_layer);
    while (lookup(st, prefix, name) && ++cfg->n_layer <= 256); /* past 256: the config says so */
    if ((cfg->n_head = heads(st, n_head, cfg->n_embd)) < 0)
        return -1;
    /* Hugging Face leaves the tied head out; a head of other values is untied. */
    const qkv_st_tensor *head = lookup(st, "", "lm_head.weight");
    if (head) {
        int diff = differs(st, head, lookup(st, prefix, "wte.weight"));
        if (diff < 0)
            return -1;
        cfg->opts.untied = diff == 1;
    }
    return qkv_gpt_config_check(cfg);
}

/* The tensor of the file that holds parameter p (of its shape: a Conv1D
 * weight's transposed), or NULL with a message. */
static const qkv_st_tensor *source(const qkv_safetensors *st, const char *prefix,
                                   const qkv_param *p)
{
    bool own = !strcmp(p->name, "lm_head.weight");
    const qkv_st_tensor *t = lookup(st, own ? "" : prefix, p->name);
    if (!t) {
        qkv_set_error("no tensor %s%s in the file", own ? "" : prefix, p->name);
        return NULL;
    }
    bool conv = ends_with_any(p->name, CONV1D, 4);
    const qkv_tensor *w = p->t;
    bool same = t->ndim == w->ndim;
    for (int d = 0; same && d < w->ndim; d++)
        same = t->shape[d] == w->shape[conv ? w->ndim - 1 - d : d];
    if (same)
        return t;
    char want[64];
    if (w->ndim == 2)
        snprintf(want, sizeof want, "(%d, %d)", w->shape[conv], w->shape[!conv]);
    else
        snprintf(want, sizeof want, "(%d)", w->shape[0]);
    qkv_set_error("%s: shape does not match, expected %s%s", t->name, want,
                  conv ? " (Conv1D: in, out)" : "");
    return NULL;
}

/* Parameter p's values from t, a Conv1D weight transposed into (out, in). */
static int load_param(const qkv_safetensors *st, const qkv_st_tensor *t, const qkv_param *p,
                      qkv_real *scratch)
{
    const qkv_tensor *w = p->t;
    if (!ends_with_any(p->name, CONV1D, 4))
        return qkv_safetensors_read(st, t, w->data, w->size);
    if (qkv_safetensors_read(st, t, scratch, w->size) < 0)
        return -1;
    int out = w->shape[0], in = w->shape[1];
    for (int i = 0; i < in; i++)
        for (int o = 0; o < out; o++)
            w->data[(size_t)o * in + i] = scratch[(size_t)i * out + o];
    return 0;
}

/* Every tensor of the file is a parameter of m (or a mask it ignores). */
static int check_all_used(const qkv_safetensors *st, const char *prefix, const qkv_gpt *m)
{
    size_t k = strlen(prefix);
    for (int i = 0; i < qkv_safetensors_count(st); i++) {
        const char *name = qkv_safetensors_tensor(st, i)->name;
        if (ends_with_any(name, IGNORED, 2) || !strcmp(name, "lm_head.weight"))
            continue;
        if (strncmp(name, prefix, k) != 0 || !qkv_params_find(m->params, name + k))
            return qkv_set_error("tensor %s is not a part of GPT-2's model", name);
    }
    return 0;
}

/* The model of the file's weights, once it is open. */
static qkv_gpt *from_file(const qkv_safetensors *st, int n_head)
{
    /* GPT2LMHeadModel saves its body under "transformer."; GPT2Model without a prefix. */
    const char *prefix = lookup(st, "transformer.", "wte.weight") ? "transformer." : "";
    qkv_gpt_config cfg;
    if (infer_config(st, prefix, n_head, &cfg) < 0)
        return NULL;
    /* Every tensor found and its shape checked before the model is allocated:
     * the blocks are counted by name, and a small file must make a small model. */
    qkv_gpt *m = qkv__gpt_declare(&cfg);
    int n = m ? m->params->count : 0;
    const qkv_st_tensor **from = m ? qkv_calloc((size_t)n * sizeof *from) : NULL;
    int rc = from && check_all_used(st, prefix, m) == 0 ? 0 : -1;
    size_t biggest = 0;
    for (int i = 0; i < n && rc == 0; i++) {
        rc = (from[i] = source(st, prefix, &m->params->items[i])) ? 0 : -1;
        if (m->params->items[i].t->size > biggest)
            biggest = m->params->items[i].t->size;
    }
    /* Every value is the file's: no random draws for them (GPT-2 small has 124M). */
    for (int i = 0; i < n; i++)
        m->params->items[i].init = QKV_INIT_ZEROS;
    qkv_rng rng;
    qkv_rng_seed(&rng, 0);
    qkv_real *scratch = rc == 0 && qkv_params_alloc(m->params, &rng) == 0
                            ? qkv_alloc(biggest * sizeof *scratch) : NULL;
    rc = scratch ? 0 : -1;
    for (int i = 0; i < n && rc == 0; i++)
        rc = load_param(st, from[i], &m->params->items[i], scratch);
    qkv_free(scratch);
    qkv_free(from);
    if (rc < 0) {
        qkv_gpt_free(m);
        return NULL;
    }
    return m;
}

qkv_gpt *qkv_gpt_load_safetensors(const char *path, int n_head)
{
    const char *fn = "qkv_gpt_load_safetensors";
    if (qkv__null(fn, "path", path))
        return NULL;
    if (n_head < 0) {
        qkv_set_error("%s: n_head %d is negative (0: from the file)", fn, n_head);
        return NULL;
    }
    qkv_safetensors *st = qkv_safetensors_open(path);
    qkv_gpt *m = st ? from_file(st, n_head) : NULL;
    if (st && !m)
        qkv__error_prefix("%s: %s", fn, path);
    else if (!m)
        qkv__fail_in(fn);
    qkv_safetensors_free(st);
    return m;
}
