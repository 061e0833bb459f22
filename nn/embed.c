/* Embedding: a learned vector per token id (see qkv/nn.h). */
#include "internal.h"

int qkv_embed_init(qkv_embed *m, qkv_params *p, const char *name, int vocab, int dim, qkv_real std)
{
    if (qkv__check_init("qkv_embed_init", m, p, name) < 0)
        return -1;
    *m = (qkv_embed){.vocab = vocab, .dim = dim};
    m->weight = qkv__nn_param(p, name, "weight", QKV_SHAPE(vocab, dim), QKV_INIT_NORMAL, std);
    return m->weight ? 0 : qkv__fail_in("qkv_embed_init");
}

qkv_tensor *qkv_embed_forward(const qkv_embed *m, const qkv_ctx *ctx, const int32_t *ids, int ndim,
                              const int *shape)
{
    const char *fn = "qkv_embed_forward";
    if (qkv__check_forward(fn, m, ctx, m ? m->weight : NULL) < 0 || qkv__null(fn, "ids", ids))
        return NULL;
    return qkv__result(fn, qkv_embedding(ctx->arena, m->weight, ids, ndim, shape));
}
