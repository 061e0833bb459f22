/* A corpus of BPE tokens (see qkv/bpe.h): the text encoded once, split 90/10
 * by tokens as a character corpus is, so its batches and evaluations are the
 * same code. */
#include "tensor/check.h"
#include "data/bpe_internal.h"

qkv_corpus *qkv_bpe_corpus(const qkv_bpe *bpe, const char *text, size_t len)
{
    const char *fn = "qkv_bpe_corpus";
    if (qkv__null(fn, "bpe", bpe) || qkv__null(fn, "text", text))
        return NULL;
    if (len == 0) {
        qkv_set_error("%s: the text is empty", fn);
        return NULL;
    }
    qkv_corpus *c = qkv_calloc(sizeof *c);
    if (!c || !(c->ids = qkv_alloc(len * sizeof *c->ids))) {
        qkv_corpus_free(c);
        qkv_set_error("%s: out of memory for the ids of %zu bytes", fn, len);
        return NULL;
    }
    qkv_tokenizer_from_bytes(&c->tok, NULL, 0); /* no byte vocabulary: the ids are bpe's */
    long long n = qkv_bpe_encode(bpe, text, len, c->ids);
    if (n < 0) {
        qkv_corpus_free(c);
        qkv__error_prefix("%s", fn);
        return NULL;
    }
    c->len = (size_t)n;
    c->n_train = c->len * 9 / 10; /* as qkv_corpus_from_text splits */
    return c;
}
