/* Greedy decoding with the encoder-decoder, with or without the key/value
 * cache (see qkv/seq2seq.h). */
#include <string.h>

#include "tensor/check.h"
#include "train/decode.h"
#include "internal.h"

/* Columns [from, from+n) of the rows of ids (B, width), as a new (B,n) array in a. */
static int32_t *columns(qkv_arena *a, const int32_t *ids, int B, int width, int from, int n)
{
    int32_t *out = qkv_arena_alloc(a, (size_t)B * n * sizeof *out);
    for (int b = 0; out && b < B; b++)
        memcpy(out + (size_t)b * n, ids + (size_t)b * width + from, (size_t)n * sizeof *out);
    return out;
}

/* The logits (B,V per row, at stride row_stride) of the decoder at step t:
 * from the cache, only position t is computed; without, positions 0..t. */
static const qkv_real *step_logits(const qkv_seq2seq *m, const qkv_ctx *ctx, qkv_kv_cache *cache,
                                   qkv_tensor *const *k, qkv_tensor *const *v, qkv_tensor *memory,
                                   const uint8_t *src_valid, const int32_t *dec_in, int B, int t,
                                   size_t *row_stride)
{
    int Tmax = m->cfg.max_tgt, V = m->vocab_size;
    qkv_tensor *logits;
    if (cache) {
        qkv_tensor *x = qkv__seq2seq_dec_embed(m, ctx, columns(ctx->arena, dec_in, B, Tmax, t, 1), B, 1, t);
        for (int l = 0; l < m->cfg.n_layer; l++)
            x = qkv_cross_block_forward_cached(&m->dec[l], ctx, x, cache, l, k[l], v[l], src_valid);
        logits = qkv__seq2seq_head(m, ctx, x); /* (B,1,V) */
        *row_stride = (size_t)V;
        return logits ? logits->data : NULL;
    }
    logits = qkv_seq2seq_decode(m, ctx, memory, src_valid, columns(ctx->arena, dec_in, B, Tmax, 0, t + 1),
                                B, t + 1, NULL); /* (B,t+1,V) */
    *row_stride = (size_t)(t + 1) * V;
    return logits ? logits->data + (size_t)t * V : NULL;
}

int qkv_seq2seq_greedy(const qkv_seq2seq *m, const int32_t *src, const uint8_t *src_valid, int B,
                       int Ts, bool use_cache, int32_t *out)
{
    const char *fn = "qkv_seq2seq_greedy";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "src", src) || qkv__null(fn, "out", out))
        return -1;
    int L = m->cfg.n_layer, Tmax = m->cfg.max_tgt;
    qkv_arena *mem_arena = qkv_arena_new((size_t)1 << 20), *step_arena = qkv_arena_new((size_t)1 << 20);
    qkv_kv_cache *cache = use_cache ? qkv_kv_cache_new(&m->block, B, Tmax) : NULL;
    int32_t *dec_in = qkv_alloc((size_t)B * Tmax * sizeof *dec_in);
    bool *done = qkv_calloc((size_t)B * sizeof *done);
    bool was = qkv_set_grad_enabled(false);
    int rc = -1;
    if (!mem_arena || !step_arena || (use_cache && !cache) || !dec_in || !done)
        goto end;
    /* Once per input: the memory, and with the cache every layer's cross-attention keys and values. */
    qkv_ctx mem = {.arena = mem_arena, .train = false, .rng = NULL};
    qkv_ctx step = {.arena = step_arena, .train = false, .rng = NULL};
    qkv_tensor *memory = qkv_seq2seq_encode(m, &mem, src, src_valid, B, Ts);
    qkv_tensor **k = qkv_arena_alloc(mem_arena, 2 * (size_t)L * sizeof *k), **v = k + L;
    if (!memory || !k)
        goto end;
    for (int l = 0; l < L && use_cache; l++)
        if (qkv_cross_attn_memory(&m->dec[l].cross, &mem, memory, &k[l], &v[l]) < 0)
            goto end;
    for (size_t i = 0; i < (size_t)B * Tmax; i++)
        out[i] = QKV_SEQ2SEQ_PAD;
    for (int b = 0; b < B; b++)
        dec_in[(size_t)b * Tmax] = QKV_SEQ2SEQ_BOS;
    int n_done = 0;
    for (int t = 0; t < Tmax && n_done < B; t++) {
        qkv_arena_reset(step_arena);
        size_t stride;
        const qkv_real *logits = step_logits(m, &step, cache, k, v, memory, src_valid, dec_in, B, t,
                                             &stride);
        if (!logits)
            goto end;
        for (int b = 0; b < B; b++) {
            int32_t tok = qkv__argmax(logits + b * stride, m->vocab_size);
            if (!done[b])
                out[(size_t)b * Tmax + t] = tok;
            if (tok == QKV_SEQ2SEQ_EOS && !done[b]) {
                done[b] = true;
                n_done++;
            }
            if (t + 1 < Tmax)
                dec_in[(size_t)b * Tmax + t + 1] = tok;
        }
    }
    rc = 0;
end:
    qkv_set_grad_enabled(was);
    qkv_free(done);
    qkv_free(dec_in);
    qkv_kv_cache_free(cache);
    qkv_arena_free(&step_arena);
    qkv_arena_free(&mem_arena);
    return rc < 0 ? qkv__fail_in(fn) : 0;
}

/* Pairs decoded at once by qkv_seq2seq_translate. */
enum { TRANSLATE_BATCH = 100 };

int qkv_seq2seq_translate(const qkv_seq2seq *m, int n, const char *const *inputs,
                          char *const *outputs)
{
    const char *fn = "qkv_seq2seq_translate";
    if (qkv__null(fn, "m", m))
        return -1;
    if (n < 0)
        return qkv_set_error("%s: n %d is negative", fn, n);
    if (n == 0)
        return 0;
    if (qkv__null(fn, "inputs", inputs) || qkv__null(fn, "outputs", outputs))
        return -1;
    for (int i = 0; i < n; i++)
        if (!inputs[i] || !outputs[i])
            return qkv_set_error("%s: %s[%d] is NULL", fn, inputs[i] ? "outputs" : "inputs", i);
    int cap = n < TRANSLATE_BATCH ? n : TRANSLATE_BATCH;
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, cap);
    int32_t *out = qkv_alloc((size_t)cap * m->cfg.max_tgt * sizeof *out);
    int rc = b && out ? 0 : -1;
    for (int i = 0; rc == 0 && i < n; i += cap) {
        int nb = n - i < cap ? n - i : cap;
        rc = qkv_seq2seq_batch_fill(m, b, nb, inputs + i, NULL);
        if (rc == 0)
            rc = qkv_seq2seq_greedy(m, b->src, b->src_valid, nb, b->Ts, true, out);
        for (int j = 0; rc == 0 && j < nb; j++)
            qkv_seq2seq_detokenize(m, out + (size_t)j * m->cfg.max_tgt, outputs[i + j]);
    }
    qkv_free(out);
    qkv_seq2seq_batch_free(b);
    return rc < 0 ? qkv__fail_in(fn) : 0;
}
