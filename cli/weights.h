/* A GPT from weights made elsewhere (GPT-2's layout in a .safetensors file,
 * qkv_gpt_load_safetensors) for `qkv sample --ckpt FILE.safetensors` and
 * `qkv train --init FILE.safetensors`, and the tokenizer its ids are read in.
 * Such a file holds no tokenizer: --tokenizer names it. */
#ifndef QKV_CLI_WEIGHTS_H
#define QKV_CLI_WEIGHTS_H

#include <stdbool.h>

#include "qkv/qkv.h"

/* Whether path names a .safetensors file (by its name) rather than a qkv checkpoint. */
bool weights_is_safetensors(const char *path);

/* The model of the .safetensors file at path (n_head 0: from the file), cut
 * to a context of block positions (the first rows of wpe) when 0 < block <
 * its own. NULL with a message. */
qkv_gpt *weights_load(const char *path, int n_head, int block);

/* The tokenizer of a model of vocab_size ids named by spec, into vocab (one
 * token a byte) or *bpe (subwords; the caller frees it): "bytes", every byte
 * its own id (vocab_size 256), a folder of GPT-2's tokenizer files
 * (tokenizer_load_path: vocab.json and merges.txt, 50,257 tokens for GPT-2's
 * weights), or a qkv checkpoint whose tokenizer to use. Its size must be
 * vocab_size. 0, or -1 with a message. */
int weights_tokenizer(const char *spec, int vocab_size, qkv_tokenizer *vocab, qkv_bpe **bpe);

#endif
