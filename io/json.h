/* Internal: the JSON that qkv reads, shared by its two readers of it (GPT-2's
 * vocab.json in data/bpe_gpt2_json.c, a safetensors header in
 * io/safetensors_header.c): whitespace and strings, every escape taken back
 * (\u with surrogate pairs), errors naming the byte. Each reader keeps the
 * grammar of its own file. */
#ifndef QKV_IO_JSON_H
#define QKV_IO_JSON_H

#include <stddef.h>

/* A JSON text p[0, len) read at byte at; where names a place in errors
 * ("byte", "header byte"). */
typedef struct qkv__json {
    const char *p;
    size_t len, at;
    const char *where;
} qkv__json;

/* -1, with the message "<where> <at>: what". */
int qkv__json_fail(const qkv__json *j, const char *what);

/* Step over spaces, tabs, newlines and returns. */
void qkv__json_skip_space(qkv__json *j);

/* The string at j (at its opening quote), its escapes taken back, into out,
 * which has room for as many bytes as the string's source (no escape grows);
 * its length in *n. A \u0000 gives a NUL byte: the caller refuses it where it
 * must. 0, or -1 with a message. */
int qkv__json_string(qkv__json *j, char *out, size_t *n);

#endif
