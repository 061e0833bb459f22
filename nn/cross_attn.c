/* Multi-head cross-attention: queries from x, keys and values from a memory (see qkv/nn.h). */
#include "internal.h"

int qkv_cross_attn_init(qkv_cross_attn *m, qkv_params *p, const char *name,
                        const qkv_block_config *cfg, int n_mem)
{
    const char *fn = "qkv_cross_attn_init";
    if (qkv__check_init(fn, m, p, name) < 0 || qkv__check_config(fn, name, cfg) < 0)
        return -1;
    if (n_mem < 1)
        return qkv_set_error("%s '%s': n_mem %d must be >= 1", fn, name, n_mem);
    int C = cfg->n_embd;
    *m = (qkv_cross_attn){.n_embd = C, .n_mem = n_mem, .n_head = cfg->n_head,
                          .dropout = cfg->dropout};
    const qkv_real std = qkv__init_std(cfg);
    bool bias = !cfg->opts.no_bias;
    if (qkv__linear_sub(&m->c_q, p, name, "c_q", C, C, bias, std) < 0 ||
        qkv__linear_sub(&m->c_kv, p, name, "c_kv", n_mem, 2 * C, bias, std) < 0 ||
        qkv__linear_sub(&m->c_proj, p, name, "c_proj", C, C, bias, qkv__resid_std(cfg)) < 0)
        return -1;
    return 0;
}

int qkv_cross_attn_memory(const qkv_cross_attn *m, const qkv_ctx *ctx, qkv_tensor *memory,
                          qkv_tensor **k, qkv_tensor **v)
{
    const char *fn = "qkv_cross_attn_memory";
    if (qkv__check_forward(fn, m, ctx, m ? m->c_kv.weight : NULL) < 0 || qkv__null(fn, "k", k) ||
        qkv__null(fn, "v", v))
        return -1;
    *k = *v = NULL;
    if (qkv__check_input(fn, "memory", memory) < 0 || qkv__check_btc(fn, memory, m->n_mem) < 0)
        return -1;
    int C = m->n_embd;
    /* W_kv stacks W_K (rows [0,C)) and W_V ([C,2C)). */
    *k = qkv__linear_part(&m->c_kv, ctx, memory, 0, C);
    *v = qkv__linear_part(&m->c_kv, ctx, memory, C, C);
    return *k && *v ? 0 : qkv__fail_in(fn);
}

qkv_tensor *qkv_cross_attn_forward_kv(const qkv_cross_attn *m, const qkv_ctx *ctx, qkv_tensor *x,
                                      qkv_tensor *k, qkv_tensor *v, const uint8_t *mem_valid,
                                      qkv_tensor **weights)
{
    const char *fn = "qkv_cross_attn_forward_kv";
    if (qkv__check_forward(fn, m, ctx, m ? m->c_q.weight : NULL) < 0 ||
        qkv__check_dropout(fn, ctx, m->dropout) < 0 || qkv__check_btc(fn, x, m->n_embd) < 0 ||
        qkv__check_input(fn, "k", k) < 0 || qkv__check_input(fn, "v", v) < 0)
        return NULL;
    if (k->ndim != 3 || k->shape[0] != x->shape[0] || k->shape[2] != m->n_embd ||
        !qkv_same_shape(k, v)) {
        char sx[64], sk[64], sv[64];
        qkv_set_error("qkv_cross_attn_forward_kv: memory keys %s and values %s do not match "
                      "queries from x %s: "
                      "both must be (%d,Tk,%d)",
                      qkv_shape_str(k, sk, sizeof sk), qkv_shape_str(v, sv, sizeof sv),
                      qkv_shape_str(x, sx, sizeof sx), x->shape[0], m->n_embd);
        return NULL;
    }
    qkv_tensor *q = qkv_linear_forward(&m->c_q, ctx, x);
    /* No causal mask: every query may look at the whole memory, but never at
     * its padding. */
    qkv_mask mask = {.key_valid = mem_valid};
    return qkv__result(fn,
                       qkv__attend(ctx, &m->c_proj, m->n_head, m->dropout, q, k, v, &mask, weights));
}

qkv_tensor *qkv_cross_attn_forward(const qkv_cross_attn *m, const qkv_ctx *ctx, qkv_tensor *x,
                                   qkv_tensor *memory, const uint8_t *mem_valid,
                                   qkv_tensor **weights)
{
    qkv_tensor *k, *v;
    const char *fn = "qkv_cross_attn_forward";
    if (qkv__check_forward(fn, m, ctx, m ? m->c_q.weight : NULL) < 0 ||
        qkv__check_same_batch(fn, x, memory) < 0 || qkv_cross_attn_memory(m, ctx, memory, &k, &v) < 0)
        return NULL;
    return qkv__result(fn, qkv_cross_attn_forward_kv(m, ctx, x, k, v, mem_valid, weights));
}
