/* Gradient check (double build) of a tiny public stack's loss with respect
 * to every one of its parameters, against central finite differences: the
 * embeddings (the tied head's second use of wte included), the blocks, the
 * final norm and an untied head. */
#include <omp.h>

#include "gradcheck.h"
#include "qkv/stack.h"
#include "testing.h"

enum { V = 5, B = 2, T = 4 };

/* 4 repeats within a row and across the rows: its gradients must accumulate. */
static const int32_t ids[B * T] = {1, 4, 1, 0, 2, 4, 3, 4};
static const int32_t targets[B * T] = {4, 1, 0, 2, 4, 3, -1, 0};

static qkv_tensor *f_loss(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)in; /* the parameters, reached through the stack */
    qkv_ctx ctx = {.arena = a};
    return qkv_stack_loss(ud, &ctx, ids, targets, B, T);
}

/* gradcheck the loss of a stack of block config b over all its parameters. */
static void assert_stack_gradients(qkv_block_config b, const char *what)
{
    qkv_stack_config cfg = {.vocab_size = V, .block_size = T, .block = b};
    qkv_params *p = qkv_params_new();
    qkv_stack s;
    ck_assert_msg(qkv_stack_init(&s, p, "lm", &cfg) == 0, "%s", qkv_last_error());
    qkv_rng rng;
    qkv_rng_seed(&rng, 3);
    ck_assert_msg(qkv_params_alloc(p, &rng) == 0, "%s", qkv_last_error());
    for (size_t i = 0; i < p->total; i++) /* no weight special: not a norm's 1, a zero bias */
        p->data[i] = 0.5 * qkv_rng_normal(&rng);
    qkv_tensor *in[64];
    ck_assert_int_le(p->count, 64);
    for (int i = 0; i < p->count; i++)
        in[i] = p->items[i].t;
    omp_set_num_threads(1); /* thousands of tiny forwards: threads only add synchronisation */
    double err = gradcheck(f_loss, p->count, in, &s);
    ck_assert_msg(err <= GRADCHECK_TOL, "%s: relative error %g", what, err);
    qkv_stack_free(&s);
    qkv_params_free(&p);
}

START_TEST(test_gpt2_stack)
{
    assert_stack_gradients((qkv_block_config){.n_embd = 4, .n_head = 2, .n_layer = 2},
                           "learned positions, tied head");
}
END_TEST

START_TEST(test_every_option_stack)
{
    assert_stack_gradients((qkv_block_config){.n_embd = 4, .n_head = 2, .n_layer = 2,
                                              .opts = qkv_test_every_option()},
                           "rope, rmsnorm, relu2, qk_norm, no biases, untied head");
}
END_TEST

static Suite *grad_stack_suite(void)
{
    Suite *s = suite_create("grad_stack");
    TCase *tc = tcase_create("stack");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_gpt2_stack);
    tcase_add_test(tc, test_every_option_stack);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(grad_stack_suite)
