/* The text a GPT reads as token ids (see tokenizer_text.h). */
#include "tokenizer_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sys/stat.h>
#include <unistd.h>

#include "qkv/file.h"

/* Put prefix and ": " before the last error message (copied first, as
 * qkv_set_error rewrites it). -1. */
static int prefixed(const char *prefix)
{
    char why[512];
    snprintf(why, sizeof why, "%s", qkv_last_error());
    return qkv_set_error("%s: %s", prefix, why);
}

qkv_bpe *tokenizer_load_path(const char *dir)
{
    static const char *const names[][2] = {{"vocab.json", "merges.txt"},
                                           {"encoder.json", "vocab.bpe"}};
    struct stat st;
    if (stat(dir, &st) == 0 && S_ISREG(st.st_mode))
        return qkv_bpe_load(dir); /* a tokenizer qkv_bpe_save wrote */
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        qkv_set_error("'%s' is neither a .bpe file nor a folder (of GPT-2's vocab.json and "
                      "merges.txt)", dir);
        return NULL;
    }
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char vocab[4096], merges[4096];
        snprintf(vocab, sizeof vocab, "%s/%s", dir, names[i][0]);
        snprintf(merges, sizeof merges, "%s/%s", dir, names[i][1]);
        if (access(vocab, F_OK) == 0 || access(merges, F_OK) == 0)
            return qkv_bpe_load_gpt2(vocab, merges); /* it names a missing half */
    }
    qkv_set_error("folder '%s' has neither vocab.json and merges.txt nor encoder.json and "
                  "vocab.bpe (GPT-2's tokenizer files)", dir);
    return NULL;
}

int tokenizer_parse(const char *spec, int *n)
{
    char *end;
    *n = 0;
    if (strcmp(spec, "chars") == 0)
        return 0;
    if (strncmp(spec, "bpe:", 4) != 0) { /* a folder of GPT-2's files: loaded to be checked */
        qkv_bpe *bpe = tokenizer_load_path(spec);
        *n = TOKENIZER_LOADED;
        qkv_bpe_free(bpe);
        return bpe ? 0 : prefixed("--tokenizer");
    }
    long v = strtol(spec + 4, &end, 10);
    if (*end || v < 256 || v > QKV_BPE_MAX_VOCAB)
        return qkv_set_error("--tokenizer: '%s' is not bpe:N with N in [256, %d]", spec,
                             QKV_BPE_MAX_VOCAB);
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
    else { /* name the file */
        char prefix[4200];
        snprintf(prefix, sizeof prefix, "corpus '%s'", path);
        prefixed(prefix);
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

int tokenizer_override(qkv_bpe **bpe, const char *dir, int model_vocab)
{
    qkv_bpe *files = tokenizer_load_path(dir);
    if (!files)
        return prefixed("--tokenizer");
    if (qkv_bpe_size(files) != model_vocab) {
        qkv_set_error("--tokenizer: the tokenizer in '%s' has %d tokens; the model reads %d", dir,
                      qkv_bpe_size(files), model_vocab);
        qkv_bpe_free(files);
        return -1;
    }
    qkv_bpe_free(*bpe);
    *bpe = files;
    return 0;
}
