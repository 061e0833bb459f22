/* A source batch encoded once for cached decoding: the encoder's output and
 * every cross block's keys and values over it (see qkv/stack.h). */
#include "internal.h"
#include "s2s_stack.h"

#include <string.h>

/* Encode src into mem's arena in no-grad mode, then each layer's keys and values. */
static int encode_once(qkv_s2s_memory *mem, const char *fn, const int32_t *src)
{
    const qkv_s2s_stack *s = mem->s;
    int L = s->cfg.block.n_layer;
    qkv_ctx ctx = {.arena = mem->arena};
    bool was = qkv_set_grad_enabled(false);
    mem->memory = qkv__s2s_encode(fn, s, &ctx, src, mem->src_valid, mem->B, mem->Ts);
    mem->k = qkv_arena_calloc(mem->arena, 2 * (size_t)L * sizeof *mem->k);
    mem->v = mem->k ? mem->k + L : NULL;
    int rc = mem->memory && mem->k ? 0 : -1;
    for (int l = 0; rc == 0 && l < L; l++)
        rc = qkv_cross_attn_memory(&s->dec[l].cross, &ctx, mem->memory, &mem->k[l], &mem->v[l]);
    qkv_set_grad_enabled(was);
    return rc;
}

qkv_s2s_memory *qkv__s2s_memory_new(const char *fn, const qkv_s2s_stack *s, const int32_t *src,
                                    const uint8_t *src_valid, int B, int Ts)
{
    if (qkv__null(fn, "s", s) || qkv__null(fn, "src", src))
        return NULL;
    if (B < 1 || Ts < 1) {
        qkv_set_error("%s: B %d and Ts %d must be >= 1", fn, B, Ts);
        return NULL;
    }
    qkv_s2s_memory *mem = qkv_calloc(sizeof *mem);
    if (!mem || !(mem->arena = qkv_arena_new((size_t)1 << 20)))
        goto fail;
    *mem = (qkv_s2s_memory){.s = s, .B = B, .Ts = Ts, .arena = mem->arena};
    if (src_valid) {
        if (!(mem->src_valid = qkv_arena_alloc(mem->arena, (size_t)B * Ts)))
            goto fail;
        memcpy(mem->src_valid, src_valid, (size_t)B * Ts);
    }
    if (encode_once(mem, fn, src) < 0)
        goto fail;
    return mem;
fail:
    qkv__fail_in(fn);
    qkv_s2s_memory_free(mem);
    return NULL;
}

qkv_s2s_memory *qkv_s2s_memory_new(const qkv_s2s_stack *s, const int32_t *src,
                                   const uint8_t *src_valid, int B, int Ts)
{
    return qkv__s2s_memory_new("qkv_s2s_memory_new", s, src, src_valid, B, Ts);
}

void qkv_s2s_memory_free(qkv_s2s_memory *mem)
{
    if (!mem)
        return;
    qkv_arena_free(&mem->arena);
    qkv_free(mem);
}
