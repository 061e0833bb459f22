/* The ends every transformer here shares (see transformer.h). */
#include "transformer.h"

qkv_tensor *qkv__embed_tokens(const qkv_embed *wte, const qkv_embed *wpe, const qkv_run *r,
                              const int32_t *ids, int B, int T, int pos0, qkv_real p)
{
    qkv_tensor *x = qkv_embed_forward(wte, r, ids, QKV_SHAPE(B, T));
    if (wpe) {
        int32_t *pos = qkv_arena_alloc(r->arena, (size_t)T * sizeof *pos);
        if (!pos)
            return NULL;
        for (int t = 0; t < T; t++)
            pos[t] = pos0 + t;
        x = qkv_add(r->arena, x, qkv_embed_forward(wpe, r, pos, QKV_SHAPE(T)));
    }
    return qkv_dropout(r->arena, x, p, r->rng, r->train);
}

qkv_tensor *qkv__tied_head(const qkv_ln *ln_f, const qkv_embed *wte, const qkv_run *r,
                           qkv_tensor *x)
{
    /* wte is (V,C): logits = LN(x)·wteᵀ, the same matrix that embeds the tokens. */
    return qkv_matmul(r->arena, qkv_ln_forward(ln_f, r, x), wte->weight, false, true);
}
