/* GPT-2's weights from safetensors, checked against PyTorch in the float
 * build: a small GPT-2-shaped model written and run by
 * tests/models/gpt2_ref.py (its own plain PyTorch modules, in float64 from
 * the float32 weights it saves) gives the logits of a fixed input and the
 * losses of 3 AdamW steps; the built-in GPT loaded from the same file agrees
 * within 1e-5. The weights after the steps are compared in the double build
 * (grad_gpt2_torch.c): in float, the key bias's gradient, 0 in exact
 * arithmetic (a softmax ignores a constant added to a row), is rounding
 * noise near AdamW's eps, and its update anything up to the learning rate.
 * SKIPPED without python3 and torch. */
#include "testing.h"
#include "torch_ref.h"

enum { VOCAB = 50 };

static char dir[128];
static bool have_ref;

static void make_ref(void) { have_ref = qkv_test_torch_ref(dir, sizeof dir, VOCAB); }

static void remove_ref(void)
{
    if (have_ref)
        qkv_test_remove_tmpdir(dir);
}

START_TEST(config_from_the_shapes)
{
    if (!have_ref)
        return;
    qkv_gpt *m = qkv_test_ref_model(dir, "model.safetensors");
    qkv_gpt_config c = m->cfg;
    ck_assert_int_eq(c.vocab_size, VOCAB);
    ck_assert_int_eq(c.block_size, 16);
    ck_assert_int_eq(c.n_layer, 2);
    ck_assert_int_eq(c.n_head, 4); /* the metadata's, not n_embd / 64 */
    ck_assert_int_eq(c.n_embd, 32);
    ck_assert(!c.opts.untied && !c.opts.no_bias && c.opts.activation == QKV_ACTIVATION_GELU &&
              c.opts.norm == QKV_NORM_LAYERNORM && c.opts.positions == QKV_POSITIONS_LEARNED);
    ck_assert(c.dropout == 0);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(logits_as_pytorch)
{
    if (!have_ref)
        return;
    qkv_gpt *m = qkv_test_ref_model(dir, "model.safetensors");
    double err = qkv_test_ref_logits_error(dir, m);
    printf("float build: logits within %.3g of PyTorch's\n", err);
    ck_assert_msg(err <= 1e-5, "logits differ from PyTorch's by %g", err);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(three_adamw_steps_as_pytorch)
{
    if (!have_ref)
        return;
    qkv_gpt *m = qkv_test_ref_model(dir, "model.safetensors");
    double err = qkv_test_ref_loss_error(dir, m);
    printf("float build: losses of 3 AdamW steps within %.3g of PyTorch's\n", err);
    ck_assert_msg(err <= 1e-5, "losses differ from PyTorch's by %g", err);
    qkv_gpt_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gpt2_torch");
    TCase *tc = tcase_create("gpt2_torch");
    tcase_add_unchecked_fixture(tc, make_ref, remove_ref);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, config_from_the_shapes);
    tcase_add_test(tc, logits_as_pytorch);
    tcase_add_test(tc, three_adamw_steps_as_pytorch);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(suite)
