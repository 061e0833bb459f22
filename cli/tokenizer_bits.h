/* Losses in bits per byte of text: the measure that compares models whose
 * tokens differ in length (a character model's token is one byte of text, a
 * subword model's several), so every loss the program prints is also given so. */
#ifndef QKV_CLI_TOKENIZER_BITS_H
#define QKV_CLI_TOKENIZER_BITS_H

#include <stddef.h>

/* Bytes of text per token of the byte tokenizer (qkv/data.h): one id, one byte. */
#define CHAR_BYTES_PER_TOKEN 1.0

/* A mean cross-entropy of nats_per_token over tokens that stand for
 * bytes_per_token bytes of text on average, in bits per byte of that text:
 * nats / ln 2 / bytes_per_token. */
double bits_per_byte(double nats_per_token, double bytes_per_token);

/* Append "; bits per byte: train T, val V" (the two losses in bits per byte)
 * to the string in buf (size bytes), cut short when it does not fit. */
void append_bits_per_byte(char *buf, size_t size, double train, double val,
                          double bytes_per_token);

#endif
