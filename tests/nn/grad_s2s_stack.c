/* Gradient check (double build) of a tiny encoder-decoder stack's loss with
 * respect to every one of its parameters, against central finite
 * differences: both sides' embeddings (the tied head's second use of dec.wte
 * included), the encoder blocks under a padding mask, the cross blocks, both
 * norms and an untied head. */
#include <omp.h>

#include "gradcheck.h"
#include "qkv/stack.h"
#include "testing.h"

enum { V = 5, SV = 4, B = 2, TS = 3, TT = 4 };

/* Repeats within a row and across the rows: their gradients must accumulate.
 * Row 1's last source token is padding. */
static const int32_t src[B * TS] = {1, 3, 1, 2, 0, 3};
static const uint8_t valid[B * TS] = {1, 1, 1, 1, 1, 0};
static const int32_t ids[B * TT] = {1, 4, 1, 0, 2, 4, 3, 4};
static const int32_t targets[B * TT] = {4, 1, 0, 2, 4, 3, -1, 0};

static qkv_tensor *f_loss(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)in; /* the parameters, reached through the stack */
    qkv_ctx ctx = {.arena = a};
    return qkv_s2s_stack_loss(ud, &ctx, src, valid, TS, ids, targets, B, TT);
}

/* gradcheck the loss of an encoder-decoder of block config b over all its parameters. */
static void assert_s2s_gradients(qkv_block_config b, const char *what)
{
    qkv_s2s_config cfg = {
        .vocab_size = V, .src_vocab_size = SV, .max_src = TS, .max_tgt = TT, .block = b};
    qkv_params *p = qkv_params_new();
    qkv_s2s_stack s;
    ck_assert_msg(qkv_s2s_stack_init(&s, p, "m", &cfg) == 0, "%s", qkv_last_error());
    qkv_rng rng;
    qkv_rng_seed(&rng, 3);
    ck_assert_msg(qkv_params_alloc(p, &rng) == 0, "%s", qkv_last_error());
    for (size_t i = 0; i < p->total; i++) /* no weight special: not a norm's 1, a zero bias */
        p->data[i] = 0.5 * qkv_rng_normal(&rng);
    qkv_tensor *in[128];
    ck_assert_int_le(p->count, 128);
    for (int i = 0; i < p->count; i++)
        in[i] = p->items[i].t;
    omp_set_num_threads(1); /* thousands of tiny forwards: threads only add synchronisation */
    for (int first = 0; first < p->count; first += 64) { /* a check takes 64 inputs at most */
        int n = p->count - first < 64 ? p->count - first : 64;
        double err = gradcheck(f_loss, n, in + first, &s);
        ck_assert_msg(err <= GRADCHECK_TOL, "%s, parameters %d..: relative error %g", what, first,
                      err);
    }
    qkv_s2s_stack_free(&s);
    qkv_params_free(&p);
}

START_TEST(test_learned_positions_tied)
{
    assert_s2s_gradients((qkv_block_config){.n_embd = 4, .n_head = 2, .n_layer = 2},
                         "learned positions, tied head");
}
END_TEST

START_TEST(test_every_option)
{
    assert_s2s_gradients(
        (qkv_block_config){.n_embd = 4, .n_head = 2, .n_layer = 1, .opts = qkv_test_every_option()},
        "rope, rmsnorm, relu2, qk_norm, no biases, untied head");
}
END_TEST

static Suite *grad_s2s_stack_suite(void)
{
    Suite *s = suite_create("grad_s2s_stack");
    TCase *tc = tcase_create("s2s_stack");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_learned_positions_tied);
    tcase_add_test(tc, test_every_option);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(grad_s2s_stack_suite)
