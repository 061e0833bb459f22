/* Internal: GPT-2's tokenizer files and pre-split, shared by data/bpe_gpt2*.c
 * and data/bpe*.c. Not installed. */
#ifndef QKV_BPE_GPT2_H
#define QKV_BPE_GPT2_H

#include <stddef.h>
#include <stdint.h>

/* The code point ranges [lo, hi] of Unicode's letters (L*) and numbers (N*),
 * sorted and disjoint. (data/bpe_gpt2_classes.c, made by data/unicode/gen_classes.py) */
extern const int qkv__unicode_n_letters;
extern const uint32_t qkv__unicode_letters[][2];
extern const int qkv__unicode_n_numbers;
extern const uint32_t qkv__unicode_numbers[][2];

/* The end of the chunk of GPT-2's pre-split that starts at pos (< len) in text:
 * the first match, at pos, of 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+|
 * ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ over the text's code points. A byte that is not
 * part of valid UTF-8 is a code point of its own, neither letter, number nor
 * space. (data/bpe_gpt2_split.c) */
size_t qkv__bpe_gpt2_chunk_end(const unsigned char *text, size_t len, size_t pos);

/* The code point at p (n >= 1 bytes there) into *c, and its length in bytes.
 * Strict UTF-8 (no overlong forms, surrogates or values past 0x10FFFF): an
 * invalid or cut-short sequence is its first byte alone, with *valid 0.
 * (data/bpe_gpt2_split.c) */
size_t qkv__utf8_decode(const unsigned char *p, size_t n, uint32_t *c, int *valid);

/* vocab.json's object of "token": id pairs: every token's UTF-8 text one after
 * another in text (NUL between them), its start in off and its length in len. */
typedef struct qkv__gpt2_vocab {
    int n;         /* pairs */
    char *text;    /* the tokens' UTF-8 */
    size_t *off;   /* token k starts at text + off[k] */
    uint32_t *len; /* and has len[k] bytes */
    int32_t *id;   /* its id */
} qkv__gpt2_vocab;

/* Parse the len bytes of a vocab.json at p into v: one JSON object whose values
 * are non-negative integers below 2^31 (strings with every JSON escape, \u with
 * surrogate pairs). 0, or -1 with a message naming the byte offset and what is
 * wrong. (data/bpe_gpt2_json.c) */
int qkv__gpt2_vocab_parse(qkv__gpt2_vocab *v, const char *p, size_t len);

/* Free v's arrays. */
void qkv__gpt2_vocab_free(qkv__gpt2_vocab *v);

#endif
