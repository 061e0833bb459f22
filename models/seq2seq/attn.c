/* The encoder-decoder's attention while it decodes one input (see
 * qkv/seq2seq.h and internal.h). */
#include "tensor/check.h"
#include "internal.h"

int qkv_seq2seq_replay(const qkv_seq2seq *m, const qkv_ctx *ctx, const int32_t *src,
                       const uint8_t *src_valid, int Ts, char *output)
{
    const char *fn = "qkv_seq2seq_replay";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "ctx", ctx) || qkv__null(fn, "src", src) ||
        qkv__null(fn, "output", output))
        return -1;
    if (!ctx->arena)
        return qkv_set_error("%s: ctx->arena is NULL: the replay's memory comes from it", fn);
    if (Ts < 1 || Ts > m->cfg.max_src)
        return qkv_set_error("%s: Ts %d: the model reads 1 to %d input positions", fn, Ts,
                             m->cfg.max_src);
    int Tmax = m->cfg.max_tgt;
    int32_t *out = qkv_arena_alloc(ctx->arena, 2 * (size_t)Tmax * sizeof *out), *dec_in = out + Tmax;
    if (!out || qkv_seq2seq_greedy(m, src, src_valid, 1, Ts, true, out) < 0)
        return qkv__fail_in(fn);
    qkv_seq2seq_detokenize(m, out, output);
    /* Replay the decoding teacher-forced: the decoder reads BOS and its own
     * answer, and row t of the weights is the query that produced token t. */
    int n = 1;
    dec_in[0] = QKV_SEQ2SEQ_BOS;
    for (; n < Tmax && out[n - 1] >= QKV_SEQ2SEQ_N_SPECIAL; n++)
        dec_in[n] = out[n - 1];
    bool was = qkv_set_grad_enabled(false);
    qkv_tensor *memory = qkv_seq2seq_encode(m, ctx, src, src_valid, 1, Ts);
    qkv_tensor *logits = qkv_seq2seq_decode(m, ctx, memory, src_valid, dec_in, 1, n, NULL);
    qkv_set_grad_enabled(was);
    return logits ? n : qkv__fail_in(fn);
}

qkv_tensor *qkv_seq2seq_cross_weights(const qkv_seq2seq *m, const qkv_ctx *ctx, const char *input,
                                      int layer, char *output)
{
    const char *fn = "qkv_seq2seq_cross_weights";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "ctx", ctx) || qkv__null(fn, "input", input) ||
        qkv__null(fn, "output", output))
        return NULL;
    if (!ctx->arena) {
        qkv_set_error("%s: ctx->arena is NULL: the weights come from it", fn);
        return NULL;
    }
    int L = m->cfg.n_layer, Tt;
    if (layer < 0 || layer >= L) {
        qkv_set_error("%s: layer %d does not exist; the decoder has layers 0 to %d", fn, layer,
                      L - 1);
        return NULL;
    }
    /* The replay records its calls (the encoder's L, then each decoder
     * layer's self- and cross-attention) without their weights; only the
     * asked layer's cross-attention weights are then made. */
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, 1);
    qkv_attn_record rec = {.calls = qkv_arena_calloc(ctx->arena, 3 * (size_t)L * sizeof *rec.calls),
                           .cap = 3 * L};
    qkv_ctx replay = *ctx;
    replay.record = &rec;
    qkv_tensor *result = NULL;
    bool had = qkv_set_record_weights(false);
    if (b && rec.calls && qkv_seq2seq_batch_fill(m, b, 1, &input, NULL) == 0 &&
        (Tt = qkv_seq2seq_replay(m, &replay, b->src, b->src_valid, b->Ts, output)) > 0) {
        const qkv_attn_call *c = &rec.calls[L + 2 * layer + 1];
        result = qkv_attention_weights(ctx->arena, c->q, c->k, c->n_head, &c->mask, 0, Tt);
    }
    qkv_set_record_weights(had);
    qkv_seq2seq_batch_free(b);
    if (!result)
        qkv__fail_in(fn);
    return result;
}
