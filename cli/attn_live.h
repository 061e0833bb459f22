/* What `qkv attn --live` embeds in its page: the WebAssembly module that
 * `make wasm` built, and the model's weights as a checkpoint file's bytes. */
#ifndef QKV_CLI_ATTN_LIVE_H
#define QKV_CLI_ATTN_LIVE_H

#include "cli/viz/viz.h"

/* Fill live with the module (QKV_WASM's folder, else the wasm/ folder beside
 * this program: build/wasm for build/qkv) and the weights of the GPT m
 * (gpt_vocab its vocabulary), or of the encoder-decoder s2s when m is NULL,
 * saved without optimizer state, so the page holds what it runs. 0, or -1
 * with a message that says how to build the module when it is not there. */
int attn_live_make(attn_live *live, const qkv_gpt *m, const qkv_tokenizer *gpt_vocab,
                   const qkv_seq2seq *s2s);

/* Free what attn_live_make allocated. */
void attn_live_free(attn_live *live);

#endif
