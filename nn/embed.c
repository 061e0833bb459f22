/* Embedding: a learned vector per token id (see qkv/nn.h). */
#include "internal.h"

int qkv_embed_init(qkv_embed *m, qkv_params *p, const char *name, int vocab, int dim, qkv_real std)
{
    *m = (qkv_embed){.vocab = vocab, .dim = dim};
    m->weight = qkv__nn_param(p, name, "weight", QKV_SHAPE(vocab, dim), QKV_INIT_NORMAL, std);
    return m->weight ? 0 : -1;
}

qkv_tensor *qkv_embed_forward(const qkv_embed *m, const qkv_run *r, const int32_t *ids, int ndim,
                              const int *shape)
{
    return qkv_embedding(r->arena, m->weight, ids, ndim, shape);
}
