/* A text as token ids, split 90/10, from memory or from a file (see qkv/data.h). */
#include "qkv/data.h"

#include <stdio.h>

#include "tensor/check.h"
#include "data/internal.h"
#include "io/internal.h"

/* The one place a corpus is built: len bytes of text encoded with vocab (or
 * the text's own vocabulary when NULL). what names the text in messages. */
static qkv_corpus *build(const char *what, const char *text, size_t len,
                         const qkv_tokenizer *vocab)
{
    if (len == 0) {
        qkv_set_error("%s is empty", what);
        return NULL;
    }
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
        /* Keep encode's message (which character, where) and name the text. */
        qkv__error_prefix("%s", what);
        qkv_corpus_free(c);
        return NULL;
    }
    c->len = len;
    c->n_train = len * 9 / 10; /* nanoGPT's int(0.9 * n), in integers */
    return c;
}

qkv_corpus *qkv_corpus_from_text(const char *text, size_t len, const qkv_tokenizer *vocab)
{
    if (qkv__null("qkv_corpus_from_text", "text", text))
        return NULL;
    return build("qkv_corpus_from_text: the text", text, len, vocab);
}

qkv_corpus *qkv_corpus_load(const char *path, const qkv_tokenizer *vocab)
{
    if (qkv__null("qkv_corpus_load", "path", path))
        return NULL;
    size_t len;
    unsigned char *text = qkv__read_file(path, &len);
    qkv_corpus *c = NULL;
    if (text) {
        char what[600];
        snprintf(what, sizeof what, "corpus '%s'", path);
        c = build(what, (const char *)text, len, vocab);
        qkv_free(text);
    }
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
