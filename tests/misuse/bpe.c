/* Misuse cases for qkv/bpe.h: the byte-level BPE tokenizer. */
#include "qkv/bpe.h"
#include "misuse.h"

/* The tokenizer of "hello hello" with room for 300 tokens (made once per case). */
static qkv_bpe *bpe(void)
{
    static qkv_bpe *b;
    if (!b)
        b = qkv_bpe_train("hello hello", 11, 300);
    MISUSE_ASSERT(b != NULL);
    return b;
}

MISUSE(qkv_bpe_train, null_text) { FAILS_NULL(qkv_bpe_train(NULL, 3, 300), "text is NULL"); }
MISUSE(qkv_bpe_train, vocab_below_256)
{
    FAILS_NULL(qkv_bpe_train("abc", 3, 255), "vocab_size", "255");
}
MISUSE(qkv_bpe_train, vocab_too_large)
{
    FAILS_NULL(qkv_bpe_train("abc", 3, QKV_BPE_MAX_VOCAB + 1), "vocab_size");
}
MISUSE(qkv_bpe_from_merges, null_merges)
{
    FAILS_NULL(qkv_bpe_from_merges(NULL, 2), "merges is NULL");
}
MISUSE(qkv_bpe_from_merges, n_negative)
{
    FAILS_NULL(qkv_bpe_from_merges((int32_t[]){1, 2}, -1), "-1 merges");
}
MISUSE(qkv_bpe_from_merges, token_not_made_yet)
{
    FAILS_NULL(qkv_bpe_from_merges((int32_t[]){'a', 'b', 256, 258}, 2), "merge 1", "258");
}
MISUSE(qkv_bpe_from_merges, negative_token)
{
    FAILS_NULL(qkv_bpe_from_merges((int32_t[]){-5, 'b'}, 1), "merge 0", "-5");
}
MISUSE(qkv_bpe_from_merges, pair_twice)
{
    FAILS_NULL(qkv_bpe_from_merges((int32_t[]){'a', 'b', 'a', 'b'}, 2), "merge 1", "merge 0");
}
MISUSE(qkv_bpe_free, null) { HARMLESS((qkv_bpe_free(NULL), 0)); }
MISUSE(qkv_bpe_size, null_bpe) { FAILS_INT(qkv_bpe_size(NULL), "bpe is NULL"); }
MISUSE(qkv_bpe_merge, null_bpe)
{
    int32_t l, r;
    FAILS_INT(qkv_bpe_merge(NULL, 0, &l, &r), "bpe is NULL");
}
MISUSE(qkv_bpe_merge, null_left)
{
    int32_t r;
    FAILS_INT(qkv_bpe_merge(bpe(), 0, NULL, &r), "left is NULL");
}
MISUSE(qkv_bpe_merge, null_right)
{
    int32_t l;
    FAILS_INT(qkv_bpe_merge(bpe(), 0, &l, NULL), "right is NULL");
}
MISUSE(qkv_bpe_merge, i_past_the_end)
{
    int32_t l, r;
    FAILS_INT(qkv_bpe_merge(bpe(), 44, &l, &r), "i is 44");
}
MISUSE(qkv_bpe_merge, i_negative)
{
    int32_t l, r;
    FAILS_INT(qkv_bpe_merge(bpe(), -1, &l, &r), "i is -1");
}
MISUSE(qkv_bpe_token, null_bpe)
{
    size_t n;
    FAILS_NULL(qkv_bpe_token(NULL, 0, &n), "bpe is NULL");
}
MISUSE(qkv_bpe_token, null_len) { FAILS_NULL(qkv_bpe_token(bpe(), 0, NULL), "len is NULL"); }
MISUSE(qkv_bpe_token, id_past_the_end)
{
    size_t n;
    FAILS_NULL(qkv_bpe_token(bpe(), 300, &n), "id 300");
}
MISUSE(qkv_bpe_token, id_negative)
{
    size_t n;
    FAILS_NULL(qkv_bpe_token(bpe(), -2, &n), "id -2");
}
MISUSE(qkv_bpe_encode, null_bpe)
{
    FAILS_INT(qkv_bpe_encode(NULL, "a", 1, (int32_t[1]){0}), "bpe is NULL");
}
MISUSE(qkv_bpe_encode, null_text)
{
    FAILS_INT(qkv_bpe_encode(bpe(), NULL, 1, (int32_t[1]){0}), "text is NULL");
}
MISUSE(qkv_bpe_encode, null_ids) { FAILS_INT(qkv_bpe_encode(bpe(), "a", 1, NULL), "ids is NULL"); }
MISUSE(qkv_bpe_decode, null_bpe)
{
    FAILS_INT(qkv_bpe_decode(NULL, (int32_t[]){0}, 1, (char[1]){0}, 1), "bpe is NULL");
}
MISUSE(qkv_bpe_decode, null_ids)
{
    FAILS_INT(qkv_bpe_decode(bpe(), NULL, 1, (char[1]){0}, 1), "ids is NULL");
}
MISUSE(qkv_bpe_decode, null_text_with_cap)
{
    FAILS_INT(qkv_bpe_decode(bpe(), (int32_t[]){0}, 1, NULL, 1), "text is NULL");
}
MISUSE(qkv_bpe_decode, id_out_of_range)
{
    FAILS_INT(qkv_bpe_decode(bpe(), (int32_t[]){'a', 5000}, 2, (char[8]){0}, 8), "5000",
              "position 1");
}
MISUSE(qkv_bpe_decode, id_negative)
{
    FAILS_INT(qkv_bpe_decode(bpe(), (int32_t[]){-1}, 1, (char[8]){0}, 8), "-1", "position 0");
}
MISUSE(qkv_bpe_decode, cap_too_small)
{
    FAILS_INT(qkv_bpe_decode(bpe(), (int32_t[]){'a', 'b', 'c'}, 3, (char[2]){0}, 2), "cap");
}
MISUSE(qkv_bpe_save, null_bpe) { FAILS_INT(qkv_bpe_save(NULL, tmp_path("t.bpe")), "bpe is NULL"); }
MISUSE(qkv_bpe_save, null_path) { FAILS_INT(qkv_bpe_save(bpe(), NULL), "path is NULL"); }
MISUSE(qkv_bpe_save, directory) { FAILS_INT(qkv_bpe_save(bpe(), "/tmp"), "/tmp"); }
MISUSE(qkv_bpe_save, missing_directory)
{
    FAILS_INT(qkv_bpe_save(bpe(), tmp_path("no/such/t.bpe")), "no/such/t.bpe");
}
MISUSE(qkv_bpe_load, null_path) { FAILS_NULL(qkv_bpe_load(NULL), "path is NULL"); }
MISUSE(qkv_bpe_load, missing) { FAILS_NULL(qkv_bpe_load(tmp_path("missing.bpe")), "missing.bpe"); }
MISUSE(qkv_bpe_load, directory) { FAILS_NULL(qkv_bpe_load("/tmp"), "/tmp"); }
MISUSE(qkv_bpe_load, not_a_bpe_file)
{
    FAILS_NULL(qkv_bpe_load(text_path()), "text.txt", "not a qkv BPE");
}
MISUSE(qkv_bpe_load, a_checkpoint) { FAILS_NULL(qkv_bpe_load(ckpt_path()), "not a qkv BPE"); }
MISUSE(qkv_bpe_corpus, null_bpe) { FAILS_NULL(qkv_bpe_corpus(NULL, "ab", 2), "bpe is NULL"); }
MISUSE(qkv_bpe_corpus, null_text) { FAILS_NULL(qkv_bpe_corpus(bpe(), NULL, 2), "text is NULL"); }
MISUSE(qkv_bpe_corpus, empty_text) { FAILS_NULL(qkv_bpe_corpus(bpe(), "ab", 0), "empty"); }

/* A GPT with bpe()'s vocabulary. */
static qkv_gpt *bpe_gpt(void)
{
    qkv_gpt_config mc = {.vocab_size = qkv_bpe_size(bpe()), .block_size = 4, .n_layer = 1,
                         .n_head = 1, .n_embd = 8};
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    MISUSE_ASSERT(m != NULL);
    return m;
}

MISUSE(qkv_gpt_training_model_bpe, null_m)
{
    qkv_training_model tm;
    FAILS_INT(qkv_gpt_training_model_bpe(NULL, corpus(), bpe(), &tm), "m is NULL");
}
MISUSE(qkv_gpt_training_model_bpe, null_corpus)
{
    qkv_training_model tm;
    FAILS_INT(qkv_gpt_training_model_bpe(bpe_gpt(), NULL, bpe(), &tm), "corpus is NULL");
}
MISUSE(qkv_gpt_training_model_bpe, null_bpe)
{
    qkv_training_model tm;
    FAILS_INT(qkv_gpt_training_model_bpe(bpe_gpt(), corpus(), NULL, &tm), "bpe is NULL");
}
MISUSE(qkv_gpt_training_model_bpe, null_out)
{
    FAILS_INT(qkv_gpt_training_model_bpe(bpe_gpt(), corpus(), bpe(), NULL), "out is NULL");
}
MISUSE(qkv_gpt_training_model_bpe, character_corpus)
{
    qkv_training_model tm;
    FAILS_INT(qkv_gpt_training_model_bpe(bpe_gpt(), corpus(), bpe(), &tm), "characters");
}
MISUSE(qkv_gpt_training_model_bpe, tokenizer_of_another_size)
{
    qkv_training_model tm;
    FAILS_INT(qkv_gpt_training_model_bpe(gpt(), corpus(), bpe(), &tm), "tokens", "vocabulary is 5");
}
MISUSE(qkv_gpt_load_bpe, null_path)
{
    qkv_tokenizer v;
    qkv_bpe *b;
    FAILS_NULL(qkv_gpt_load_bpe(NULL, &v, &b), "path is NULL");
}
MISUSE(qkv_gpt_load_bpe, null_vocab)
{
    qkv_bpe *b;
    FAILS_NULL(qkv_gpt_load_bpe(ckpt_path(), NULL, &b), "vocab is NULL");
}
MISUSE(qkv_gpt_load_bpe, null_bpe)
{
    qkv_tokenizer v;
    FAILS_NULL(qkv_gpt_load_bpe(ckpt_path(), &v, NULL), "bpe is NULL");
}
MISUSE(qkv_gpt_load_bpe, missing)
{
    qkv_tokenizer v;
    qkv_bpe *b;
    FAILS_NULL(qkv_gpt_load_bpe(tmp_path("none.ckpt"), &v, &b), "none.ckpt");
}
MISUSE(qkv_gpt_load_bpe, a_bpe_file)
{
    qkv_tokenizer v;
    qkv_bpe *b;
    MISUSE_ASSERT(qkv_bpe_save(bpe(), tmp_path("t.bpe")) == 0);
    FAILS_NULL(qkv_gpt_load_bpe(tmp_path("t.bpe"), &v, &b), "t.bpe");
}
