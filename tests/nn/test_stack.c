/* The public stack (qkv/stack.h): its parameters' names, its forward
 * against the same modules composed by hand, its loss against a plain
 * cross-entropy, its cached forward against the full one, and generation
 * with its cache against generation without. Gradients: grad_stack.c. */
#include "qkv/stack.h"
#include "error_text.h"
#include "stack_checks.h"
#include "testing.h"

enum { V = 11, BLOCK = 8, B = 2, T = 6 };

/* The three stacks every test runs: GPT-2's (learned positions, tied head),
 * every option on (rope, RMSNorm, relu², QK-norm, no biases, its own head),
 * and one layer with dropout. */
static qkv_stack_config config(int which)
{
    qkv_block_config b = {.n_embd = 8, .n_head = 2, .n_layer = 2};
    if (which == 1)
        b.opts = qkv_test_every_option();
    if (which == 2)
        b.n_layer = 0, b.dropout = 0.25f;
    return (qkv_stack_config){.vocab_size = V, .block_size = BLOCK, .block = b};
}

/* A stack of config(which) under prefix, its values drawn from seed. */
static qkv_params *make(qkv_stack *s, const char *prefix, int which, uint64_t seed)
{
    qkv_params *p = qkv_params_new();
    qkv_stack_config cfg = config(which);
    ck_assert_msg(qkv_stack_init(s, p, prefix, &cfg) == 0, "%s", qkv_last_error());
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    ck_assert_msg(qkv_params_alloc(p, &rng) == 0, "%s", qkv_last_error());
    return p;
}

/* Free what a test made: its stack, parameters and arena. */
static void drop(qkv_stack *s, qkv_params **p, qkv_test_env *env)
{
    qkv_arena_free(&env->a);
    qkv_stack_free(s);
    qkv_params_free(p);
}

static void random_ids(qkv_rng *rng, int32_t *ids, int n)
{
    for (int i = 0; i < n; i++)
        ids[i] = (int32_t)(qkv_rng_uniform(rng) * V) % V;
}

START_TEST(test_names_in_nanogpt_order)
{
    qkv_stack s;
    qkv_params *p = make(&s, "lm", 0, 1);
    const char *first[] = {"lm.wte.weight", "lm.wpe.weight", "lm.h.0.ln_1.weight"};
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(p->items[i].name, first[i]);
    ck_assert_str_eq(p->items[p->count - 1].name, "lm.ln_f.bias");
    ck_assert_ptr_nonnull(qkv_params_find(p, "lm.h.1.mlp.c_proj.weight"));
    ck_assert_ptr_null(qkv_params_find(p, "lm.lm_head.weight")); /* tied */
    qkv_stack_free(&s);
    qkv_params_free(&p);

    p = make(&s, NULL, 1, 1); /* no prefix; rope: no wpe; untied: a head */
    ck_assert_str_eq(p->items[0].name, "wte.weight");
    ck_assert_str_eq(p->items[1].name, "h.0.ln_1.weight");
    ck_assert_str_eq(p->items[p->count - 1].name, "lm_head.weight");
    ck_assert_ptr_null(qkv_params_find(p, "wpe.weight"));
    qkv_stack_free(&s);
    qkv_params_free(&p);

    p = make(&s, "", 2, 1);
    ck_assert_int_eq(s.cfg.block.n_layer, 1);
    ck_assert_ptr_null(qkv_params_find(p, "h.1.ln_1.weight"));
    qkv_stack_free(&s);
    qkv_params_free(&p);
}
END_TEST

/* The stack's logits, written out from its modules as a user would. */
static qkv_tensor *by_hand(const qkv_stack *s, const qkv_ctx *ctx, const int32_t *ids)
{
    int32_t pos[T];
    for (int t = 0; t < T; t++)
        pos[t] = t;
    qkv_tensor *x = qkv_embed_forward(&s->wte, ctx, ids, QKV_SHAPE(B, T));
    if (s->cfg.block.opts.positions != QKV_POSITIONS_ROPE)
        x = qkv_add(ctx->arena, x, qkv_embed_forward(&s->wpe, ctx, pos, QKV_SHAPE(T)));
    x = qkv_dropout(ctx->arena, x, s->cfg.block.dropout, ctx->rng, ctx->train);
    for (int l = 0; l < s->cfg.block.n_layer; l++)
        x = qkv_block_forward(&s->h[l], ctx, x, NULL, NULL);
    x = qkv_ln_forward(&s->ln_f, ctx, x);
    return s->cfg.block.opts.untied ? qkv_linear_forward(&s->lm_head, ctx, x)
                                    : qkv_matmul(ctx->arena, x, s->wte.weight, false, true);
}

START_TEST(test_forward_is_the_modules_composed)
{
    for (int which = 0; which < 3; which++) {
        qkv_stack s;
        qkv_params *p = make(&s, "lm", which, 2 + which);
        qkv_test_env env = qkv_test_env_new(7);
        qkv_rng masks; /* in training: the same dropout masks for both */
        qkv_ctx ctx = {.arena = env.a, .train = true, .rng = &masks};
        int32_t ids[B * T];
        random_ids(&env.rng, ids, B * T);
        qkv_rng_seed(&masks, 1);
        qkv_tensor *got = qkv_stack_forward(&s, &ctx, ids, B, T);
        qkv_rng_seed(&masks, 1);
        qkv_tensor *want = by_hand(&s, &ctx, ids);
        ck_assert_qkv(got);
        ck_assert_qkv(want);
        ck_assert_int_eq(got->size, (size_t)B * T * V);
        for (size_t i = 0; i < got->size; i++)
            ck_assert_msg(got->data[i] == want->data[i], "stack %d: logit %zu is %g, by hand %g",
                          which, i, (double)got->data[i], (double)want->data[i]);
        drop(&s, &p, &env);
    }
}
END_TEST

START_TEST(test_loss_is_the_mean_cross_entropy)
{
    qkv_stack s;
    qkv_params *p = make(&s, "lm", 0, 3);
    qkv_test_env env = qkv_test_env_new(8);
    qkv_ctx ctx = {.arena = env.a};
    int32_t ids[B * T], targets[B * T];
    random_ids(&env.rng, ids, B * T);
    random_ids(&env.rng, targets, B * T);
    targets[3] = -1; /* ignored */
    qkv_tensor *loss = qkv_stack_loss(&s, &ctx, ids, targets, B, T);
    qkv_tensor *logits = qkv_stack_forward(&s, &ctx, ids, B, T);
    ck_assert_qkv(loss);
    ck_assert_qkv(logits);
    ck_assert_double_eq_tol(loss->data[0],
                            plain_mean_cross_entropy(logits->data, targets, B * T, V), 1e-5);
    drop(&s, &p, &env);
}
END_TEST

/* A cached step of a stack: its forward through its cache. */
typedef struct cached {
    const qkv_stack *s;
    const qkv_ctx *ctx;
    qkv_kv_cache *c;
} cached;

static qkv_tensor *cached_step(void *ud, const int32_t *ids, int B_, int n)
{
    cached *k = ud;
    return qkv_stack_forward_cached(k->s, k->ctx, ids, B_, n, k->c);
}

START_TEST(test_cached_forward_is_the_full_forward)
{
    for (int which = 0; which < 3; which++) {
        qkv_stack s;
        qkv_params *p = make(&s, "lm", which, 4 + which);
        qkv_test_env env = qkv_test_env_new(9);
        qkv_ctx ctx = {.arena = env.a};
        int32_t ids[B * T];
        random_ids(&env.rng, ids, B * T);
        bool was = qkv_set_grad_enabled(false);
        qkv_tensor *full = qkv_stack_forward(&s, &ctx, ids, B, T);
        ck_assert_qkv(full);
        cached k = {&s, &ctx, qkv_kv_cache_new(&s.cfg.block, B, BLOCK)};
        ck_assert_qkv(k.c);
        char what[16];
        snprintf(what, sizeof what, "stack %d", which);
        assert_cached_steps_are_full(cached_step, &k, ids, full, B, T, V, what);
        ck_assert_int_eq(k.c->len[0], T);
        qkv_set_grad_enabled(was);
        qkv_kv_cache_free(k.c);
        drop(&s, &p, &env);
    }
}
END_TEST

START_TEST(test_generation_with_the_cache_is_without)
{
    /* 20 new tokens after 3 overflow the window of 8: both slide it alike. */
    const qkv_sample_opts greedy = {0}, sampled = {.temperature = 1};
    const qkv_sample_opts *opts[2] = {&greedy, &sampled};
    for (int which = 0; which < 3; which++)
        for (int o = 0; o < 2; o++) {
            qkv_stack s;
            qkv_params *p = make(&s, "lm", which, 10 + which);
            int32_t prompts[B * 3] = {1, 2, 3, 4, 5, 6};
            qkv_lm *without = qkv_stack_lm_new(&s, false), *with = qkv_stack_lm_new(&s, true);
            char what[64];
            snprintf(what, sizeof what, "stack %d, %s", which, o ? "sampled" : "greedy");
            assert_cache_changes_no_token(without, with, B, prompts, 3, 20, opts[o], what);
            qkv_stack_lm_free(without);
            qkv_stack_lm_free(with);
            qkv_stack_free(&s);
            qkv_params_free(&p);
        }
}
END_TEST

START_TEST(test_errors_name_what_is_wrong)
{
    qkv_stack s;
    qkv_params *p = qkv_params_new();
    qkv_stack_config cfg = config(0);
    cfg.vocab_size = 0;
    FAILS_INT(qkv_stack_init(&s, p, "lm", &cfg), "qkv_stack_init", "vocab_size 0");
    cfg = config(0);
    cfg.block.n_head = 3;
    FAILS_INT(qkv_stack_init(&s, p, "lm", &cfg), "qkv_stack_init", "n_head 3");
    qkv_params_free(&p);

    p = make(&s, "lm", 0, 1);
    qkv_stack again;
    cfg = config(0);
    FAILS_INT(qkv_stack_init(&again, p, "lm", &cfg), "lm.wte.weight");
    qkv_test_env env = qkv_test_env_new(9);
    qkv_ctx ctx = {.arena = env.a};
    int32_t ids[B * (BLOCK + 1)] = {0};
    FAILS_NULL(qkv_stack_forward(&s, &ctx, ids, B, BLOCK + 1), "qkv_stack_forward",
               "9 positions", "block size 8");
    ids[5] = V;
    FAILS_NULL(qkv_stack_loss(&s, &ctx, ids, ids, B, T), "qkv_stack_forward", "ids[5] is 11");
    qkv_block_config other = config(0).block;
    other.n_layer = 3;
    qkv_kv_cache *c = qkv_kv_cache_new(&other, B, BLOCK);
    bool was = qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_stack_forward_cached(&s, &ctx, ids, B, 1, c), "qkv_stack_forward_cached",
               "3 layers", "s has 2");
    qkv_kv_cache_free(c);
    c = qkv_kv_cache_new(&s.cfg.block, B, BLOCK);
    ids[5] = 0;
    for (int t = 0; t < BLOCK; t++)
        ck_assert_qkv(qkv_stack_forward_cached(&s, &ctx, ids, B, 1, c));
    FAILS_NULL(qkv_stack_forward_cached(&s, &ctx, ids, B, 1, c), "qkv_stack_forward_cached",
               "from 8", "block size 8");
    qkv_set_grad_enabled(was);
    qkv_kv_cache_free(c);
    drop(&s, &p, &env);
}
END_TEST

static Suite *stack_suite(void)
{
    Suite *s = suite_create("stack");
    TCase *tc = tcase_create("stack");
    tcase_add_test(tc, test_names_in_nanogpt_order);
    tcase_add_test(tc, test_forward_is_the_modules_composed);
    tcase_add_test(tc, test_loss_is_the_mean_cross_entropy);
    tcase_add_test(tc, test_cached_forward_is_the_full_forward);
    tcase_add_test(tc, test_generation_with_the_cache_is_without);
    tcase_add_test(tc, test_errors_name_what_is_wrong);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(stack_suite)
