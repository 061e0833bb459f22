/* The character GPT: it learns, it resumes exactly, and cached generation
 * equals uncached generation. */
#include <stdlib.h>
#include <unistd.h>

#include "testing.h"

/* A short text written to a temporary file; its path is returned (free with unlink). */
static char *write_corpus(const char *text, int repeats)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/qkv_gpt_XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    FILE *f = fdopen(fd, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < repeats; i++)
        fputs(text, f);
    fclose(f);
    return path;
}

static const char *TEXT = "the quick brown fox jumps over the lazy dog; attention is all you need.\n";

/* TEXT written 40 times to a temporary file (its path into *path), loaded. */
static qkv_corpus *tiny_corpus(char **path)
{
    *path = write_corpus(TEXT, 40);
    qkv_corpus *c = qkv_corpus_load(*path, NULL);
    ck_assert_qkv(c);
    return c;
}

static qkv_gpt_config tiny_config(int vocab, double dropout)
{
    return (qkv_gpt_config){.vocab_size = vocab, .block_size = 16, .n_layer = 2, .n_head = 2,
                            .n_embd = 32, .dropout = dropout};
}

static qkv_train_config tiny_train(int iters)
{
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = iters;
    tc.batch_size = 8;
    tc.lr = 3e-3;
    tc.min_lr = 3e-4;
    tc.warmup = 10;
    tc.eval_iters = 4;
    return tc;
}

START_TEST(test_tiny_model_overfits_short_text)
{
    char *path;
    qkv_corpus *c = tiny_corpus(&path);
    qkv_gpt_config mc = tiny_config(c->tok.size, 0);
    qkv_train_config tc = tiny_train(500);
    tc.lr = 1e-2; /* a tiny model on a tiny text learns fast at a high rate */
    tc.min_lr = 1e-3;
    test_run *t = gpt_run_new(&mc, &tc, c);
    ck_assert_qkv(t);
    double first = 0, loss = 0;
    for (int i = 0; i < tc.iters; i++) {
        ck_assert_msg(qkv_training_step(t->run, &loss, NULL) == 0, "%s", qkv_last_error());
        if (i == 0)
            first = loss;
    }
    double val = qkv_training_eval(t->run, QKV_SPLIT_VAL);
    ck_assert_msg(first > 2.5, "initial loss %g should be near ln(vocab)", first);
    ck_assert_msg(val < 0.1, "after %d steps the val loss is %g, expected < 0.1", tc.iters, val);
    test_run_free(t);
    qkv_corpus_free(c);
    unlink(path);
}
END_TEST

/* After the first steps have sized the arena and the kernels' buffers, a
 * training step allocates nothing: every tensor, node and gradient comes
 * from the step arena. */
START_TEST(test_steady_training_step_allocates_nothing)
{
    char *path;
    qkv_corpus *c = tiny_corpus(&path);
    qkv_gpt_config mc = tiny_config(c->tok.size, 0.1);
    qkv_train_config tc = tiny_train(20);
    test_run *t = gpt_run_new(&mc, &tc, c);
    ck_assert_qkv(t);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(qkv_training_step(t->run, NULL, NULL), 0);
    qkv_training_eval(t->run, QKV_SPLIT_VAL);
    uint64_t before = qkv_alloc_count();
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(qkv_training_step(t->run, NULL, NULL), 0);
    qkv_training_eval(t->run, QKV_SPLIT_VAL);
    ck_assert_msg(qkv_alloc_count() == before, "%llu allocations in 5 steady steps",
                  (unsigned long long)(qkv_alloc_count() - before));
    test_run_free(t);
    qkv_corpus_free(c);
    unlink(path);
}
END_TEST

/* Train n steps, recording each loss. */
static void run_steps(test_run *t, int n, double *losses)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(qkv_training_step(t->run, &losses[i], NULL) == 0, "%s", qkv_last_error());
}

START_TEST(test_resume_is_bit_exact)
{
    char *path;
    qkv_corpus *c = tiny_corpus(&path);
    char ckpt[80];
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", path);
    qkv_gpt_config mc = tiny_config(c->tok.size, 0.1); /* dropout: its stream must resume too */
    qkv_train_config tc = tiny_train(20);
    double straight[20], split[20];

    test_run *a = gpt_run_new(&mc, &tc, c);
    ck_assert_qkv(a);
    run_steps(a, 20, straight);
    qkv_training_eval(a->run, QKV_SPLIT_VAL);

    test_run *b = gpt_run_new(&mc, &tc, c);
    ck_assert_qkv(b);
    run_steps(b, 10, split);
    ck_assert_msg(qkv_training_save(b->run, ckpt) == 0, "%s", qkv_last_error());
    test_run_free(b);
    b = gpt_run_resume(ckpt, path, 0);
    ck_assert_qkv(b);
    ck_assert_int_eq(b->run->step, 10);
    run_steps(b, 10, split + 10);
    qkv_training_eval(b->run, QKV_SPLIT_VAL);

    ck_assert_int_eq(memcmp(straight, split, sizeof straight), 0);
    const qkv_params *pa = a->model->params, *pb = b->model->params;
    ck_assert_uint_eq(pa->total, pb->total);
    ck_assert_msg(memcmp(pa->data, pb->data, pa->total * sizeof(qkv_real)) == 0,
                  "parameters differ after resume");
    ck_assert_msg(memcmp(a->run->opt->m, b->run->opt->m, pa->total * sizeof(qkv_real)) == 0,
                  "AdamW moments differ after resume");
    test_run_free(a);
    test_run_free(b);
    qkv_corpus_free(c);
    unlink(ckpt);
    unlink(path);
}
END_TEST

typedef struct tokens {
    int32_t ids[256];
    int n;
} tokens;

static int collect(int32_t tok, void *ud)
{
    tokens *t = ud;
    t->ids[t->n++] = tok;
    return 0;
}

/* The model options one value at a time, then together (index 0: none). */
static const qkv_model_options option_sets[8] = {
    {0},
    {.positions = QKV_POSITIONS_ROPE},
    {.norm = QKV_NORM_RMSNORM},
    {.activation = QKV_ACTIVATION_RELU2},
    {.activation = QKV_ACTIVATION_SILU},
    {.qk_norm = true},
    {.untied = true},
    {.positions = QKV_POSITIONS_ROPE, .norm = QKV_NORM_RMSNORM,
     .activation = QKV_ACTIVATION_RELU2, .qk_norm = true, .untied = true},
};

/* base with the options of option_sets[i]. */
static qkv_gpt_config with_options(qkv_gpt_config base, int i)
{
    base.opts = option_sets[i];
    return base;
}

START_TEST(test_cached_generation_equals_uncached)
{
    /* With RoPE the cached keys were turned at the positions they were made
     * at, and each new query at its own: the same numbers the uncached
     * forward makes for the whole window. */
    qkv_gpt_config base = {.vocab_size = 20, .block_size = 12, .n_layer = 2, .n_head = 2,
                           .n_embd = 16, .dropout = 0};
    qkv_gpt_config mc = with_options(base, _i);
    qkv_gpt *m = qkv_gpt_new(&mc, 7);
    ck_assert_qkv(m);
    /* Larger weights than the init so the distribution is far from uniform. */
    for (size_t i = 0; i < m->params->total; i++)
        m->params->data[i] *= 20;
    const int32_t prompt[3] = {1, 2, 3};
    qkv_sample_opts opts[2] = {{.temperature = 1, .top_k = 0, .top_p = 1},
                               {.temperature = 0, .top_k = 0, .top_p = 1}};
    for (int o = 0; o < 2; o++) {
        tokens with = {0}, without = {0};
        qkv_rng r1, r2;
        qkv_rng_seed(&r1, 99);
        qkv_rng_seed(&r2, 99);
        /* 40 tokens with a block of 12: the window slides several times. */
        ck_assert_int_eq(qkv_gpt_generate(m, prompt, 3, 40, &opts[o], &r1, true, collect, &with), 0);
        ck_assert_int_eq(qkv_gpt_generate(m, prompt, 3, 40, &opts[o], &r2, false, collect, &without), 0);
        ck_assert_int_eq(with.n, 40);
        ck_assert_int_eq(without.n, 40);
        for (int i = 0; i < 40; i++)
            ck_assert_msg(with.ids[i] == without.ids[i],
                          "options %d, opts %d token %d: cached %d, uncached %d", _i, o, i,
                          with.ids[i], without.ids[i]);
    }
    qkv_gpt_free(m);
}
END_TEST

START_TEST(test_sampling_options)
{
    const qkv_real logits[5] = {0.5f, 2.0f, 1.0f, -1.0f, 1.9f};
    qkv_real scratch[10];
    qkv_rng rng;
    qkv_rng_seed(&rng, 3);
    qkv_sample_opts greedy = {.temperature = 0, .top_k = 0, .top_p = 1};
    qkv_sample_opts top1 = {.temperature = 1, .top_k = 1, .top_p = 1};
    qkv_sample_opts nucleus = {.temperature = 1, .top_k = 0, .top_p = 0.3};
    /* p = .088 .393 .145 .020 .355: at top_p 0.5 the token that crosses it is
     * not the top one (.393 < 0.5, then .393 + .355 >= 0.5), so the rule (keep
     * it: tokens 1 and 4) and its near-miss (stop before it: token 1 alone)
     * differ; 0.3 is crossed by the top token itself, where both agree. */
    qkv_sample_opts crossing = {.temperature = 1, .top_k = 0, .top_p = 0.5};
    qkv_sample_opts top2 = {.temperature = 1, .top_k = 2, .top_p = 1};
    qkv_sample_opts plain = {.temperature = 1, .top_k = 0, .top_p = 1};
    int counts[5] = {0}, kept[5] = {0};
    for (int i = 0; i < 20000; i++) {
        ck_assert_int_eq(qkv_sample_token(logits, 5, &greedy, &rng, scratch), 1);
        ck_assert_int_eq(qkv_sample_token(logits, 5, &top1, &rng, scratch), 1);
        ck_assert_int_eq(qkv_sample_token(logits, 5, &nucleus, &rng, scratch), 1);
        int t = qkv_sample_token(logits, 5, &top2, &rng, scratch);
        ck_assert_msg(t == 1 || t == 4, "top-2 drew token %d", t);
        t = qkv_sample_token(logits, 5, &crossing, &rng, scratch);
        ck_assert_msg(t == 1 || t == 4, "top-p 0.5 drew token %d", t);
        kept[t]++;
        counts[qkv_sample_token(logits, 5, &plain, &rng, scratch)]++;
    }
    /* Plain sampling follows the softmax: compare frequencies with exact probabilities. */
    double z = 0;
    for (int i = 0; i < 5; i++)
        z += exp((double)logits[i]);
    for (int i = 0; i < 5; i++) {
        double p = exp((double)logits[i]) / z, f = counts[i] / 20000.0;
        ck_assert_msg(fabs(f - p) < 0.015, "token %d: frequency %g, probability %g", i, f, p);
    }
    /* top-p 0.5 draws tokens 1 and 4 in proportion to their probabilities. */
    double p1 = exp((double)logits[1]) / z, p4 = exp((double)logits[4]) / z;
    ck_assert_msg(fabs(kept[1] / 20000.0 - p1 / (p1 + p4)) < 0.015,
                  "top-p 0.5: token 1 drawn %d times in 20000, probability %g", kept[1],
                  p1 / (p1 + p4));
    qkv_sample_opts bad = {.temperature = -1, .top_k = 0, .top_p = 1};
    ck_assert_int_eq(qkv_sample_opts_check(&bad), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "temperature"));
}
END_TEST

START_TEST(test_config_round_trip_and_errors)
{
    qkv_gpt_config c = {.vocab_size = 65, .block_size = 64, .n_layer = 4, .n_head = 4,
                        .n_embd = 128, .dropout = 0.2, .opts.no_bias = true}, d;
    uint8_t blob[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config_pack(&c, blob);
    ck_assert_int_eq(qkv_gpt_config_unpack(&d, blob, sizeof blob), 0);
    ck_assert(c.vocab_size == d.vocab_size && c.block_size == d.block_size &&
              c.n_layer == d.n_layer && c.n_head == d.n_head && c.n_embd == d.n_embd &&
              c.dropout == d.dropout && d.opts.no_bias);
    /* Without biases: nanoGPT's baby model has 804,096 parameters (809,856 with them). */
    qkv_gpt *m = qkv_gpt_new(&c, 1);
    ck_assert_qkv(m);
    size_t n = 0;
    for (int i = 0; i < m->params->count; i++) {
        n += m->params->items[i].t->size;
        ck_assert_msg(!strstr(m->params->items[i].name, "bias"), "%s", m->params->items[i].name);
    }
    ck_assert_uint_eq(n, 804096);
    qkv_gpt_free(m);
    c.opts.no_bias = false;
    m = qkv_gpt_new(&c, 1);
    ck_assert_qkv(m);
    n = 0;
    for (int i = 0; i < m->params->count; i++)
        n += m->params->items[i].t->size;
    ck_assert_uint_eq(n, 809856);
    qkv_gpt_free(m);
    ck_assert_int_eq(qkv_gpt_config_unpack(&d, blob, 7), -1);
    c.n_head = 5;
    ck_assert_ptr_null(qkv_gpt_new(&c, 1));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "n_embd 128 is not a multiple of n_head 5"));
}
END_TEST

/* Little-endian writers for the old checkpoint layout below. */
static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> 8 * i);
}

static void put_f64(uint8_t *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    put_u32(p, (uint32_t)v);
    put_u32(p + 4, (uint32_t)(v >> 32));
}

/* Flag words as qkv wrote them when every option was a bool (bit i: row i
 * on), and the options they mean now: no_bias alone (the first
 * checkpoints'), --rope --rmsnorm --relu2 (bits 1-3), all six. */
static const struct {
    uint32_t word;
    qkv_model_options opts;
} bool_words[] = {
    {0x01, {.no_bias = true}},
    {0x0e, {.positions = QKV_POSITIONS_ROPE, .norm = QKV_NORM_RMSNORM,
            .activation = QKV_ACTIVATION_RELU2}},
    {0x3f, {.no_bias = true, .positions = QKV_POSITIONS_ROPE, .norm = QKV_NORM_RMSNORM,
            .activation = QKV_ACTIVATION_RELU2, .qk_norm = true, .untied = true}},
};

/* A checkpoint as qkv wrote it before the schedule choice existed: an
 * 88-byte config blob, the model's 32 bytes (the last word a word of bools,
 * bool_words[_i]) then the run's 56. It must load and resume with the
 * options the bools meant and the cosine schedule. */
START_TEST(test_checkpoint_from_before_the_options_loads)
{
    char *path;
    qkv_corpus *c = tiny_corpus(&path);
    char ckpt[80];
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", path);
    qkv_gpt_config mc = tiny_config(c->tok.size, 0);
    mc.opts = bool_words[_i].opts;
    qkv_train_config tc = tiny_train(20);
    test_run *t = gpt_run_new(&mc, &tc, c);
    ck_assert_qkv(t);
    double loss[4];
    run_steps(t, 4, loss);

    uint8_t blob[88] = {0};
    const int sizes[5] = {mc.vocab_size, mc.block_size, mc.n_layer, mc.n_head, mc.n_embd};
    for (int i = 0; i < 5; i++)
        put_u32(blob + 4 * i, (uint32_t)sizes[i]);
    put_f64(blob + 20, mc.dropout);
    put_u32(blob + 28, bool_words[_i].word);
    const int ints[4] = {tc.iters, tc.batch_size, tc.warmup, tc.eval_iters};
    for (int i = 0; i < 4; i++)
        put_u32(blob + 32 + 4 * i, (uint32_t)ints[i]);
    const double reals[4] = {tc.lr, tc.min_lr, tc.weight_decay, tc.grad_clip};
    for (int i = 0; i < 4; i++)
        put_f64(blob + 48 + 8 * i, reals[i]);
    put_u32(blob + 80, (uint32_t)tc.seed);
    put_u32(blob + 84, (uint32_t)(tc.seed >> 32));
    qkv_ckpt_model model = {.kind = "gpt", .config = blob, .config_len = sizeof blob,
                            .vocab = &c->tok};
    qkv_ckpt_progress prog = {.step = t->run->step, .n_rngs = 4, .rngs = t->run->rngs};
    ck_assert_msg(qkv_checkpoint_save(ckpt, &model, t->model->params, t->run->opt, &prog) == 0,
                  "%s", qkv_last_error());

    qkv_tokenizer vocab;
    qkv_gpt *m = qkv_gpt_load(ckpt, &vocab);
    ck_assert_qkv(m);
    ck_assert(memcmp(&m->cfg.opts, &mc.opts, sizeof mc.opts) == 0);
    ck_assert_uint_eq(m->params->total, t->model->params->total);
    ck_assert_int_eq(memcmp(m->params->data, t->model->params->data,
                            m->params->total * sizeof(qkv_real)), 0);
    qkv_gpt_free(m);
    test_run *r = gpt_run_resume(ckpt, path, 0);
    ck_assert_qkv(r);
    ck_assert_int_eq(r->run->step, 4);
    ck_assert(r->run->cfg.wsd_decay == 0 && r->run->sched.wsd_decay == 0);
    double a, b;
    ck_assert_int_eq(qkv_training_step(t->run, &a, NULL), 0);
    ck_assert_int_eq(qkv_training_step(r->run, &b, NULL), 0);
    ck_assert_msg(a == b, "step 5 after loading the old layout: %g, straight on: %g", b, a);
    test_run_free(r);
    test_run_free(t);
    qkv_corpus_free(c);
    unlink(ckpt);
    unlink(path);
}
END_TEST

/* Every option (and the stable-decay schedule) survives save and load: the
 * loaded model has the same config and gives the same logits. */
START_TEST(test_options_save_and_load)
{
    char *path;
    qkv_corpus *c = tiny_corpus(&path);
    char ckpt[80];
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", path);
    qkv_gpt_config mc = with_options(tiny_config(c->tok.size, 0), _i);
    qkv_train_config tc = tiny_train(20);
    tc.wsd_decay = 0.25;
    test_run *t = gpt_run_new(&mc, &tc, c);
    ck_assert_qkv(t);
    double loss[3];
    run_steps(t, 3, loss);
    ck_assert_msg(qkv_training_save(t->run, ckpt) == 0, "%s", qkv_last_error());
    qkv_tokenizer vocab;
    qkv_gpt *m = qkv_gpt_load(ckpt, &vocab);
    ck_assert_qkv(m);
    ck_assert(memcmp(&m->cfg.opts, &mc.opts, sizeof mc.opts) == 0);
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_ctx ctx = {.arena = a};
    const int32_t ids[5] = {1, 2, 3, 4, 5};
    qkv_tensor *la = qkv_gpt_logits(t->model, &ctx, ids, 1, 5, NULL);
    qkv_tensor *lb = qkv_gpt_logits(m, &ctx, ids, 1, 5, NULL);
    ck_assert_qkv(la && lb ? la : NULL);
    ck_assert_int_eq(memcmp(la->data, lb->data, la->size * sizeof(qkv_real)), 0);
    test_run *r = gpt_run_resume(ckpt, path, 0);
    ck_assert_qkv(r);
    ck_assert(r->run->cfg.wsd_decay == 0.25 && r->run->sched.wsd_decay == 0.25);
    test_run_free(r);
    qkv_arena_free(&a);
    qkv_gpt_free(m);
    test_run_free(t);
    qkv_corpus_free(c);
    unlink(ckpt);
    unlink(path);
}
END_TEST

START_TEST(test_option_flags_round_trip_and_errors)
{
    qkv_gpt_config c = {.vocab_size = 65, .block_size = 64, .n_layer = 4, .n_head = 4,
                        .n_embd = 128, .opts = {.rope = true, .qk_norm = true, .untied = true}}, d;
    uint8_t blob[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config_pack(&c, blob);
    ck_assert_int_eq(qkv_gpt_config_unpack(&d, blob, sizeof blob), 0);
    const qkv_model_options *o = &d.opts;
    ck_assert(o->rope && o->qk_norm && o->untied && !o->rmsnorm && !o->relu2 && !o->no_bias);
    /* baby with rope (no wpe: 8,192 fewer), qk-norm (2·32 per block) and an
     * lm head of its own (65·128): 809,856 − 8,192 + 256 + 8,320. */
    qkv_gpt *m = qkv_gpt_new(&c, 1);
    ck_assert_qkv(m);
    ck_assert_uint_eq(m->params->total, 810240);
    qkv_gpt_free(m);
    blob[31] |= 0x80; /* bit 31: no option owns it (they are added from bit 0 up) */
    ck_assert_int_eq(qkv_gpt_config_unpack(&d, blob, sizeof blob), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "flag word is 0x80000032"));
    c.n_embd = 12, c.n_head = 4; /* head size 3: RoPE needs pairs */
    ck_assert_ptr_null(qkv_gpt_new(&c, 1));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "rope needs an even head size, not 3"));
}
END_TEST

START_TEST(test_logits_shape_and_bad_ids)
{
    qkv_gpt_config mc = {.vocab_size = 10, .block_size = 8, .n_layer = 1, .n_head = 2,
                         .n_embd = 8, .dropout = 0};
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    ck_assert_qkv(m);
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_ctx ctx = {.arena = a, .train = false, .rng = NULL};
    int32_t ids[2 * 8] = {0};
    qkv_tensor *logits = qkv_gpt_logits(m, &ctx, ids, 2, 8, NULL);
    ck_assert_qkv(logits);
    ck_assert_int_eq(logits->ndim, 3);
    ck_assert_int_eq(logits->shape[0], 2);
    ck_assert_int_eq(logits->shape[1], 8);
    ck_assert_int_eq(logits->shape[2], 10);
    ids[5] = 10;
    ck_assert_ptr_null(qkv_gpt_logits(m, &ctx, ids, 2, 8, NULL));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "10"));
    ids[5] = 0;
    ck_assert_ptr_null(qkv_gpt_logits(m, &ctx, ids, 1, 9, NULL)); /* longer than the block */
    qkv_arena_free(&a);
    qkv_gpt_free(m);
}
END_TEST

static Suite *gpt_suite(void)
{
    Suite *s = suite_create("gpt");
    TCase *tc = tcase_create("gpt");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_tiny_model_overfits_short_text);
    tcase_add_test(tc, test_resume_is_bit_exact);
    tcase_add_test(tc, test_steady_training_step_allocates_nothing);
    tcase_add_loop_test(tc, test_cached_generation_equals_uncached, 0, 8);
    tcase_add_loop_test(tc, test_checkpoint_from_before_the_options_loads, 0, 3);
    tcase_add_loop_test(tc, test_options_save_and_load, 0, 8);
    tcase_add_test(tc, test_option_flags_round_trip_and_errors);
    tcase_add_test(tc, test_sampling_options);
    tcase_add_test(tc, test_config_round_trip_and_errors);
    tcase_add_test(tc, test_logits_shape_and_bad_ids);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(gpt_suite)
