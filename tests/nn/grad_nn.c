/* Gradient checks (double build) of every nn module, with respect to its
 * inputs and to all of its parameters, against central finite differences. */
#include <omp.h>

#include "gradcheck.h"
#include "qkv/nn.h"
#include "testing.h"

/* What a module's gradcheck function needs besides its inputs. */
typedef struct mod_case {
    const void *m;        /* the module */
    const uint8_t *valid; /* padding mask (B,Tk), or NULL */
    bool train;           /* training mode: dropout on, redrawn identically every call */
} mod_case;

/* A forward context over the gradcheck's arena; in training the rng restarts from the same
 * seed on every call, so each probe sees the same dropout masks. */
static qkv_ctx ctx_for(qkv_arena *a, const mod_case *c, qkv_rng *rng)
{
    qkv_rng_seed(rng, 99);
    return (qkv_ctx){.arena = a, .train = c->train, .rng = rng};
}

#define MODULE_FN(fname, call)                                        \
    static qkv_tensor *fname(qkv_arena *a, qkv_tensor **in, void *ud) \
    {                                                                 \
        const mod_case *c = ud;                                       \
        qkv_rng rng;                                                  \
        (void)in; /* the embedding's input is its ids */              \
        qkv_ctx ctx = ctx_for(a, c, &rng);                            \
        return call;                                                  \
    }

MODULE_FN(f_linear, qkv_linear_forward(c->m, &ctx, in[0]))
MODULE_FN(f_ln, qkv_ln_forward(c->m, &ctx, in[0]))
MODULE_FN(f_mlp, qkv_mlp_forward(c->m, &ctx, in[0]))
MODULE_FN(f_head, qkv_attn_head_forward(c->m, &ctx, in[0], NULL))
MODULE_FN(f_self_attn, qkv_self_attn_forward(c->m, &ctx, in[0], c->valid, NULL))
MODULE_FN(f_cross_attn, qkv_cross_attn_forward(c->m, &ctx, in[0], in[1], c->valid, NULL))
MODULE_FN(f_block, qkv_block_forward(c->m, &ctx, in[0], c->valid, NULL))
MODULE_FN(f_cross_block, qkv_cross_block_forward(c->m, &ctx, in[0], in[1], c->valid, NULL, NULL))

/* 1 and 4 repeat: their rows' gradients must accumulate. */
static const int32_t embed_ids[2][3] = {{1, 4, 1}, {0, 2, 4}};
MODULE_FN(f_embed, qkv_embed_forward(c->m, &ctx, &embed_ids[0][0], QKV_SHAPE(2, 3)))

/* A module under test: its parameters and an rng for its inputs. */
typedef struct fixture {
    qkv_params *p;
    qkv_rng rng;
    qkv_arena *a;
} fixture;

static void fx_open(fixture *f, uint64_t seed)
{
    f->p = qkv_params_new();
    f->a = qkv_arena_new(1 << 16);
    qkv_rng_seed(&f->rng, seed);
    ck_assert(f->p && f->a);
}

static void fx_close(fixture *f)
{
    qkv_arena_free(&f->a);
    qkv_params_free(&f->p);
}

/* An input (B,T,C) of N(0,1) values that wants a gradient. */
static qkv_tensor *input(fixture *f, int B, int T, int C)
{
    qkv_tensor *x = qkv_randn(f->a, QKV_SHAPE(B, T, C), 1, &f->rng);
    ck_assert_qkv(x);
    qkv_set_requires_grad(x, true);
    return x;
}

/* Allocate the parameters with random N(0, 0.5²) values (so no weight is
 * special: not LayerNorm's 1, not a zero bias), then gradcheck f with respect
 * to the n_x inputs xs and every parameter. */
static void assert_gradients(fixture *f, gradcheck_fn fn, const mod_case *c, int n_x,
                             qkv_tensor *const *xs, const char *what)
{
    ck_assert_msg(qkv_params_alloc(f->p, &f->rng) == 0, "%s", qkv_last_error());
    for (size_t i = 0; i < f->p->total; i++)
        f->p->data[i] = 0.5 * qkv_rng_normal(&f->rng);
    qkv_tensor *in[64];
    int n = 0;
    for (int i = 0; i < n_x; i++)
        in[n++] = xs[i];
    for (int i = 0; i < f->p->count; i++)
        in[n++] = f->p->items[i].t;
    /* Thousands of forwards of a few hundred values each: worker threads add only
     * synchronisation, which on a busy machine made this program 30x slower. */
    omp_set_num_threads(1);
    double err = gradcheck(fn, n, in, (void *)c);
    ck_assert_msg(err <= GRADCHECK_TOL, "%s: relative error %g", what, err);
}

static const qkv_block_config cfg = {.n_embd = 8, .n_head = 2, .n_layer = 2};

/* Batch 0 has two padded positions at the end, batch 1 one at the start. */
static const uint8_t valid4[2][4] = {{1, 1, 0, 0}, {0, 1, 1, 1}};

START_TEST(test_linear_embedding_layernorm)
{
    fixture f;
    fx_open(&f, 1);
    qkv_linear lin;
    ck_assert_int_eq(qkv_linear_init(&lin, f.p, "fc", 5, 3, true, 1), 0);
    qkv_tensor *x = input(&f, 2, 3, 5);
    assert_gradients(&f, f_linear, &(mod_case){.m = &lin}, 1, &x, "linear");
    fx_close(&f);

    fx_open(&f, 2);
    qkv_embed wte;
    ck_assert_int_eq(qkv_embed_init(&wte, f.p, "wte", 5, 4, 1), 0);
    assert_gradients(&f, f_embed, &(mod_case){.m = &wte}, 0, NULL, "embedding");
    fx_close(&f);

    fx_open(&f, 3);
    qkv_ln ln;
    ck_assert_int_eq(qkv_ln_init(&ln, f.p, "ln", 6, true), 0);
    x = input(&f, 2, 3, 6);
    assert_gradients(&f, f_ln, &(mod_case){.m = &ln}, 1, &x, "layernorm");
    fx_close(&f);
}
END_TEST

START_TEST(test_mlp)
{
    fixture f;
    fx_open(&f, 4);
    qkv_mlp mlp;
    qkv_block_config small = {.n_embd = 4, .n_head = 1, .n_layer = 1};
    ck_assert_int_eq(qkv_mlp_init(&mlp, f.p, "mlp", &small), 0);
    qkv_tensor *x = input(&f, 2, 3, 4);
    assert_gradients(&f, f_mlp, &(mod_case){.m = &mlp}, 1, &x, "mlp");
    fx_close(&f);
}
END_TEST

START_TEST(test_single_head_causal)
{
    fixture f;
    fx_open(&f, 5);
    qkv_attn_head head;
    ck_assert_int_eq(qkv_attn_head_init(&head, f.p, "head", 6, 4, true), 0);
    qkv_tensor *x = input(&f, 2, 4, 6);
    assert_gradients(&f, f_head, &(mod_case){.m = &head}, 1, &x, "single head");
    fx_close(&f);
}
END_TEST

START_TEST(test_multi_head_causal)
{
    fixture f;
    fx_open(&f, 6);
    qkv_self_attn attn;
    ck_assert_int_eq(qkv_self_attn_init(&attn, f.p, "attn", &cfg, true), 0);
    qkv_tensor *x = input(&f, 2, 4, 8);
    assert_gradients(&f, f_self_attn, &(mod_case){.m = &attn}, 1, &x, "multi-head causal");
    fx_close(&f);
}
END_TEST

START_TEST(test_cross_attention_with_padding)
{
    fixture f;
    fx_open(&f, 7);
    qkv_cross_attn cross;
    ck_assert_int_eq(qkv_cross_attn_init(&cross, f.p, "cross", &cfg, 6), 0);
    qkv_tensor *xs[2] = {input(&f, 2, 3, 8), input(&f, 2, 4, 6)}; /* Tq 3, Tk 4 */
    assert_gradients(&f, f_cross_attn, &(mod_case){.m = &cross, .valid = &valid4[0][0]}, 2, xs,
                     "cross-attention");
    fx_close(&f);
}
END_TEST

START_TEST(test_encoder_block_with_padding)
{
    fixture f;
    fx_open(&f, 8);
    qkv_block enc;
    ck_assert_int_eq(qkv_block_init(&enc, f.p, "enc", &cfg, false), 0);
    qkv_tensor *x = input(&f, 2, 4, 8);
    assert_gradients(&f, f_block, &(mod_case){.m = &enc, .valid = &valid4[0][0]}, 1, &x,
                     "encoder block");
    fx_close(&f);
}
END_TEST

START_TEST(test_decoder_block)
{
    fixture f;
    fx_open(&f, 9);
    qkv_block dec;
    ck_assert_int_eq(qkv_block_init(&dec, f.p, "h.0", &cfg, true), 0);
    qkv_tensor *x = input(&f, 2, 3, 8);
    assert_gradients(&f, f_block, &(mod_case){.m = &dec}, 1, &x, "decoder block");
    fx_close(&f);
}
END_TEST

START_TEST(test_decoder_block_training_dropout)
{
    fixture f;
    fx_open(&f, 10);
    qkv_block_config drop = cfg;
    drop.dropout = 0.2;
    qkv_block dec;
    ck_assert_int_eq(qkv_block_init(&dec, f.p, "h.0", &drop, true), 0);
    qkv_tensor *x = input(&f, 2, 3, 8);
    assert_gradients(&f, f_block, &(mod_case){.m = &dec, .train = true}, 1, &x,
                     "decoder block with dropout");
    fx_close(&f);
}
END_TEST

START_TEST(test_cross_decoder_block)
{
    fixture f;
    fx_open(&f, 11);
    qkv_cross_block dec;
    ck_assert_int_eq(qkv_cross_block_init(&dec, f.p, "dec", &cfg, 6), 0);
    qkv_tensor *xs[2] = {input(&f, 2, 3, 8), input(&f, 2, 4, 6)};
    assert_gradients(&f, f_cross_block, &(mod_case){.m = &dec, .valid = &valid4[0][0]}, 2, xs,
                     "cross decoder block");
    fx_close(&f);
}
END_TEST

static Suite *grad_nn_suite(void)
{
    Suite *s = suite_create("grad_nn");
    TCase *tc = tcase_create("modules");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_linear_embedding_layernorm);
    tcase_add_test(tc, test_mlp);
    tcase_add_test(tc, test_single_head_causal);
    tcase_add_test(tc, test_multi_head_causal);
    tcase_add_test(tc, test_cross_attention_with_padding);
    tcase_add_test(tc, test_encoder_block_with_padding);
    tcase_add_test(tc, test_decoder_block);
    tcase_add_test(tc, test_decoder_block_training_dropout);
    tcase_add_test(tc, test_cross_decoder_block);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(grad_nn_suite)
