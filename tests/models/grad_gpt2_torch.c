/* GPT-2's weights from safetensors against PyTorch, in the double build:
 * the logits of a fixed input and the losses of 3 AdamW steps (the shared
 * case of torch_ref.h), and every weight after the steps, within 1e-5 of
 * tests/models/gpt2_ref.py's (float64) PyTorch model. test_gpt2_torch.c
 * checks the float build and says why the weights are compared here.
 * SKIPPED without python3 and torch. */
#include "testing.h"
#include "torch_ref.h"

#include <math.h>

START_TEST(weights_after_three_adamw_steps_as_pytorch)
{
    const char *dir = qkv_test_ref_dir();
    if (!dir)
        return;
    qkv_gpt *m = qkv_test_ref_model(dir, "model.safetensors");
    qkv_gpt *after = qkv_test_ref_model(dir, "after.safetensors");
    qkv_real losses[QKV_REF_STEPS + 1];
    qkv_test_ref_steps(dir, m, losses);
    ck_assert_uint_eq(m->params->total, after->params->total);
    double err = 0;
    for (size_t i = 0; i < m->params->total; i++)
        err = fmax(err, fabs(m->params->data[i] - after->params->data[i]));
    printf("double build: weights after 3 AdamW steps within %.3g of PyTorch's\n", err);
    ck_assert_msg(err <= 1e-5, "weights after 3 steps differ from PyTorch's by %g", err);
    qkv_gpt_free(after);
    qkv_gpt_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gpt2_torch_double");
    TCase *tc = qkv_test_torch_case("gpt2_torch_double");
    tcase_add_test(tc, weights_after_three_adamw_steps_as_pytorch);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(suite)
