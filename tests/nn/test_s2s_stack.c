/* The public encoder-decoder stack (qkv/stack.h): its parameters' names, its
 * forward against the same modules composed by hand, its loss against a
 * plain cross-entropy, the source padding, its cached forward against the
 * full one, and generation with its cache against generation without.
 * Gradients: grad_s2s_stack.c. */
#include "qkv/stack.h"
#include "error_text.h"
#include "stack_checks.h"
#include "testing.h"

#include <math.h>

enum { V = 9, SV = 7, MAX_SRC = 6, MAX_TGT = 7, B = 2, TS = 5, TT = 6 };

/* The three stacks every test runs: learned positions and a tied head, every
 * option on (rope, RMSNorm, relu², QK-norm, no biases, its own head), and one
 * layer with dropout. */
static qkv_s2s_config config(int which)
{
    qkv_block_config b = {.n_embd = 8, .n_head = 2, .n_layer = 2};
    if (which == 1)
        b.opts = qkv_test_every_option();
    if (which == 2)
        b.n_layer = 0, b.dropout = 0.25f;
    return (qkv_s2s_config){
        .vocab_size = V, .src_vocab_size = SV, .max_src = MAX_SRC, .max_tgt = MAX_TGT, .block = b};
}

/* A stack of config(which) under prefix, its values drawn from seed. */
static qkv_params *make(qkv_s2s_stack *s, const char *prefix, int which, uint64_t seed)
{
    qkv_params *p = qkv_params_new();
    qkv_s2s_config cfg = config(which);
    ck_assert_msg(qkv_s2s_stack_init(s, p, prefix, &cfg) == 0, "%s", qkv_last_error());
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    ck_assert_msg(qkv_params_alloc(p, &rng) == 0, "%s", qkv_last_error());
    return p;
}

static void drop(qkv_s2s_stack *s, qkv_params **p, qkv_test_env *env)
{
    qkv_arena_free(&env->a);
    qkv_s2s_stack_free(s);
    qkv_params_free(p);
}

static void random_ids(qkv_rng *rng, int32_t *ids, int n, int vocab)
{
    for (int i = 0; i < n; i++)
        ids[i] = (int32_t)(qkv_rng_uniform(rng) * vocab) % vocab;
}

/* Row 0 is TS long, row 1 three tokens and two of padding. */
static const uint8_t VALID[B * TS] = {1, 1, 1, 1, 1, 1, 1, 1, 0, 0};

START_TEST(test_names_in_declaration_order)
{
    qkv_s2s_stack s;
    qkv_params *p = make(&s, "m", 0, 1);
    const char *first[] = {"m.enc.wte.weight", "m.enc.wpe.weight", "m.enc.h.0.ln_1.weight"};
    for (int i = 0; i < 3; i++)
        ck_assert_str_eq(p->items[i].name, first[i]);
    ck_assert_int_eq(qkv_params_find(p, "m.enc.wte.weight")->t->shape[0], SV);
    ck_assert_int_eq(qkv_params_find(p, "m.dec.wte.weight")->t->shape[0], V);
    ck_assert_int_eq(qkv_params_find(p, "m.dec.wpe.weight")->t->shape[0], MAX_TGT);
    ck_assert_ptr_nonnull(qkv_params_find(p, "m.enc.ln_f.weight"));
    ck_assert_ptr_nonnull(qkv_params_find(p, "m.dec.h.1.cross.c_kv.weight"));
    ck_assert_str_eq(p->items[p->count - 1].name, "m.dec.ln_f.bias");
    ck_assert_ptr_null(qkv_params_find(p, "m.dec.lm_head.weight")); /* tied */
    qkv_s2s_stack_free(&s);
    qkv_params_free(&p);

    p = make(&s, NULL, 1, 1); /* no prefix; rope: no wpe; untied: a head */
    ck_assert_str_eq(p->items[0].name, "enc.wte.weight");
    ck_assert_str_eq(p->items[1].name, "enc.h.0.ln_1.weight");
    ck_assert_str_eq(p->items[p->count - 1].name, "dec.lm_head.weight");
    ck_assert_ptr_null(qkv_params_find(p, "dec.wpe.weight"));
    qkv_s2s_stack_free(&s);
    qkv_params_free(&p);

    p = make(&s, "", 2, 1);
    ck_assert_int_eq(s.cfg.block.n_layer, 1);
    ck_assert_ptr_null(qkv_params_find(p, "enc.h.1.ln_1.weight"));
    qkv_s2s_stack_free(&s);
    qkv_params_free(&p);
}
END_TEST

/* One side's embeddings, written out as a user would. */
static qkv_tensor *embed_by_hand(const qkv_s2s_stack *s, const qkv_ctx *ctx, const qkv_embed *wte,
                                 const qkv_embed *wpe, const int32_t *ids, int T)
{
    int32_t pos[MAX_TGT];
    for (int t = 0; t < T; t++)
        pos[t] = t;
    qkv_tensor *x = qkv_embed_forward(wte, ctx, ids, QKV_SHAPE(B, T));
    if (s->cfg.block.opts.positions != QKV_POSITIONS_ROPE)
        x = qkv_add(ctx->arena, x, qkv_embed_forward(wpe, ctx, pos, QKV_SHAPE(T)));
    return qkv_dropout(ctx->arena, x, s->cfg.block.dropout, ctx->rng, ctx->train);
}

/* The stack's logits, written out from its modules as a user would. */
static qkv_tensor *by_hand(const qkv_s2s_stack *s, const qkv_ctx *ctx, const int32_t *src,
                           const int32_t *ids)
{
    qkv_tensor *x = embed_by_hand(s, ctx, &s->enc_wte, &s->enc_wpe, src, TS);
    for (int l = 0; l < s->cfg.block.n_layer; l++)
        x = qkv_block_forward(&s->enc[l], ctx, x, VALID, NULL);
    qkv_tensor *memory = qkv_ln_forward(&s->enc_ln_f, ctx, x);
    x = embed_by_hand(s, ctx, &s->dec_wte, &s->dec_wpe, ids, TT);
    for (int l = 0; l < s->cfg.block.n_layer; l++)
        x = qkv_cross_block_forward(&s->dec[l], ctx, x, memory, VALID, NULL, NULL);
    x = qkv_ln_forward(&s->dec_ln_f, ctx, x);
    return s->cfg.block.opts.untied ? qkv_linear_forward(&s->lm_head, ctx, x)
                                    : qkv_matmul(ctx->arena, x, s->dec_wte.weight, false, true);
}

START_TEST(test_forward_is_the_modules_composed)
{
    for (int which = 0; which < 3; which++) {
        qkv_s2s_stack s;
        qkv_params *p = make(&s, "m", which, 2 + which);
        qkv_test_env env = qkv_test_env_new(7);
        qkv_rng masks; /* in training: the same dropout masks for both */
        qkv_ctx ctx = {.arena = env.a, .train = true, .rng = &masks};
        int32_t src[B * TS], ids[B * TT];
        random_ids(&env.rng, src, B * TS, SV);
        random_ids(&env.rng, ids, B * TT, V);
        qkv_rng_seed(&masks, 1);
        qkv_tensor *got = qkv_s2s_stack_forward(&s, &ctx, src, VALID, TS, ids, B, TT);
        qkv_rng_seed(&masks, 1);
        qkv_tensor *want = by_hand(&s, &ctx, src, ids);
        ck_assert_qkv(got);
        ck_assert_qkv(want);
        ck_assert_int_eq(got->size, (size_t)B * TT * V);
        for (size_t i = 0; i < got->size; i++)
            ck_assert_msg(got->data[i] == want->data[i], "stack %d: logit %zu is %g, by hand %g",
                          which, i, (double)got->data[i], (double)want->data[i]);
        drop(&s, &p, &env);
    }
}
END_TEST

START_TEST(test_loss_is_the_mean_cross_entropy)
{
    qkv_s2s_stack s;
    qkv_params *p = make(&s, "m", 1, 3);
    qkv_test_env env = qkv_test_env_new(8);
    qkv_ctx ctx = {.arena = env.a};
    int32_t src[B * TS], ids[B * TT], targets[B * TT];
    random_ids(&env.rng, src, B * TS, SV);
    random_ids(&env.rng, ids, B * TT, V);
    random_ids(&env.rng, targets, B * TT, V);
    targets[0] = 0, targets[4] = targets[11] = -1; /* 0 counts, -1 is ignored */
    qkv_tensor *loss = qkv_s2s_stack_loss(&s, &ctx, src, VALID, TS, ids, targets, B, TT);
    qkv_tensor *logits = qkv_s2s_stack_forward(&s, &ctx, src, VALID, TS, ids, B, TT);
    ck_assert_qkv(loss);
    ck_assert_qkv(logits);
    ck_assert_double_eq_tol(loss->data[0],
                            plain_mean_cross_entropy(logits->data, targets, B * TT, V), 1e-5);
    drop(&s, &p, &env);
}
END_TEST

START_TEST(test_padding_is_not_read)
{
    /* Row 1's two padded source tokens changed: no logit of either row moves;
     * one of its real tokens changed: row 1's logits move. */
    qkv_s2s_stack s;
    qkv_params *p = make(&s, "m", 0, 4);
    qkv_test_env env = qkv_test_env_new(9);
    qkv_ctx ctx = {.arena = env.a};
    int32_t src[B * TS], ids[B * TT];
    random_ids(&env.rng, src, B * TS, SV);
    random_ids(&env.rng, ids, B * TT, V);
    qkv_tensor *base = qkv_s2s_stack_forward(&s, &ctx, src, VALID, TS, ids, B, TT);
    src[TS + 3] = (src[TS + 3] + 1) % SV, src[TS + 4] = (src[TS + 4] + 2) % SV;
    qkv_tensor *padded = qkv_s2s_stack_forward(&s, &ctx, src, VALID, TS, ids, B, TT);
    src[TS + 1] = (src[TS + 1] + 1) % SV;
    qkv_tensor *real = qkv_s2s_stack_forward(&s, &ctx, src, VALID, TS, ids, B, TT);
    ck_assert_qkv(base);
    ck_assert_qkv(padded);
    ck_assert_qkv(real);
    double moved = 0;
    for (size_t i = 0; i < base->size; i++) {
        ck_assert_msg(padded->data[i] == base->data[i], "logit %zu read the padding", i);
        moved += fabs((double)real->data[i] - base->data[i]);
    }
    ck_assert_msg(moved > 1e-4, "a real source token changed no logit (%g)", moved);
    drop(&s, &p, &env);
}
END_TEST

START_TEST(test_the_encoder_reads_both_ways)
{
    /* Every source position's memory changes with the last real token: the
     * encoder attends forwards too (a causal one would leave positions before it). */
    qkv_s2s_stack s;
    qkv_params *p = make(&s, "m", 0, 15);
    qkv_test_env env = qkv_test_env_new(11);
    qkv_ctx ctx = {.arena = env.a};
    int32_t src[B * TS];
    random_ids(&env.rng, src, B * TS, SV);
    qkv_tensor *before = qkv_s2s_stack_encode(&s, &ctx, src, VALID, B, TS);
    src[TS - 1] = (src[TS - 1] + 1) % SV; /* row 0's last token */
    qkv_tensor *after = qkv_s2s_stack_encode(&s, &ctx, src, VALID, B, TS);
    ck_assert_qkv(before);
    ck_assert_qkv(after);
    int C = s.cfg.block.n_embd;
    for (int t = 0; t < TS; t++) {
        double moved = 0;
        for (int c = 0; c < C; c++)
            moved += fabs((double)after->data[t * C + c] - before->data[t * C + c]);
        ck_assert_msg(moved > 1e-6, "memory position %d did not read the last token", t);
    }
    drop(&s, &p, &env);
}
END_TEST

/* A cached step of an encoder-decoder: its decoder through its cache over the memory. */
typedef struct cached {
    const qkv_s2s_stack *s;
    const qkv_ctx *ctx;
    qkv_s2s_memory *mem;
    qkv_kv_cache *c;
} cached;

static qkv_tensor *cached_step(void *ud, const int32_t *ids, int B_, int n)
{
    cached *k = ud;
    return qkv_s2s_stack_forward_cached(k->s, k->ctx, k->mem, ids, B_, n, k->c);
}

START_TEST(test_cached_forward_is_the_full_forward)
{
    for (int which = 0; which < 3; which++) {
        qkv_s2s_stack s;
        qkv_params *p = make(&s, "m", which, 5 + which);
        qkv_test_env env = qkv_test_env_new(10);
        qkv_ctx ctx = {.arena = env.a};
        int32_t src[B * TS], ids[B * TT];
        random_ids(&env.rng, src, B * TS, SV);
        random_ids(&env.rng, ids, B * TT, V);
        bool was = qkv_set_grad_enabled(false);
        qkv_tensor *full = qkv_s2s_stack_forward(&s, &ctx, src, VALID, TS, ids, B, TT);
        ck_assert_qkv(full);
        cached k = {&s, &ctx, qkv_s2s_memory_new(&s, src, VALID, B, TS),
                    qkv_kv_cache_new(&s.cfg.block, B, MAX_TGT)};
        ck_assert_qkv(k.mem);
        ck_assert_qkv(k.c);
        char what[16];
        snprintf(what, sizeof what, "stack %d", which);
        assert_cached_steps_are_full(cached_step, &k, ids, full, B, TT, V, what);
        ck_assert_int_eq(k.c->len[0], TT);
        qkv_set_grad_enabled(was);
        qkv_kv_cache_free(k.c);
        qkv_s2s_memory_free(k.mem);
        drop(&s, &p, &env);
    }
}
END_TEST

START_TEST(test_generation_with_the_cache_is_without)
{
    const qkv_sample_opts greedy = {0}, sampled = {.temperature = 1};
    const qkv_sample_opts *opts[2] = {&greedy, &sampled};
    for (int which = 0; which < 3; which++)
        for (int o = 0; o < 2; o++) {
            qkv_s2s_stack s;
            qkv_params *p = make(&s, "m", which, 12 + which);
            qkv_rng draw;
            qkv_rng_seed(&draw, 3);
            int32_t src[B * TS], bos[B] = {1, 1};
            random_ids(&draw, src, B * TS, SV);
            qkv_lm *without = qkv_s2s_stack_lm_new(&s, src, VALID, B, TS, false);
            qkv_lm *with = qkv_s2s_stack_lm_new(&s, src, VALID, B, TS, true);
            char what[64];
            snprintf(what, sizeof what, "stack %d, %s", which, o ? "sampled" : "greedy");
            assert_cache_changes_no_token(without, with, B, bos, 1, MAX_TGT, opts[o], what);
            qkv_s2s_stack_lm_free(without);
            qkv_s2s_stack_lm_free(with);
            qkv_s2s_stack_free(&s);
            qkv_params_free(&p);
        }
}
END_TEST

START_TEST(test_errors_name_what_is_wrong)
{
    qkv_s2s_stack s;
    qkv_params *p = qkv_params_new();
    qkv_s2s_config cfg = config(0);
    cfg.max_src = 0;
    FAILS_INT(qkv_s2s_stack_init(&s, p, "m", &cfg), "qkv_s2s_stack_init", "max_src 0");
    cfg = config(0);
    cfg.block.n_head = 3;
    FAILS_INT(qkv_s2s_stack_init(&s, p, "m", &cfg), "qkv_s2s_stack_init", "n_head 3");
    qkv_params_free(&p);

    p = make(&s, "m", 0, 1);
    qkv_test_env env = qkv_test_env_new(9);
    qkv_ctx ctx = {.arena = env.a};
    int32_t src[B * (MAX_SRC + 1)] = {0}, ids[B * (MAX_TGT + 1)] = {0};
    FAILS_NULL(qkv_s2s_stack_forward(&s, &ctx, src, NULL, MAX_SRC + 1, ids, B, TT),
               "qkv_s2s_stack_forward", "7 positions", "max_src 6");
    FAILS_NULL(qkv_s2s_stack_forward(&s, &ctx, src, NULL, TS, ids, B, MAX_TGT + 1),
               "qkv_s2s_stack_forward", "8 positions", "max_tgt 7");
    src[3] = SV; /* a target id, but not a source id */
    FAILS_NULL(qkv_s2s_stack_loss(&s, &ctx, src, NULL, TS, ids, ids, B, TT), "qkv_s2s_stack_loss",
               "src[3] is 7", "[0, 7)");
    src[3] = 0;
    qkv_s2s_memory *mem = qkv_s2s_memory_new(&s, src, NULL, B, TS);
    ck_assert_qkv(mem);
    qkv_kv_cache *c = qkv_kv_cache_new(&s.cfg.block, B, MAX_TGT);
    bool was = qkv_set_grad_enabled(false);
    FAILS_NULL(qkv_s2s_stack_forward_cached(&s, &ctx, mem, ids, 1, 1, c),
               "qkv_s2s_stack_forward_cached", "B 1", "mem holds 2");
    for (int t = 0; t < MAX_TGT; t++)
        ck_assert_qkv(qkv_s2s_stack_forward_cached(&s, &ctx, mem, ids, B, 1, c));
    FAILS_NULL(qkv_s2s_stack_forward_cached(&s, &ctx, mem, ids, B, 1, c),
               "qkv_s2s_stack_forward_cached", "from 7", "max_tgt 7");
    qkv_set_grad_enabled(was);
    qkv_kv_cache_free(c);
    qkv_s2s_memory_free(mem);
    int32_t bos[3] = {1, 1, 1}, out[3 * MAX_TGT];
    qkv_lm *lm = qkv_s2s_stack_lm_new(&s, src, NULL, B, TS, true);
    ck_assert_qkv(lm);
    ck_assert_int_eq(qkv_generate_batch(lm, 3, bos, 1, 2, &(qkv_sample_opts){0}, NULL, -1, out),
                     -1);
    ck_assert_msg(strstr(qkv_last_error(), "made for 2 inputs"), "%s", qkv_last_error());
    qkv_s2s_stack_lm_free(lm);
    drop(&s, &p, &env);
}
END_TEST

static Suite *s2s_stack_suite(void)
{
    Suite *s = suite_create("s2s_stack");
    TCase *tc = tcase_create("s2s_stack");
    tcase_add_test(tc, test_names_in_declaration_order);
    tcase_add_test(tc, test_forward_is_the_modules_composed);
    tcase_add_test(tc, test_loss_is_the_mean_cross_entropy);
    tcase_add_test(tc, test_padding_is_not_read);
    tcase_add_test(tc, test_the_encoder_reads_both_ways);
    tcase_add_test(tc, test_cached_forward_is_the_full_forward);
    tcase_add_test(tc, test_generation_with_the_cache_is_without);
    tcase_add_test(tc, test_errors_name_what_is_wrong);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(s2s_stack_suite)
