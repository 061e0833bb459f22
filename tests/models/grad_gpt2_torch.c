/* GPT-2's weights from safetensors against PyTorch, in the double build:
 * the logits of a fixed input, the losses of 3 AdamW steps and every weight
 * after them within 1e-5 of tests/models/gpt2_ref.py's (float64) PyTorch
 * model. test_gpt2_torch.c checks the float build and says why the weights
 * are compared here. SKIPPED without python3 and torch. */
#include "testing.h"
#include "torch_ref.h"

#include <math.h>

static char dir[128];
static bool have_ref;

static void make_ref(void) { have_ref = qkv_test_torch_ref(dir, sizeof dir, 50); }

static void remove_ref(void)
{
    if (have_ref)
        qkv_test_remove_tmpdir(dir);
}

START_TEST(logits_as_pytorch)
{
    if (!have_ref)
        return;
    qkv_gpt *m = qkv_test_ref_model(dir, "model.safetensors");
    double err = qkv_test_ref_logits_error(dir, m);
    printf("double build: logits within %.3g of PyTorch's\n", err);
    ck_assert_msg(err <= 1e-5, "logits differ from PyTorch's by %g", err);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(three_adamw_steps_as_pytorch)
{
    if (!have_ref)
        return;
    qkv_gpt *m = qkv_test_ref_model(dir, "model.safetensors");
    qkv_gpt *after = qkv_test_ref_model(dir, "after.safetensors");
    double loss_err = qkv_test_ref_loss_error(dir, m), err = 0;
    ck_assert_uint_eq(m->params->total, after->params->total);
    for (size_t i = 0; i < m->params->total; i++)
        err = fmax(err, fabs(m->params->data[i] - after->params->data[i]));
    printf("double build: 3 AdamW steps: losses within %.3g, weights within %.3g of PyTorch's\n",
           loss_err, err);
    ck_assert_msg(loss_err <= 1e-5, "losses differ from PyTorch's by %g", loss_err);
    ck_assert_msg(err <= 1e-5, "weights after 3 steps differ from PyTorch's by %g", err);
    qkv_gpt_free(after);
    qkv_gpt_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gpt2_torch_double");
    TCase *tc = tcase_create("gpt2_torch_double");
    tcase_add_unchecked_fixture(tc, make_ref, remove_ref);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, logits_as_pytorch);
    tcase_add_test(tc, three_adamw_steps_as_pytorch);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(suite)
