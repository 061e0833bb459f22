/* Gradient check (double build) of the whole encoder-decoder loss with
 * respect to every parameter, on a padded batch: the padding masks, the
 * ignored targets and the tied lm head all take part; then again with every
 * model option on (qkv/options.h), the untied head included. */
#include <omp.h>

#include "gradcheck.h"
#include "testing.h"

typedef struct loss_case {
    const qkv_seq2seq *m;
    const qkv_seq2seq_batch *b;
} loss_case;

static qkv_tensor *f_loss(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)in; /* the inputs are the model's own parameters */
    const loss_case *c = ud;
    qkv_ctx ctx = {.arena = a, .train = false, .rng = NULL};
    return qkv_seq2seq_loss(c->m, &ctx, c->b);
}

START_TEST(test_loss_gradients)
{
    qkv_tokenizer chars;
    qkv_tokenizer_build(&chars, "abcd", 4);
    qkv_seq2seq_config cfg = {.max_src = 5, .max_tgt = 4, .n_layer = 1, .n_head = 2, .n_embd = 8,
                              .dropout = 0};
    if (_i == 1)
        cfg.opts = qkv_test_every_option();
    qkv_seq2seq *m = qkv_seq2seq_new(&cfg, &chars, 1);
    ck_assert_qkv(m);
    qkv_rng rng;
    qkv_rng_seed(&rng, 2);
    for (size_t i = 0; i < m->params->total; i++) /* no special values: not LayerNorm's 1, not 0 */
        m->params->data[i] = 0.5 * qkv_rng_normal(&rng);
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, 2);
    const char *in[2] = {"abdc", "b"}, *out[2] = {"cda", "a"}; /* both sides padded in row 1 */
    ck_assert_int_eq(qkv_seq2seq_batch_fill(m, b, 2, in, out), 0);
    qkv_tensor *params[64];
    ck_assert_int_le(m->params->count, 64);
    for (int i = 0; i < m->params->count; i++)
        params[i] = m->params->items[i].t;
    omp_set_num_threads(1); /* thousands of tiny forwards: threads only add synchronisation */
    double err = gradcheck(f_loss, m->params->count, params, &(loss_case){m, b});
    ck_assert_msg(err <= GRADCHECK_TOL, "seq2seq loss%s: relative error %g",
                  _i ? " with every option" : "", err);
    qkv_seq2seq_batch_free(b);
    qkv_seq2seq_free(m);
}
END_TEST

static Suite *grad_seq2seq_suite(void)
{
    Suite *s = suite_create("grad_seq2seq");
    TCase *tc = tcase_create("loss");
    tcase_set_timeout(tc, 60);
    tcase_add_loop_test(tc, test_loss_gradients, 0, 2);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(grad_seq2seq_suite)
