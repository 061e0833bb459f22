/* Generation from the encoder-decoder: the encoder-decoder stack's qkv_lm
 * (decode/s2s_stack_lm.c) over the model's modules, for the model-agnostic
 * loop in decode/generate.c (see qkv/seq2seq.h). */
#include "decode/decode.h"
#include "tensor/check.h"
#include "internal.h"

qkv_lm *qkv_seq2seq_lm_new(const qkv_seq2seq *m, const int32_t *src, const uint8_t *src_valid,
                           int B, int Ts, bool use_cache)
{
    const char *fn = "qkv_seq2seq_lm_new";
    if (qkv__null(fn, "m", m))
        return NULL;
    qkv_s2s_stack s = qkv__seq2seq_stack(m);
    return qkv__s2s_lm_new(fn, &s, src, src_valid, B, Ts, use_cache);
}

void qkv_seq2seq_lm_free(qkv_lm *lm)
{
    qkv__s2s_lm_free("qkv_seq2seq_lm_free", "qkv_seq2seq_lm_new", lm);
}
