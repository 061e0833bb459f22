/* The distinct chunks of a text and how often each occurs: what BPE training
 * counts pairs in (data/bpe_train.h). A text of a million bytes has some tens of
 * thousands of distinct chunks, so training works on those, not on the text. */
#include <string.h>

#include "data/bpe_train.h"

/* Room for one more word in the arrays of w. */
static int reserve_word(qkv__bpe_words *w)
{
    if (w->n < w->cap)
        return 0;
    int cap = w->cap ? 2 * w->cap : 1024;
    const unsigned char **src = qkv_alloc((size_t)cap * sizeof *src);
    int64_t *count = qkv_alloc((size_t)cap * sizeof *count);
    int32_t *len = qkv_alloc((size_t)cap * sizeof *len);
    uint32_t *hash = qkv_alloc((size_t)cap * sizeof *hash);
    if (!src || !count || !len || !hash) {
        qkv_free(src), qkv_free(count), qkv_free(len), qkv_free(hash);
        return -1;
    }
    if (w->n) {
        memcpy(src, w->src, (size_t)w->n * sizeof *src);
        memcpy(count, w->count, (size_t)w->n * sizeof *count);
        memcpy(len, w->len, (size_t)w->n * sizeof *len);
        memcpy(hash, w->hash, (size_t)w->n * sizeof *hash);
    }
    qkv_free(w->src), qkv_free(w->count), qkv_free(w->len), qkv_free(w->hash);
    w->src = src, w->count = count, w->len = len, w->hash = hash;
    w->cap = cap;
    return 0;
}

/* A table of 2·cap slots (-1 empty) holding every word's index by its hash. */
static int rebuild_table(qkv__bpe_words *w, size_t slots)
{
    int32_t *table = qkv_alloc(slots * sizeof *table);
    if (!table)
        return -1;
    memset(table, 0xff, slots * sizeof *table);
    for (int i = 0; i < w->n; i++) {
        size_t s = w->hash[i] & (slots - 1);
        while (table[s] >= 0)
            s = (s + 1) & (slots - 1);
        table[s] = i;
    }
    qkv_free(w->table);
    w->table = table;
    w->slots = slots;
    return 0;
}

/* Count one occurrence of the chunk p[0, n). */
static int add_chunk(qkv__bpe_words *w, const unsigned char *p, size_t n)
{
    uint32_t h = qkv__fnv1a(p, n);
    size_t s = h & (w->slots - 1);
    for (; w->table[s] >= 0; s = (s + 1) & (w->slots - 1)) {
        int i = w->table[s];
        if (w->hash[i] == h && (size_t)w->len[i] == n && memcmp(w->src[i], p, n) == 0) {
            w->count[i]++;
            return 0;
        }
    }
    if (n > INT32_MAX || reserve_word(w) < 0)
        return -1;
    int i = w->n++;
    w->src[i] = p, w->len[i] = (int32_t)n, w->count[i] = 1, w->hash[i] = h;
    w->table[s] = i;
    w->total += n;
    if (2 * (size_t)w->n > w->slots)
        return rebuild_table(w, 2 * w->slots);
    return 0;
}

int qkv__bpe_words_count(qkv__bpe_words *w, const unsigned char *text, size_t len)
{
    memset(w, 0, sizeof *w);
    if (rebuild_table(w, 4096) < 0)
        return -1;
    for (size_t pos = 0; pos < len;) {
        size_t end = qkv__bpe_chunk_end(text, len, pos);
        if (add_chunk(w, text + pos, end - pos) < 0)
            return -1;
        pos = end;
    }
    return 0;
}

void qkv__bpe_words_free(qkv__bpe_words *w)
{
    qkv_free(w->src), qkv_free(w->count), qkv_free(w->len), qkv_free(w->hash);
    qkv_free(w->table);
    memset(w, 0, sizeof *w);
}
