/* A text file as token ids, split 90/10 (see qkv/data.h). */
#include "qkv/data.h"

#include "../tensor/check.h"
#include "internal.h"

/* The corpus of len (> 0) bytes of text read from path. */
static qkv_corpus *encode_text(const char *path, const char *text, size_t len,
                               const qkv_tokenizer *vocab)
{
    qkv_corpus *c = qkv_calloc(sizeof *c);
    if (!c || !(c->ids = qkv_alloc(len * sizeof(int32_t)))) {
        qkv_corpus_free(c);
        return NULL;
    }
    if (vocab)
        c->tok = *vocab;
    else
        qkv_tokenizer_build(&c->tok, text, len);
    if (qkv_encode(&c->tok, text, len, c->ids) < 0) {
        /* Keep encode's message (which character, where) and name the file. */
        qkv__error_prefix("corpus '%s'", path);
        qkv_corpus_free(c);
        return NULL;
    }
    c->len = len;
    c->n_train = len * 9 / 10; /* nanoGPT's int(0.9 * n), in integers */
    return c;
}

qkv_corpus *qkv_corpus_load(const char *path, const qkv_tokenizer *vocab)
{
    if (qkv__null("qkv_corpus_load", "path", path))
        return NULL;
    size_t len;
    unsigned char *text = qkv__read_file(path, &len);
    if (!text) {
        qkv__fail_in("qkv_corpus_load");
        return NULL;
    }
    qkv_corpus *c = NULL;
    if (len == 0)
        qkv_set_error("corpus '%s' is empty", path);
    else
        c = encode_text(path, (const char *)text, len, vocab);
    qkv_free(text);
    if (!c)
        qkv__fail_in("qkv_corpus_load");
    return c;
}

void qkv_corpus_free(qkv_corpus *c)
{
    if (!c)
        return;
    qkv_free(c->ids);
    qkv_free(c);
}
