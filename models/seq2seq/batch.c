/* Strings to padded batches of token ids for the encoder-decoder, and decoded
 * tokens back to strings (see qkv/seq2seq.h). */
#include <stdio.h>
#include <string.h>

#include "tensor/check.h"
#include "qkv/seq2seq.h"

qkv_seq2seq_batch *qkv_seq2seq_batch_new(const qkv_seq2seq *m, int cap)
{
    if (qkv__null("qkv_seq2seq_batch_new", "m", m))
        return NULL;
    if (cap < 1) {
        qkv_set_error("qkv_seq2seq_batch_new: seq2seq batch: capacity %d must be >= 1", cap);
        return NULL;
    }
    qkv_seq2seq_batch *b = qkv_calloc(sizeof *b);
    if (!b)
        return NULL;
    size_t ns = (size_t)cap * m->cfg.max_src, nt = (size_t)cap * m->cfg.max_tgt;
    b->cap = cap;
    b->src = qkv_alloc(ns * sizeof *b->src);
    b->src_valid = qkv_alloc(ns * sizeof *b->src_valid);
    b->dec_in = qkv_alloc(nt * sizeof *b->dec_in);
    b->dec_out = qkv_alloc(nt * sizeof *b->dec_out);
    if (!b->src || !b->src_valid || !b->dec_in || !b->dec_out) {
        qkv_seq2seq_batch_free(b);
        return NULL;
    }
    return b;
}

void qkv_seq2seq_batch_free(qkv_seq2seq_batch *b)
{
    if (!b)
        return;
    qkv_free(b->src);
    qkv_free(b->src_valid);
    qkv_free(b->dec_in);
    qkv_free(b->dec_out);
    qkv_free(b);
}

/* Check n strings s[i]: each has min_len..max_len characters, all in the
 * alphabet (scratch holds max_len ids). The longest length goes to *longest;
 * -1 naming the first bad string. */
static int check_all(const qkv_seq2seq *m, int n, const char *const *s, const char *what,
                     int min_len, int max_len, int32_t *scratch, int *longest)
{
    *longest = 0;
    for (int i = 0; i < n; i++) {
        if (!s[i])
            return qkv_set_error("%ss[%d] is NULL", what, i);
        size_t L = strlen(s[i]);
        if (L < (size_t)min_len || L > (size_t)max_len)
            return qkv_set_error("%s %d \"%.40s\" has %zu characters; the model takes "
                                 "%d to %d", what, i, s[i], L, min_len, max_len);
        if (qkv_encode(&m->chars, s[i], L, scratch) < 0) {
            char why[256];
            snprintf(why, sizeof why, "%s", qkv_last_error());
            return qkv_set_error("%s %d \"%.40s\": %s", what, i, s[i], why);
        }
        *longest = (int)L > *longest ? (int)L : *longest;
    }
    return 0;
}

/* The token ids of s (checked) into ids, after the special tokens; returns its length. */
static int put_ids(const qkv_seq2seq *m, const char *s, int32_t *ids)
{
    int len = (int)strlen(s);
    qkv_encode(&m->chars, s, (size_t)len, ids); /* cannot fail: check_all passed */
    for (int t = 0; t < len; t++)
        ids[t] += QKV_SEQ2SEQ_N_SPECIAL;
    return len;
}

int qkv_seq2seq_batch_fill(const qkv_seq2seq *m, qkv_seq2seq_batch *b, int n,
                           const char *const *inputs, const char *const *targets)
{
    const char *fn = "qkv_seq2seq_batch_fill";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "b", b) || qkv__null(fn, "inputs", inputs))
        return -1;
    if (n < 1 || n > b->cap)
        return qkv_set_error("%s: seq2seq batch: %d pairs do not fit a batch of %d", fn, n, b->cap);
    /* Check everything first (the buffers serve as scratch), so an error leaves b unused. */
    int Ts, longest_target = 0;
    if (check_all(m, n, inputs, "input", 1, m->cfg.max_src, b->src, &Ts) < 0 ||
        (targets && check_all(m, n, targets, "target", 0, m->cfg.max_tgt - 1, b->dec_out,
                              &longest_target) < 0))
        return qkv__fail_in(fn);
    /* Inputs: ids, then PAD up to the longest, marked invalid. */
    b->Ts = Ts;
    b->B = n;
    for (int i = 0; i < n; i++) {
        int len = put_ids(m, inputs[i], b->src + i * Ts);
        for (int t = 0; t < Ts; t++) {
            b->src_valid[i * Ts + t] = t < len;
            if (t >= len)
                b->src[i * Ts + t] = QKV_SEQ2SEQ_PAD;
        }
    }
    /* Decoder: reads BOS + target, predicts target + EOS; after that PAD, ignored. */
    int Tt = b->Tt = targets ? longest_target + 1 : 0;
    for (int i = 0; i < n && targets; i++) {
        int32_t *in = b->dec_in + i * Tt, *out = b->dec_out + i * Tt;
        int len = put_ids(m, targets[i], out);
        in[0] = QKV_SEQ2SEQ_BOS;
        memcpy(in + 1, out, (size_t)len * sizeof *in);
        out[len] = QKV_SEQ2SEQ_EOS;
        for (int t = len + 1; t < Tt; t++) {
            in[t] = QKV_SEQ2SEQ_PAD;
            out[t] = QKV_SEQ2SEQ_IGNORE;
        }
    }
    return 0;
}

void qkv_seq2seq_detokenize(const qkv_seq2seq *m, const int32_t *row, char *text)
{
    const char *fn = "qkv_seq2seq_detokenize";
    if (qkv__null(fn, "text", text))
        return;
    text[0] = '\0';
    if (qkv__null(fn, "m", m) || qkv__null(fn, "row", row))
        return;
    int n = 0;
    for (; n < m->cfg.max_tgt && row[n] >= QKV_SEQ2SEQ_N_SPECIAL && row[n] < m->vocab_size; n++)
        text[n] = (char)m->chars.byte[row[n] - QKV_SEQ2SEQ_N_SPECIAL];
    text[n] = '\0';
    if (n < m->cfg.max_tgt && (row[n] < 0 || row[n] >= m->vocab_size))
        qkv_set_error("%s: row[%d] is %d, outside the vocabulary [0, %d); the text stops there", fn,
                      n, (int)row[n], m->vocab_size);
}
