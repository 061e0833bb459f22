/* The text a GPT reads as token ids: one per byte (the character tokenizer),
 * or subword tokens of a BPE tokenizer (qkv/bpe.h) that `--tokenizer bpe:N`
 * trains on the training split, or GPT-2's that `--tokenizer DIR` loads; the
 * checkpoint then carries it. */
#ifndef QKV_CLI_TOKENIZER_TEXT_H
#define QKV_CLI_TOKENIZER_TEXT_H

#include <stdio.h>

#include "qkv/bpe.h"
#include "qkv/data.h"

/* tokenizer_parse's *n for a tokenizer loaded from a path (a .bpe file or a
 * folder of GPT-2's tokenizer files). */
#define TOKENIZER_LOADED (-1)

/* A --tokenizer value: "chars" (one token a byte) gives *n 0; "bpe:N"
 * (256..QKV_BPE_MAX_VOCAB) gives *n N, a tokenizer to train; anything else is a
 * path (tokenizer_load_path), checked by loading it, and gives
 * TOKENIZER_LOADED. 0, or -1 with a message. */
int tokenizer_parse(const char *spec, int *n);

/* The tokenizer at path dir: a file qkv_bpe_save wrote (qkv_bpe_load), or a
 * folder of GPT-2's vocab.json and merges.txt, or encoder.json and vocab.bpe
 * (qkv_bpe_load_gpt2). NULL with a message. */
qkv_bpe *tokenizer_load_path(const char *dir);

/* Replace *bpe (NULL for a character model's) by the tokenizer in folder dir,
 * which must have the model's model_vocab tokens. 0, or -1 with a message
 * (*bpe then unchanged). */
int tokenizer_override(qkv_bpe **bpe, const char *dir, int model_vocab);

/* The corpus of the file at path. With *bpe set (a resumed BPE model's) its
 * ids are that tokenizer's; else with bpe_vocab > 0 a tokenizer of bpe_vocab
 * tokens is first trained on the first 90% of the bytes, the training split
 * to within a token, and left in *bpe (the caller frees it); else it is a
 * character corpus of vocab (NULL: the text's own). *bytes_per_token is the
 * text's bytes over its tokens (1 for characters). NULL with a message. */
qkv_corpus *tokenizer_corpus(const char *path, const qkv_tokenizer *vocab, int bpe_vocab,
                             qkv_bpe **bpe, double *bytes_per_token);

/* Write token id's text to f: its byte (vocab) or its bytes (bpe, when not
 * NULL). The last byte written, or -1 for an id of neither. */
int tokenizer_write(FILE *f, const qkv_tokenizer *vocab, const qkv_bpe *bpe, int32_t id);

#endif
