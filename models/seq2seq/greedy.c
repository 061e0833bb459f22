/* Greedy decoding with the encoder-decoder, with or without the key/value
 * cache: qkv_generate_batch over the decoder (generate.c; see qkv/seq2seq.h). */
#include "tensor/check.h"
#include "internal.h"

int qkv_seq2seq_greedy(const qkv_seq2seq *m, const int32_t *src, const uint8_t *src_valid, int B,
                       int Ts, bool use_cache, int32_t *out)
{
    const char *fn = "qkv_seq2seq_greedy";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "src", src) || qkv__null(fn, "out", out))
        return -1;
    int Tmax = m->cfg.max_tgt, rc = -1;
    qkv_lm *lm = qkv_seq2seq_lm_new(m, src, src_valid, B, Ts, use_cache);
    int32_t *bos = lm ? qkv_alloc((size_t)B * sizeof *bos) : NULL;
    for (int b = 0; bos && b < B; b++)
        bos[b] = QKV_SEQ2SEQ_BOS;
    if (bos)
        rc = qkv_generate_batch(lm, B, bos, 1, Tmax, &(qkv_sample_opts){0}, NULL, QKV_SEQ2SEQ_EOS,
                                out);
    /* After its EOS a row is padding, as in a batch of targets. */
    for (int b = 0; rc == 0 && b < B; b++) {
        int32_t *row = out + (size_t)b * Tmax;
        bool ended = false;
        for (int t = 0; t < Tmax; t++) {
            if (ended)
                row[t] = QKV_SEQ2SEQ_PAD;
            ended = ended || row[t] == QKV_SEQ2SEQ_EOS;
        }
    }
    qkv_free(bos);
    qkv_seq2seq_lm_free(lm);
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
