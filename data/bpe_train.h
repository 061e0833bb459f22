/* Internal: BPE training's pieces (data/bpe_words.c, data/bpe_train.c). Not installed. */
#ifndef QKV_BPE_TRAIN_H
#define QKV_BPE_TRAIN_H

#include "data/bpe_internal.h"

/* The distinct chunks of a text, each with its number of occurrences. */
typedef struct qkv__bpe_words {
    int n, cap;                /* words, and room for them */
    const unsigned char **src; /* word -> its bytes (in the caller's text) */
    int32_t *len;              /* word -> its number of bytes */
    int64_t *count;            /* word -> how often it occurs */
    uint32_t *hash;            /* word -> the hash of its bytes */
    int32_t *table;            /* hash slots -> word, -1 empty */
    size_t slots;              /* slots in table, a power of two */
    size_t total;              /* the sum of len over the words */
} qkv__bpe_words;

/* The chunks (qkv__bpe_chunk_end) of the len bytes of text into w, which keeps
 * pointers into text. 0, or -1 when out of memory (free w either way). */
int qkv__bpe_words_count(qkv__bpe_words *w, const unsigned char *text, size_t len);

/* Free what qkv__bpe_words_count made. */
void qkv__bpe_words_free(qkv__bpe_words *w);

#endif
