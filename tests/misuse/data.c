/* Misuse cases for qkv/data.h: the tokenizer, the corpus, batches. */
#include "misuse.h"

MISUSE(qkv_tokenizer_build, null_tok)
{
    REFUSES(qkv_tokenizer_build(NULL, "abc", 3), "tok is NULL");
}
MISUSE(qkv_tokenizer_build, null_text)
{
    qkv_tokenizer t;
    REFUSES(qkv_tokenizer_build(&t, NULL, 3), "text is NULL");
    MISUSE_ASSERT(t.size == 0); /* an empty vocabulary, not garbage */
}
MISUSE(qkv_tokenizer_from_bytes, null_tok)
{
    FAILS_INT(qkv_tokenizer_from_bytes(NULL, (uint8_t[]){1}, 1), "tok is NULL");
}
MISUSE(qkv_tokenizer_from_bytes, null_bytes)
{
    qkv_tokenizer t;
    FAILS_INT(qkv_tokenizer_from_bytes(&t, NULL, 2), "bytes is NULL");
}
MISUSE(qkv_tokenizer_from_bytes, n_negative)
{
    qkv_tokenizer t;
    FAILS_INT(qkv_tokenizer_from_bytes(&t, (uint8_t[]){1}, -1), "-1");
}
MISUSE(qkv_tokenizer_from_bytes, n_300)
{
    qkv_tokenizer t;
    static uint8_t bytes[300];
    FAILS_INT(qkv_tokenizer_from_bytes(&t, bytes, 300), "300");
}
MISUSE(qkv_encode, null_tok)
{
    FAILS_INT(qkv_encode(NULL, "a", 1, (int32_t[1]){0}), "tok is NULL");
}
MISUSE(qkv_encode, null_text)
{
    FAILS_INT(qkv_encode(tok(), NULL, 1, (int32_t[1]){0}), "text is NULL");
}
MISUSE(qkv_encode, null_ids) { FAILS_INT(qkv_encode(tok(), "a", 1, NULL), "ids is NULL"); }
MISUSE(qkv_encode, unknown_byte)
{
    FAILS_INT(qkv_encode(tok(), "az", 2, (int32_t[2]){0}), "'z'", "position 1");
}
MISUSE(qkv_encode, corrupt_tokenizer)
{
    qkv_tokenizer t = *tok();
    t.id['a'] = 999; /* an id table no tokenizer builds */
    FAILS_INT(qkv_encode(&t, "a", 1, (int32_t[1]){0}), "tok");
}
MISUSE(qkv_decode, null_tok)
{
    FAILS_INT(qkv_decode(NULL, (int32_t[]){0}, 1, (char[1]){0}), "tok is NULL");
}
MISUSE(qkv_decode, null_ids) { FAILS_INT(qkv_decode(tok(), NULL, 1, (char[1]){0}), "ids is NULL"); }
MISUSE(qkv_decode, null_text)
{
    FAILS_INT(qkv_decode(tok(), (int32_t[]){0}, 1, NULL), "text is NULL");
}
MISUSE(qkv_decode, id_out_of_range)
{
    FAILS_INT(qkv_decode(tok(), (int32_t[]){0, 3}, 2, (char[2]){0}), "3", "position 1");
}
MISUSE(qkv_decode, corrupt_size)
{
    qkv_tokenizer t = *tok();
    t.size = 1000;
    FAILS_INT(qkv_decode(&t, (int32_t[]){500}, 1, (char[1]){0}), "tok");
}
MISUSE(qkv_corpus_load, null_path) { FAILS_NULL(qkv_corpus_load(NULL, NULL), "path is NULL"); }
MISUSE(qkv_corpus_load, missing)
{
    FAILS_NULL(qkv_corpus_load(tmp_path("missing.txt"), NULL), "missing.txt");
}
MISUSE(qkv_corpus_load, directory) { FAILS_NULL(qkv_corpus_load("/tmp", NULL), "/tmp"); }
MISUSE(qkv_corpus_load, byte_outside_vocab)
{
    FAILS_NULL(qkv_corpus_load(text_path(), tok()), "text.txt");
}
MISUSE(qkv_corpus_from_text, null_text)
{
    FAILS_NULL(qkv_corpus_from_text(NULL, 3, NULL), "text is NULL");
}
MISUSE(qkv_corpus_from_text, null_text_len_0)
{
    FAILS_NULL(qkv_corpus_from_text(NULL, 0, NULL), "text is NULL");
}
MISUSE(qkv_corpus_from_text, len_0) { FAILS_NULL(qkv_corpus_from_text("abc", 0, NULL), "empty"); }
MISUSE(qkv_corpus_from_text, byte_outside_vocab)
{
    FAILS_NULL(qkv_corpus_from_text("abz", 3, tok()), "'z'", "position 2");
}
MISUSE(qkv_corpus_free, null) { HARMLESS((qkv_corpus_free(NULL), 0)); }
MISUSE(qkv_batcher_init, null_sampler)
{
    FAILS_INT(qkv_batcher_init(NULL, corpus(), QKV_SPLIT_TRAIN, 2, 8, 1), "s is NULL");
}
MISUSE(qkv_batcher_init, null_corpus)
{
    qkv_batcher s;
    FAILS_INT(qkv_batcher_init(&s, NULL, QKV_SPLIT_TRAIN, 2, 8, 1), "c is NULL");
}
MISUSE(qkv_batcher_init, split_7)
{
    qkv_batcher s;
    FAILS_INT(qkv_batcher_init(&s, corpus(), (qkv_split)7, 2, 8, 1), "split 7");
}
MISUSE(qkv_batcher_init, batch_0)
{
    qkv_batcher s;
    FAILS_INT(qkv_batcher_init(&s, corpus(), QKV_SPLIT_TRAIN, 0, 8, 1), "0");
}
MISUSE(qkv_batcher_init, block_too_long)
{
    qkv_batcher s;
    FAILS_INT(qkv_batcher_init(&s, corpus(), QKV_SPLIT_VAL, 2, 1 << 20, 1), "1048577");
}
MISUSE(qkv_batcher_init, batch_times_block_overflows)
{
    qkv_batcher s;
    FAILS_INT(qkv_batcher_init(&s, corpus(), QKV_SPLIT_TRAIN, 1 << 30, 8, 1), "batch");
}
MISUSE(qkv_batcher_next, null_sampler)
{
    REFUSES(qkv_batcher_next(NULL, (int32_t[16]){0}, (int32_t[16]){0}), "s is NULL");
}
MISUSE(qkv_batcher_next, null_x)
{
    qkv_batcher s;
    MISUSE_ASSERT(qkv_batcher_init(&s, corpus(), QKV_SPLIT_TRAIN, 2, 8, 1) == 0);
    REFUSES(qkv_batcher_next(&s, NULL, (int32_t[16]){0}), "x is NULL");
}
MISUSE(qkv_batcher_next, uninitialised)
{
    qkv_batcher s = {0};
    int32_t x[16], y[16];
    REFUSES(qkv_batcher_next(&s, x, y), "s");
}

MISUSE(qkv_examples_init, null_arrays)
{
    qkv_examples e;
    int32_t ids[2] = {0};
    REFUSES(qkv_examples_init(NULL, ids, NULL, 1, ids, 1, 2, 1, 1), "e is NULL");
    REFUSES(qkv_examples_init(&e, NULL, NULL, 1, ids, 1, 2, 1, 1), "inputs is NULL");
    REFUSES(qkv_examples_init(&e, ids, NULL, 1, NULL, 1, 2, 1, 1), "targets is NULL");
    REFUSES(qkv_examples_init(&e, ids, NULL, 1, ids, 1, 2, -1, 1), "batch_size -1");
    REFUSES(qkv_examples_init(&e, ids, NULL, INT32_MAX, ids, 1, 2, 4, 1), "too large");
}
MISUSE(qkv_examples_next, null_and_unset)
{
    qkv_examples e;
    int32_t ids[2] = {0}, x[2], y[2];
    REFUSES(qkv_examples_next(NULL, x, NULL, y), "e is NULL");
    MISUSE_ASSERT(qkv_examples_init(&e, ids, NULL, 1, ids, 1, 2, 2, 1) == 0);
    REFUSES(qkv_examples_next(&e, NULL, NULL, y), "x is NULL");
    REFUSES(qkv_examples_next(&e, x, NULL, NULL), "y is NULL");
    e.next = 5;
    REFUSES(qkv_examples_next(&e, x, NULL, y), "not set up");
    qkv_examples_free(&e);
}
MISUSE(qkv_examples_free, null) { qkv_examples_free(NULL); }
