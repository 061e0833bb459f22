/* A GPT from a .safetensors file and its tokenizer (see weights.h). */
#include "weights.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "tokenizer_text.h"

bool weights_is_safetensors(const char *path)
{
    size_t n = strlen(path), k = strlen(".safetensors");
    return n >= k && strcmp(path + n - k, ".safetensors") == 0;
}

/* m with a context of block positions: its parameters copied by name, wpe's first block rows. */
static qkv_gpt *shorten(const qkv_gpt *m, int block)
{
    qkv_gpt_config c = m->cfg;
    c.block_size = block;
    qkv_gpt *s = qkv_gpt_new(&c, 0);
    for (int i = 0; s && i < s->params->count; i++) {
        const qkv_tensor *to = s->params->items[i].t;
        const qkv_param *from = qkv_params_find(m->params, s->params->items[i].name);
        memcpy(to->data, from->t->data, to->size * sizeof *to->data); /* wpe: its first rows */
    }
    return s;
}

qkv_gpt *weights_load(const char *path, int n_head, int block)
{
    qkv_gpt *m = qkv_gpt_load_safetensors(path, n_head);
    if (!m || block <= 0 || block >= m->cfg.block_size)
        return m;
    qkv_gpt *s = shorten(m, block);
    qkv_gpt_free(m);
    return s;
}

int weights_tokenizer(const char *spec, int vocab_size, qkv_tokenizer *vocab, qkv_bpe **bpe)
{
    *bpe = NULL;
    int size;
    struct stat st;
    if (strcmp(spec, "bytes") == 0) {
        uint8_t all[256];
        for (int i = 0; i < 256; i++)
            all[i] = (uint8_t)i;
        qkv_tokenizer_from_bytes(vocab, all, 256);
        size = 256;
    } else if (stat(spec, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (!(*bpe = tokenizer_load_path(spec)))
            return -1;
        size = qkv_bpe_size(*bpe);
    } else {
        /* A qkv checkpoint: its model is read only for its tokenizer. */
        qkv_gpt *m = qkv_gpt_load_bpe(spec, vocab, bpe);
        if (!m) { /* the message is copied, as qkv_set_error rewrites it */
            char why[512];
            snprintf(why, sizeof why, "%s", qkv_last_error());
            return qkv_set_error("--tokenizer '%s' is neither bytes, a folder of GPT-2's "
                                 "tokenizer files nor a qkv checkpoint: %s",
                                 spec, why);
        }
        size = m->cfg.vocab_size;
        qkv_gpt_free(m);
    }
    if (size == vocab_size)
        return 0;
    qkv_bpe_free(*bpe);
    *bpe = NULL;
    return qkv_set_error("--tokenizer '%s' has %d tokens, the model %d", spec, size, vocab_size);
}
