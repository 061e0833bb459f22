/* The text a GPT reads as token ids (see tokenizer_text.h). */
#include "tokenizer_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qkv/file.h"

int tokenizer_parse(const char *spec, int *n)
{
    char *end;
    if (strcmp(spec, "chars") == 0) {
        *n = 0;
        return 0;
    }
    long v = strncmp(spec, "bpe:", 4) == 0 ? strtol(spec + 4, &end, 10) : -1;
    if (v < 0 || *end || v < 256 || v > QKV_BPE_MAX_VOCAB)
        return qkv_set_error("--tokenizer: '%s' is neither chars nor bpe:N with N in [256, %d]",
                             spec, QKV_BPE_MAX_VOCAB);
    *n = (int)v;
    return 0;
}

qkv_corpus *tokenizer_corpus(const char *path, const qkv_tokenizer *vocab, int bpe_vocab,
                             qkv_bpe **bpe, double *bytes_per_token)
{
    *bytes_per_token = 1;
    if (!*bpe && bpe_vocab == 0)
        return qkv_corpus_load(path, vocab);
    size_t len;
    char *text = (char *)qkv_input_read(path, &len);
    if (!text)
        return NULL;
    qkv_corpus *c = NULL;
    if (*bpe || (*bpe = qkv_bpe_train(text, len * 9 / 10, bpe_vocab)))
        c = qkv_bpe_corpus(*bpe, text, len);
    if (c)
        *bytes_per_token = (double)len / (double)c->len;
    else { /* name the file; the message is copied, as qkv_set_error rewrites it */
        char why[512];
        snprintf(why, sizeof why, "%s", qkv_last_error());
        qkv_set_error("corpus '%s': %s", path, why);
    }
    qkv_free(text);
    return c;
}

int tokenizer_write(FILE *f, const qkv_tokenizer *vocab, const qkv_bpe *bpe, int32_t id)
{
    size_t n = 1;
    char c;
    const char *bytes = bpe ? qkv_bpe_token(bpe, id, &n)
                            : qkv_decode(vocab, &id, 1, &c) == 0 ? &c : NULL;
    if (!bytes || n == 0)
        return -1;
    fwrite(bytes, 1, n, f);
    return (unsigned char)bytes[n - 1];
}
