/* GPT-2's weights from safetensors, checked against PyTorch in the float
 * build: a small GPT-2-shaped model written and run by
 * tests/models/gpt2_ref.py (its own plain PyTorch modules, in float64 from
 * the float32 weights it saves) gives the logits of a fixed input and the
 * losses of 3 AdamW steps; the built-in GPT loaded from the same file agrees
 * within 1e-5 (the shared case of torch_ref.h), and its config is read from
 * the shapes. The weights after the steps are compared in the double build
 * (grad_gpt2_torch.c): in float, the key bias's gradient, 0 in exact
 * arithmetic (a softmax ignores a constant added to a row), is rounding
 * noise near AdamW's eps, and its update anything up to the learning rate.
 * SKIPPED without python3 and torch. */
#include "testing.h"
#include "torch_ref.h"

START_TEST(config_from_the_shapes)
{
    const char *dir = qkv_test_ref_dir();
    if (!dir)
        return;
    qkv_gpt *m = qkv_test_ref_model(dir, "model.safetensors");
    qkv_gpt_config c = m->cfg;
    ck_assert_int_eq(c.vocab_size, 50);
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

static Suite *suite(void)
{
    Suite *s = suite_create("gpt2_torch");
    TCase *tc = qkv_test_torch_case("gpt2_torch");
    tcase_add_test(tc, config_from_the_shapes);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(suite)
