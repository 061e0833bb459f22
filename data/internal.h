/* Internal: the vocabulary rule that data/ and the checkpoints share. Not installed. */
#ifndef QKV_DATA_INTERNAL_H
#define QKV_DATA_INTERNAL_H

#include <stdint.h>

/* 0 when bytes[0..n) can be a vocabulary: 0 to 256 strictly ascending
 * bytes (so no duplicates); else -1 with a message saying what is wrong.
 * The one rule both a checkpoint's save and its load apply. (data/tokenizer.c) */
int qkv__vocab_check(const uint8_t *bytes, long long n);

#endif
