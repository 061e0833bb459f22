/* The program's exact evaluation cost (cli/full_eval.c): measured, positive
 * and finite, and failing as the evaluation does on a split too short. */
#include "cli/full_eval.h"
#include "testing.h"

START_TEST(test_the_cost_is_measured)
{
    char text[4000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "abcdefgh "[(i * 5) % 9];
    qkv_corpus *c = qkv_corpus_from_text(text, sizeof text, NULL);
    ck_assert_qkv(c);
    qkv_gpt_config mc = {
        .vocab_size = c->tok.size, .block_size = 16, .n_layer = 1, .n_head = 2, .n_embd = 16};
    qkv_gpt *m = qkv_gpt_new(&mc, 3);
    ck_assert_qkv(m);
    qkv_arena *arena = qkv_arena_new(1 << 20);
    double cost = full_eval_cost(m, c, QKV_SPLIT_VAL, arena);
    ck_assert_msg(cost > 0 && isfinite(cost), "cost %g", cost);
    qkv_corpus *tiny = qkv_corpus_from_text("abcdefghabcdefgh", 16, NULL);
    ck_assert(isnan(full_eval_cost(m, tiny, QKV_SPLIT_VAL, arena)));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "too short"));
    qkv_corpus_free(tiny);
    qkv_arena_free(&arena);
    qkv_gpt_free(m);
    qkv_corpus_free(c);
}
END_TEST

static Suite *full_eval_suite(void)
{
    Suite *s = suite_create("full_eval");
    TCase *tc = tcase_create("full_eval");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_the_cost_is_measured);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(full_eval_suite)
