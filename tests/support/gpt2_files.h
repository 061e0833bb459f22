/* GPT-2's tokenizer files written by tests: bytes spelt through GPT-2's
 * byte-to-unicode table, as vocab.json and merges.txt spell them. */
#ifndef QKV_TEST_GPT2_FILES_H
#define QKV_TEST_GPT2_FILES_H

#include <stddef.h>

/* The characters spelling the bytes b[0, n) as UTF-8 into out (room for 6n);
 * JSON escapes (\u for every code point from 256 on, as GPT-2's encoder.json
 * has them; \" and \\) when json. The length. */
size_t qkv_test_gpt2_spell(const char *b, size_t n, char *out, int json);

/* A vocab.json (malloc'd, NUL-terminated) of the 256 bytes, byte b's id b,
 * then the pairs in more ("\"Ġt\": 256, ..."; "" for none). */
char *qkv_test_gpt2_byte_vocab(const char *more);

#endif
