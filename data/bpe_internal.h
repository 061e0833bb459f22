/* Internal: the BPE tokenizer's insides, shared by data/bpe*.c. Not installed. */
#ifndef QKV_BPE_INTERNAL_H
#define QKV_BPE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "qkv/bpe.h"

/* A set of token pairs, each with an int value: open addressing on the pair
 * packed in 64 bits. Used for the merge ranks (encode) and the pair counts (train). */
typedef struct qkv__pairmap {
    uint64_t *keys; /* (left << 32) | right, or QKV__PAIR_NONE */
    int32_t *vals;  /* the value of each key */
    size_t cap;     /* slots, a power of two */
    size_t n;       /* keys held */
} qkv__pairmap;

#define QKV__PAIR_NONE UINT64_MAX

/* The pair (left, right) as a key. */
static inline uint64_t qkv__pair(int32_t left, int32_t right)
{
    return ((uint64_t)(uint32_t)left << 32) | (uint32_t)right;
}

/* FNV-1a, 32-bit, of n bytes: the chunks' hash in training and the .bpe file's
 * checksum (any one changed byte changes it: each step is a bijection). */
static inline uint32_t qkv__fnv1a(const unsigned char *p, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 16777619u;
    return h;
}

/* An empty map with room for n keys before it grows. 0, or -1 (no memory). */
int qkv__pairmap_init(qkv__pairmap *m, size_t n);

/* Free the map's arrays. */
void qkv__pairmap_free(qkv__pairmap *m);

/* The value of key, or -1 when it is not there. */
int32_t qkv__pairmap_get(const qkv__pairmap *m, uint64_t key);

/* The slot of key's value, added with value *fresh = val when new (growing the
 * map); NULL when there is no memory. */
int32_t *qkv__pairmap_put(qkv__pairmap *m, uint64_t key, int32_t val);

/* The end of the pre-split chunk that starts at pos (< len) in text: a run of
 * letters, digits or punctuation with at most one space before it, or a run of
 * whitespace (see qkv/bpe.h). (data/bpe_split.c) */
size_t qkv__bpe_chunk_end(const unsigned char *text, size_t len, size_t pos);

/* The pre-splits: qkv's ASCII classes, or GPT-2's pattern (data/bpe_gpt2.h). */
enum { QKV__SPLIT_ASCII = 1, QKV__SPLIT_GPT2 = 2 };

/* Inside, token ids are internal: the bytes, then token 256 + i of merge i, then
 * the extra tokens. A tokenizer loaded from GPT-2's files numbers its tokens as
 * vocab.json does, so the public ids go through to_ext and to_int. */
struct qkv_bpe {
    int n_merges;       /* merges; the vocabulary is 256 + n_merges + n_extra */
    int32_t *merges;    /* 2 × n_merges: left, right of token 256 + i (internal ids) */
    qkv__pairmap ranks; /* (left, right) -> i */
    uint32_t *offset;   /* internal id -> its first byte in bytes */
    uint32_t *length;   /* internal id -> its number of bytes */
    char *bytes;        /* every token's bytes, one after another */
    int split;          /* QKV__SPLIT_ASCII or QKV__SPLIT_GPT2 */
    int n_extra;        /* tokens no merge makes (GPT-2's <|endoftext|>), after the merges */
    int32_t *to_ext;    /* internal id -> public id; NULL when they are the same */
    int32_t *to_int;    /* public id -> internal id; NULL likewise */
};

/* Give bpe (fresh from qkv__bpe_make) GPT-2's pre-split, n_extra tokens of
 * their own bytes (token j's are extra_len[j] bytes, one after another in
 * extra) and public ids: to_ext[k] is internal token k's, a permutation of
 * [0, 256 + merges + n_extra). 0, or -1 with a message (not a permutation, no
 * memory). (data/bpe.c) */
int qkv__bpe_set_vocab(qkv_bpe *bpe, int n_extra, const char *extra, const uint32_t *extra_len,
                       const int32_t *to_ext);

/* The tokenizer of n merges, checked (each half an earlier token, no pair twice);
 * NULL with a message not yet naming a function. (data/bpe.c) */
qkv_bpe *qkv__bpe_make(const int32_t *merges, int n);

/* The serialized form of bpe (the body of a .bpe file) in a qkv_alloc'd block
 * of *len bytes; NULL with no memory. (data/bpe_file.c) */
unsigned char *qkv__bpe_to_bytes(const qkv_bpe *bpe, size_t *len);

/* The length of the serialized tokenizer that starts at p, within the avail
 * bytes there: 0 when p does not start with one (no magic, or it would not
 * fit). Its contents are not checked. (data/bpe_file.c) */
size_t qkv__bpe_bytes_len(const unsigned char *p, size_t avail);

/* The tokenizer serialized in the len bytes at p; NULL with a message saying
 * what is wrong (not prefixed with a function name). (data/bpe_file.c) */
qkv_bpe *qkv__bpe_from_bytes(const unsigned char *p, size_t len);

#endif
