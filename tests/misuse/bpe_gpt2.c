/* Misuse cases for qkv_bpe_load_gpt2 (qkv/bpe.h): GPT-2's tokenizer files. */
#include <string.h>

#include "qkv/bpe.h"
#include "misuse.h"

/* A file of the given text in the case's folder; its path. */
static const char *file(const char *name, const char *text)
{
    const char *path = tmp_path(name);
    FILE *f = fopen(path, "w");
    MISUSE_ASSERT(f != NULL);
    fputs(text, f);
    fclose(f);
    return path;
}

MISUSE(qkv_bpe_load_gpt2, null_vocab_path)
{
    FAILS_NULL(qkv_bpe_load_gpt2(NULL, file("merges.txt", "")), "vocab_path is NULL");
}
MISUSE(qkv_bpe_load_gpt2, null_merges_path)
{
    FAILS_NULL(qkv_bpe_load_gpt2(file("vocab.json", "{}"), NULL), "merges_path is NULL");
}
MISUSE(qkv_bpe_load_gpt2, missing_vocab)
{
    FAILS_NULL(qkv_bpe_load_gpt2(tmp_path("none.json"), file("merges.txt", "")), "none.json");
}
MISUSE(qkv_bpe_load_gpt2, missing_merges)
{
    FAILS_NULL(qkv_bpe_load_gpt2(file("vocab.json", "{}"), tmp_path("none.txt")), "none.txt");
}
MISUSE(qkv_bpe_load_gpt2, directory) { FAILS_NULL(qkv_bpe_load_gpt2("/tmp", "/tmp"), "/tmp"); }
MISUSE(qkv_bpe_load_gpt2, not_json)
{
    FAILS_NULL(qkv_bpe_load_gpt2(file("vocab.json", "hello"), file("merges.txt", "")), "vocab.json",
               "byte 0");
}
MISUSE(qkv_bpe_load_gpt2, bytes_missing)
{
    FAILS_NULL(qkv_bpe_load_gpt2(file("vocab.json", "{\"a\": 0}"), file("merges.txt", "")),
               "vocab.json", "byte 0x00");
}
MISUSE(qkv_bpe_load_gpt2, a_checkpoint_as_vocab)
{
    FAILS_NULL(qkv_bpe_load_gpt2(ckpt_path(), file("merges.txt", "")), "vocab.json");
}
