/* A GPT of BPE tokens: qkv_bpe_corpus encodes and splits as its definition
 * says; a run of qkv_gpt_training_model_bpe trains, saves its tokenizer in the
 * checkpoint and resumes; qkv_gpt_load_bpe gives back the same model (the same
 * logits) and the same merges; qkv_gpt_load refuses it and still loads a
 * character checkpoint, which carries no tokenizer. */
#include <stdlib.h>
#include <unistd.h>

#include "qkv/bpe.h"
#include "testing.h"

static char tmpdir[64];

static void make_tmpdir(void) { qkv_test_make_tmpdir(tmpdir, sizeof tmpdir, "qkv_bpe_gpt"); }

static void remove_tmpdir(void) { qkv_test_remove_tmpdir(tmpdir); }

/* Some hundreds of words of English, repeated: room for a few hundred merges. */
static char *english(size_t *len)
{
    static const char line[] = "Shall I compare thee to a summer's day? Thou art more lovely "
                               "and more temperate: rough winds do shake the darling buds of "
                               "May, and summer's lease hath all too short a date.\n";
    size_t n = sizeof line - 1, times = 40;
    char *text = malloc(n * times + 1);
    for (size_t i = 0; i < times; i++)
        memcpy(text + i * n, line, n);
    *len = n * times;
    return text;
}

static qkv_train_config tiny_train(void)
{
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = 6;
    tc.batch_size = 4;
    tc.eval_iters = 2;
    tc.warmup = 2;
    return tc;
}

/* The logits of m for the first T ids of c. */
static float *logits_of(const qkv_gpt *m, const qkv_corpus *c, int T)
{
    qkv_arena *a = qkv_arena_new(4 << 20);
    qkv_ctx ctx = {.arena = a};
    qkv_tensor *y = qkv_gpt_logits(m, &ctx, c->ids, 1, T, NULL);
    ck_assert_qkv(y);
    float *out = malloc(y->size * sizeof *out);
    for (size_t i = 0; i < y->size; i++)
        out[i] = (float)y->data[i];
    qkv_arena_free(&a);
    return out;
}

START_TEST(test_bpe_corpus_is_the_encoding_split_90_10)
{
    size_t len;
    char *text = english(&len);
    qkv_bpe *bpe = qkv_bpe_train(text, len, 300);
    ck_assert_qkv(bpe);
    qkv_corpus *c = qkv_bpe_corpus(bpe, text, len);
    ck_assert_qkv(c);
    int32_t *ids = malloc(len * sizeof *ids);
    long long n = qkv_bpe_encode(bpe, text, len, ids);
    ck_assert_uint_eq(c->len, (size_t)n);
    ck_assert_mem_eq(c->ids, ids, (size_t)n * sizeof *ids);
    ck_assert_uint_eq(c->n_train, (size_t)n * 9 / 10);
    ck_assert_int_eq(c->tok.size, 0);
    free(ids);
    free(text);
    qkv_corpus_free(c);
    qkv_bpe_free(bpe);
}
END_TEST

START_TEST(test_checkpoint_carries_the_tokenizer)
{
    size_t len;
    char *text = english(&len);
    qkv_bpe *bpe = qkv_bpe_train(text, len, 300);
    ck_assert_qkv(bpe);
    qkv_corpus *c = qkv_bpe_corpus(bpe, text, len);
    ck_assert_qkv(c);
    qkv_gpt_config mc = {.vocab_size = qkv_bpe_size(bpe), .block_size = 8, .n_layer = 1,
                         .n_head = 2, .n_embd = 16};
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    ck_assert_qkv(m);
    qkv_training_model tm;
    ck_assert_int_eq(qkv_gpt_training_model_bpe(m, c, bpe, &tm), 0);
    qkv_train_config tc = tiny_train();
    qkv_training *run = qkv_training_new(&tm, &tc);
    ck_assert_qkv(run);
    for (int i = 0; i < 3; i++)
        ck_assert_msg(qkv_training_step(run, NULL, NULL) == 0, "%s", qkv_last_error());
    const char *path = qkv_test_path(tmpdir, "bpe.ckpt");
    ck_assert_msg(qkv_training_save(run, path) == 0, "%s", qkv_last_error());

    /* loaded: the same merges, the same logits */
    qkv_tokenizer vocab;
    qkv_bpe *back = NULL;
    qkv_gpt *m2 = qkv_gpt_load_bpe(path, &vocab, &back);
    ck_assert_qkv(m2);
    ck_assert_ptr_nonnull(back);
    ck_assert_int_eq(vocab.size, 0);
    ck_assert_int_eq(qkv_bpe_size(back), qkv_bpe_size(bpe));
    for (int i = 0; i < qkv_bpe_size(bpe) - 256; i++) {
        int32_t l, r, l2, r2;
        qkv_bpe_merge(bpe, i, &l, &r);
        qkv_bpe_merge(back, i, &l2, &r2);
        ck_assert(l == l2 && r == r2);
    }
    float *a = logits_of(m, c, 8), *b = logits_of(m2, c, 8);
    ck_assert_mem_eq(a, b, 8 * (size_t)mc.vocab_size * sizeof *a);
    free(a), free(b);

    /* the character loader says what the file is */
    qkv_clear_error();
    ck_assert_ptr_null(qkv_gpt_load(path, &vocab));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "qkv_gpt_load_bpe"));

    /* and the run resumes from it */
    qkv_training_free(run);
    qkv_training_model tm2;
    ck_assert_int_eq(qkv_gpt_training_model_bpe(m2, c, back, &tm2), 0);
    qkv_training *again = qkv_training_resume(&tm2, path, tc.iters);
    ck_assert_qkv(again);
    ck_assert_int_eq(again->step, 3);
    ck_assert_int_eq(qkv_training_step(again, NULL, NULL), 0);
    qkv_training_free(again);

    qkv_gpt_free(m), qkv_gpt_free(m2);
    qkv_bpe_free(bpe), qkv_bpe_free(back);
    qkv_corpus_free(c);
    free(text);
}
END_TEST

START_TEST(test_character_checkpoint_has_no_tokenizer)
{
    size_t len;
    char *text = english(&len);
    qkv_corpus *c = qkv_corpus_from_text(text, len, NULL);
    ck_assert_qkv(c);
    qkv_gpt_config mc = {.vocab_size = c->tok.size, .block_size = 8, .n_layer = 1, .n_head = 2,
                         .n_embd = 16};
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    qkv_training_model tm;
    ck_assert_int_eq(qkv_gpt_training_model(m, c, &tm), 0);
    ck_assert_uint_eq(tm.config_len, QKV_GPT_CONFIG_BYTES); /* the blob as it always was */
    qkv_train_config tc = tiny_train();
    qkv_training *run = qkv_training_new(&tm, &tc);
    ck_assert_qkv(run);
    const char *path = qkv_test_path(tmpdir, "char.ckpt");
    ck_assert_int_eq(qkv_training_save(run, path), 0);
    qkv_tokenizer vocab;
    qkv_bpe *bpe = (qkv_bpe *)1; /* set to NULL by the load */
    qkv_gpt *m2 = qkv_gpt_load_bpe(path, &vocab, &bpe);
    ck_assert_qkv(m2);
    ck_assert_ptr_null(bpe);
    ck_assert_int_eq(vocab.size, c->tok.size);
    /* a BPE model cannot be given a character corpus, nor a tokenizer of another size */
    qkv_bpe *small = qkv_bpe_train(text, len, 260);
    ck_assert_qkv(small);
    ck_assert_int_eq(qkv_gpt_training_model_bpe(m, c, small, &tm), -1);
    qkv_training_free(run);
    qkv_gpt_free(m), qkv_gpt_free(m2);
    qkv_bpe_free(small);
    qkv_corpus_free(c);
    free(text);
}
END_TEST

static Suite *bpe_gpt_suite(void)
{
    Suite *s = suite_create("bpe_gpt");
    TCase *tc = tcase_create("gpt");
    tcase_add_unchecked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_bpe_corpus_is_the_encoding_split_90_10);
    tcase_add_test(tc, test_checkpoint_carries_the_tokenizer);
    tcase_add_test(tc, test_character_checkpoint_has_no_tokenizer);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(bpe_gpt_suite)
