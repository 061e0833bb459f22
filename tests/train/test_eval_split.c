/* The exact evaluation (qkv_eval_split, qkv_gpt_eval_split) against its
 * definition: the mean over every window of the split of the window's mean
 * next-token loss, here computed from the model's logits for all the windows
 * at once in one batch and a plain log-softmax in double; its standard error
 * the formula's, s/√n with s the windows' sample standard deviation; the
 * windows the split holds, and the cap on a large text; a window loss of
 * one's own sees every window in order, gradients off; a failing window is
 * named. */
#include <stdlib.h>

#include "error_text.h"
#include "testing.h"

START_TEST(test_the_mean_over_every_window)
{
    char text[4000];
    qkv_rng rng;
    qkv_rng_seed(&rng, 5);
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = "abcdefgh "[(int)(9 * qkv_rng_uniform(&rng)) % 9];
    qkv_corpus *c = qkv_corpus_from_text(text, sizeof text, NULL);
    ck_assert_qkv(c);
    const int T = 16;
    qkv_gpt_config mc = {
        .vocab_size = c->tok.size, .block_size = T, .n_layer = 1, .n_head = 2, .n_embd = 16};
    qkv_gpt *m = qkv_gpt_new(&mc, 3);
    ck_assert_qkv(m);
    /* The val split: 400 tokens, so (400 - 1) / 16 = 24 windows. */
    int64_t n = qkv_split_windows(c, QKV_SPLIT_VAL, T, 0);
    ck_assert_int_eq(n, (int64_t)((c->len - c->n_train - 1) / T));
    ck_assert_int_eq(n, 24);
    qkv_arena *arena = qkv_arena_new(1 << 20);
    qkv_split_loss f;
    ck_assert_msg(qkv_gpt_eval_split(m, c, QKV_SPLIT_VAL, 0, arena, &f) == 0, "%s",
                  qkv_last_error());
    ck_assert_int_eq(f.windows, n);
    ck_assert_int_eq(f.tokens, n * T);

    /* The plain way: every window in one batch, the losses from the logits. */
    const int32_t *val = c->ids + c->n_train;
    qkv_ctx ctx = {.arena = arena};
    int32_t *x = malloc((size_t)(n * T) * sizeof *x);
    for (int64_t w = 0; w < n; w++)
        memcpy(x + w * T, val + w * T, (size_t)T * sizeof *x);
    bool was = qkv_set_grad_enabled(false);
    qkv_tensor *logits = qkv_gpt_logits(m, &ctx, x, (int)n, T, NULL);
    qkv_set_grad_enabled(was);
    ck_assert_qkv(logits);
    const int V = c->tok.size;
    double *win = calloc((size_t)n, sizeof *win), mean = 0;
    for (int64_t w = 0; w < n; w++) {
        for (int t = 0; t < T; t++) {
            const qkv_real *row = logits->data + ((size_t)w * T + (size_t)t) * (size_t)V;
            double mx = row[0], z = 0;
            for (int v = 1; v < V; v++)
                mx = fmax(mx, row[v]);
            for (int v = 0; v < V; v++)
                z += exp(row[v] - mx);
            win[w] += (mx + log(z) - row[val[w * T + t + 1]]) / T;
        }
        mean += win[w] / (double)n;
    }
    double ss = 0;
    for (int64_t w = 0; w < n; w++)
        ss += (win[w] - mean) * (win[w] - mean);
    double se = sqrt(ss / (double)(n - 1)) / sqrt((double)n);
    ck_assert_msg(fabs(f.loss - mean) < 1e-5, "loss %.7g, the plain mean %.7g", f.loss, mean);
    ck_assert_msg(fabs(f.se - se) < 1e-6 && se > 0, "se %.7g, the formula's %.7g", f.se, se);
    /* With an arena of its own, the same. */
    qkv_split_loss g;
    ck_assert_int_eq(qkv_gpt_eval_split(m, c, QKV_SPLIT_VAL, 0, NULL, &g), 0);
    ck_assert(g.loss == f.loss && g.se == f.se);
    /* One window (max_tokens one window and a bit): no spread to estimate. */
    ck_assert_int_eq(qkv_gpt_eval_split(m, c, QKV_SPLIT_VAL, T + 3, arena, &f), 0);
    ck_assert_int_eq(f.windows, 1);
    ck_assert(fabs(f.loss - win[0]) < 1e-5 && isnan(f.se));
    free(x);
    free(win);
    qkv_arena_free(&arena);
    qkv_gpt_free(m);
    qkv_corpus_free(c);
}
END_TEST

START_TEST(test_a_large_split_is_capped)
{
    size_t len = 1200000;
    char *text = malloc(len);
    for (size_t i = 0; i < len; i++)
        text[i] = "xyz"[i % 3];
    qkv_corpus *c = qkv_corpus_from_text(text, len, NULL);
    ck_assert_qkv(c);
    qkv_gpt_config mc = {
        .vocab_size = c->tok.size, .block_size = 64, .n_layer = 1, .n_head = 1, .n_embd = 4};
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    ck_assert_qkv(m);
    ck_assert_int_eq(qkv_split_windows(c, QKV_SPLIT_TRAIN, 64, 500000), 500000 / 64);
    ck_assert_int_eq(qkv_split_windows(c, QKV_SPLIT_TRAIN, 64, 0),
                     (int64_t)((c->n_train - 1) / 64));
    ck_assert_int_eq(qkv_split_windows(c, QKV_SPLIT_VAL, 64, 500000),
                     (int64_t)((len - c->n_train - 1) / 64));
    /* A split shorter than a window and its target has none, and evaluating it says so. */
    qkv_corpus *tiny = qkv_corpus_from_text("xyzxyzxyzxyz", 12, NULL);
    qkv_gpt_config tc = mc;
    tc.block_size = 8;
    tc.vocab_size = tiny->tok.size;
    qkv_gpt *small = qkv_gpt_new(&tc, 1);
    ck_assert_int_eq(qkv_split_windows(tiny, QKV_SPLIT_VAL, 8, 0), 0);
    qkv_split_loss f;
    ck_assert_int_eq(qkv_gpt_eval_split(small, tiny, QKV_SPLIT_VAL, 0, NULL, &f), -1);
    ck_assert_error("qkv_gpt_eval_split", "val split (2 tokens) is too short");
    qkv_gpt_free(small);
    qkv_corpus_free(tiny);
    qkv_gpt_free(m);
    qkv_corpus_free(c);
    free(text);
}
END_TEST

/* A window loss of one's own: the sum of x's ids over T, to see which
 * windows it is given, in what order, and with gradients off. */
typedef struct seen {
    const int32_t *first;
    int64_t calls, grad_on, fail_at;
} seen;

static qkv_tensor *id_mean(void *ud, const qkv_ctx *ctx, const int32_t *x, const int32_t *y, int T)
{
    seen *s = ud;
    if (!s->first)
        s->first = x;
    ck_assert(x == s->first + s->calls * T && y == x + 1);
    s->grad_on += qkv_grad_enabled();
    if (s->calls++ == s->fail_at)
        return NULL; /* and no message */
    qkv_real v = 0;
    for (int t = 0; t < T; t++)
        v += (qkv_real)x[t] / (qkv_real)T;
    return qkv_from_array(ctx->arena, QKV_SHAPE(1), &v);
}

START_TEST(test_a_window_loss_of_ones_own)
{
    char text[1000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (char)('a' + (i * 7) % 5);
    qkv_corpus *c = qkv_corpus_from_text(text, sizeof text, NULL);
    ck_assert_qkv(c);
    const int T = 10;
    seen s = {.fail_at = -1};
    qkv_split_loss f;
    ck_assert_int_eq(qkv_eval_split(id_mean, &s, c, QKV_SPLIT_TRAIN, T, 0, NULL, &f), 0);
    int64_t n = (int64_t)((c->n_train - 1) / T);
    ck_assert_int_eq(s.calls, n);
    ck_assert_int_eq(f.windows, n);
    ck_assert(s.first == c->ids);
    ck_assert_int_eq(s.grad_on, 0);
    ck_assert(qkv_grad_enabled());
    double mean = 0;
    for (int64_t i = 0; i < n * T; i++)
        mean += (double)(qkv_real)((qkv_real)c->ids[i] / (qkv_real)T);
    ck_assert_msg(fabs(f.loss - mean / (double)n) < 1e-5, "%g vs %g", f.loss, mean / (double)n);
    /* The val split starts at n_train. */
    s = (seen){.fail_at = -1};
    ck_assert_int_eq(qkv_eval_split(id_mean, &s, c, QKV_SPLIT_VAL, T, 0, NULL, &f), 0);
    ck_assert(s.first == c->ids + c->n_train);
    /* A window that fails is named. */
    s = (seen){.fail_at = 3};
    ck_assert_int_eq(qkv_eval_split(id_mean, &s, c, QKV_SPLIT_TRAIN, T, 0, NULL, &f), -1);
    ck_assert_error("qkv_eval_split: window 3", "left no message");
    ck_assert(qkv_grad_enabled());
    qkv_corpus_free(c);
}
END_TEST

static Suite *eval_split_suite(void)
{
    Suite *s = suite_create("eval_split");
    TCase *tc = tcase_create("eval_split");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_the_mean_over_every_window);
    tcase_add_test(tc, test_a_large_split_is_capped);
    tcase_add_test(tc, test_a_window_loss_of_ones_own);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(eval_split_suite)
