/* The encoder-decoder: padding is invisible, the loss skips padded targets,
 * a tiny model learns a handful of pairs and cached greedy decoding equals
 * uncached (each also with every model option on), checkpoints round-trip, the ablation cuts the input off, the
 * attention picture has one cell per weight, bad inputs are errors. */
#include <stdlib.h>
#include <unistd.h>

#include "cli/viz/viz.h"
#include "testing.h"

static const char *ALPHABET = "abcdefghijklmnopqrstuvwxyz";

static qkv_seq2seq_config tiny_config(void)
{
    return (qkv_seq2seq_config){.max_src = 12, .max_tgt = 12, .n_layer = 2, .n_head = 2,
                                .n_embd = 32, .dropout = 0};
}

/* A tiny model; with every_option, with every model option on. */
static qkv_seq2seq *tiny_model_with(uint64_t seed, bool every_option)
{
    qkv_tokenizer chars;
    qkv_tokenizer_build(&chars, ALPHABET, strlen(ALPHABET));
    qkv_seq2seq_config cfg = tiny_config();
    if (every_option)
        cfg.opts = qkv_test_every_option();
    qkv_seq2seq *m = qkv_seq2seq_new(&cfg, &chars, seed);
    ck_assert_qkv(m);
    return m;
}

static qkv_seq2seq *tiny_model(uint64_t seed) { return tiny_model_with(seed, false); }

static bool same_config(const qkv_seq2seq_config *a, const qkv_seq2seq_config *b)
{
    return a->max_src == b->max_src && a->max_tgt == b->max_tgt && a->n_layer == b->n_layer &&
           a->n_head == b->n_head && a->n_embd == b->n_embd && a->dropout == b->dropout;
}

/* Scale every parameter so a fresh model's outputs are far from uniform. */
static void sharpen(qkv_seq2seq *m, qkv_real by)
{
    for (size_t i = 0; i < m->params->total; i++)
        m->params->data[i] *= by;
}

START_TEST(test_padding_does_not_change_encoder_output)
{
    qkv_seq2seq *m = tiny_model(1);
    sharpen(m, 10);
    qkv_seq2seq_batch *alone = qkv_seq2seq_batch_new(m, 2), *padded = qkv_seq2seq_batch_new(m, 2);
    ck_assert(alone && padded);
    const char *one[1] = {"hello"}, *two[2] = {"hello", "attentionis"};
    ck_assert_int_eq(qkv_seq2seq_batch_fill(m, alone, 1, one, NULL), 0);
    ck_assert_int_eq(qkv_seq2seq_batch_fill(m, padded, 2, two, NULL), 0);
    ck_assert_int_eq(padded->Ts, 11); /* "hello" is followed by 6 PADs */
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_ctx ctx = {.arena = a, .train = false, .rng = NULL};
    qkv_tensor *x = qkv_seq2seq_encode(m, &ctx, alone->src, alone->src_valid, 1, alone->Ts);
    qkv_tensor *y = qkv_seq2seq_encode(m, &ctx, padded->src, padded->src_valid, 2, padded->Ts);
    /* Without the mask the real positions see the padding, and their output moves. */
    qkv_tensor *z = qkv_seq2seq_encode(m, &ctx, padded->src, NULL, 2, padded->Ts);
    ck_assert_qkv(x);
    ck_assert_qkv(y);
    ck_assert_qkv(z);
    double worst = 0, unmasked = 0;
    for (size_t i = 0; i < x->size; i++) { /* the 5 real rows of sequence 0 */
        worst = fmax(worst, fabs((double)x->data[i] - (double)y->data[i]));
        unmasked = fmax(unmasked, fabs((double)x->data[i] - (double)z->data[i]));
    }
    ck_assert_msg(worst <= 1e-6, "padding changed the encoder output by %g", worst);
    ck_assert_msg(unmasked > 1e-3, "without the mask the output should change (by %g)", unmasked);
    qkv_arena_free(&a);
    qkv_seq2seq_batch_free(alone);
    qkv_seq2seq_batch_free(padded);
    qkv_seq2seq_free(m);
}
END_TEST

/* The loss of a batch of one pair (its mean over target tokens + EOS). */
static double pair_loss(const qkv_seq2seq *m, qkv_ctx *ctx, qkv_seq2seq_batch *b, int n,
                        const char *const *in, const char *const *out)
{
    ck_assert_msg(qkv_seq2seq_batch_fill(m, b, n, in, out) == 0, "%s", qkv_last_error());
    qkv_tensor *loss = qkv_seq2seq_loss(m, ctx, b);
    ck_assert_qkv(loss);
    return loss->data[0];
}

START_TEST(test_loss_skips_padded_targets)
{
    qkv_seq2seq *m = tiny_model(2);
    sharpen(m, 5);
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, 2);
    ck_assert_ptr_nonnull(b);
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_ctx ctx = {.arena = a, .train = false, .rng = NULL};
    const char *in[2] = {"ab", "transformer"}, *out[2] = {"x", "remrofsnart"};
    double la = pair_loss(m, &ctx, b, 1, in, out), lb = pair_loss(m, &ctx, b, 1, in + 1, out + 1);
    double both = pair_loss(m, &ctx, b, 2, in, out);
    /* Token-weighted mean: 2 targets (x, EOS) and 12 (11 letters, EOS); the padding counts for nothing. */
    double expected = (2 * la + 12 * lb) / 14;
    ck_assert_int_eq(b->Tt, 12);
    ck_assert_int_eq(b->dec_in[0], QKV_SEQ2SEQ_BOS);
    ck_assert_int_eq(b->dec_out[1], QKV_SEQ2SEQ_EOS);
    ck_assert_int_eq(b->dec_out[2], QKV_SEQ2SEQ_IGNORE);
    ck_assert_msg(fabs(both - expected) < 1e-5 * fabs(expected), "batch loss %g, expected %g",
                  both, expected);
    qkv_arena_free(&a);
    qkv_seq2seq_batch_free(b);
    qkv_seq2seq_free(m);
}
END_TEST

/* A task of a few fixed pairs: reverse the word. */
static const char *const WORDS[][2] = {
    {"a", "a"},         {"qkv", "vkq"},     {"hello", "olleh"},
    {"zebra", "arbez"}, {"attention", "noitnetta"}, {"key", "yek"},
};
enum { N_WORDS = sizeof WORDS / sizeof WORDS[0] };

static int sample_word(qkv_rng *rng, bool test, char *in, size_t in_len, char *out, size_t out_len)
{
    (void)test;
    int i = (int)qkv_rng_below(rng, N_WORDS);
    snprintf(in, in_len, "%s", WORDS[i][0]);
    snprintf(out, out_len, "%s", WORDS[i][1]);
    return 0;
}

static const char *words_alphabet(void) { return ALPHABET; }

static const qkv_seq2seq_task WORDS_TASK = {"words", words_alphabet, 11, 11, sample_word};

START_TEST(test_tiny_model_learns_a_few_pairs)
{
    qkv_seq2seq_config mc = qkv_seq2seq_config_for(&WORDS_TASK, 1, 2, 32, 0);
    if (_i == 1)
        mc.opts = qkv_test_every_option();
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = 250;
    tc.batch_size = 12;
    tc.lr = 1e-2;
    tc.min_lr = 1e-3;
    tc.warmup = 20;
    tc.eval_iters = 1;
    test_run *t = s2s_run_new(&mc, &tc, &WORDS_TASK);
    ck_assert_qkv(t);
    double first = 0, loss = 0;
    for (int i = 0; i < tc.iters; i++) {
        ck_assert_msg(qkv_training_step(t->run, &loss, NULL) == 0, "%s", qkv_last_error());
        if (i == 0)
            first = loss;
    }
    ck_assert_msg(first > 2.5, "initial loss %g should be near ln(29)", first);
    const char *in[N_WORDS];
    char buf[N_WORDS][16], *outs[N_WORDS];
    for (int i = 0; i < N_WORDS; i++) {
        in[i] = WORDS[i][0];
        outs[i] = buf[i];
    }
    ck_assert_int_eq(qkv_seq2seq_translate(t->s2s, N_WORDS, in, outs), 0);
    for (int i = 0; i < N_WORDS; i++)
        ck_assert_msg(strcmp(outs[i], WORDS[i][1]) == 0, "%s -> %s, expected %s (loss %g)", in[i],
                      outs[i], WORDS[i][1], loss);
    ck_assert_double_eq(qkv_training_eval(t->run, 0), 1.0);
    if (_i == 1) /* the options reached the model */
        ck_assert(qkv_params_find(t->s2s->params, "dec.lm_head.weight") &&
                  !qkv_params_find(t->s2s->params, "enc.wpe.weight"));
    test_run_free(t);
}
END_TEST

START_TEST(test_training_is_deterministic_for_a_seed)
{
    qkv_seq2seq_config mc = qkv_seq2seq_config_for(&WORDS_TASK, 1, 2, 16, 0.1);
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = 5;
    tc.batch_size = 4;
    tc.seed = 9;
    test_run *t[2];
    double loss[2][5];
    for (int k = 0; k < 2; k++) {
        t[k] = s2s_run_new(&mc, &tc, &WORDS_TASK);
        ck_assert_qkv(t[k]);
        for (int i = 0; i < tc.iters; i++)
            ck_assert_int_eq(qkv_training_step(t[k]->run, &loss[k][i], NULL), 0);
    }
    ck_assert_int_eq(memcmp(loss[0], loss[1], sizeof loss[0]), 0);
    ck_assert_msg(memcmp(t[0]->s2s->params->data, t[1]->s2s->params->data,
                         t[0]->s2s->params->total * sizeof(qkv_real)) == 0,
                  "two runs with the same seed ended with different parameters");
    test_run_free(t[0]);
    test_run_free(t[1]);
}
END_TEST

/* Train n steps, recording each loss. */
static void run_steps(test_run *t, int n, double *losses)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(qkv_training_step(t->run, &losses[i], NULL) == 0, "%s", qkv_last_error());
}

/* 20 steps straight, or 10, save, resume, 10 more: the same losses, the
 * same parameters and moments, bit for bit. The checkpoint also loads for
 * decoding, and a model saved without its run loads but cannot resume. */
START_TEST(test_resume_is_bit_exact)
{
    qkv_seq2seq_config mc = qkv_seq2seq_config_for(&WORDS_TASK, 1, 2, 16, 0.1); /* dropout too */
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = 20;
    tc.batch_size = 4;
    tc.warmup = 5;
    tc.eval_iters = 1;
    tc.seed = 9;
    char path[] = "/tmp/qkv_s2s_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    double straight[20], split[20];

    test_run *a = s2s_run_new(&mc, &tc, &WORDS_TASK);
    ck_assert_qkv(a);
    run_steps(a, 20, straight);
    test_run *b = s2s_run_new(&mc, &tc, &WORDS_TASK);
    ck_assert_qkv(b);
    run_steps(b, 10, split);
    ck_assert_msg(qkv_training_save(b->run, path) == 0, "%s", qkv_last_error());
    test_run_free(b);
    b = s2s_run_resume(path, &WORDS_TASK, 0);
    ck_assert_qkv(b);
    ck_assert_int_eq(b->run->step, 10);
    ck_assert_int_eq(b->run->cfg.iters, 20);
    run_steps(b, 10, split + 10);

    ck_assert_int_eq(memcmp(straight, split, sizeof straight), 0);
    const qkv_params *pa = a->s2s->params, *pb = b->s2s->params;
    ck_assert_uint_eq(pa->total, pb->total);
    ck_assert_msg(memcmp(pa->data, pb->data, pa->total * sizeof(qkv_real)) == 0,
                  "parameters differ after resume");
    ck_assert_msg(memcmp(a->run->opt->v, b->run->opt->v, pa->total * sizeof(qkv_real)) == 0,
                  "AdamW moments differ after resume");

    /* The run's checkpoint loads for decoding, like a model-only one. */
    qkv_seq2seq *m = qkv_seq2seq_load(path);
    ck_assert_qkv(m);
    ck_assert(same_config(&m->cfg, &mc));
    qkv_seq2seq_free(m);
    /* Another task's alphabet cannot continue the run. */
    const qkv_seq2seq_task *dates = qkv_seq2seq_task_find("dates");
    ck_assert_ptr_null(s2s_run_resume(path, dates, 0));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "alphabet is not task dates's"));
    /* A model saved without its run (as before runs were saved) loads, but cannot resume. */
    ck_assert_int_eq(qkv_seq2seq_save(a->s2s, path, 20), 0);
    ck_assert_qkv(m = qkv_seq2seq_load(path));
    qkv_seq2seq_free(m);
    ck_assert_ptr_null(s2s_run_resume(path, &WORDS_TASK, 0));
    ck_assert_str_eq(qkv_last_error(), "qkv_training_resume: qkv_training_config_load: "
                     "seq2seq checkpoint: config of 32 bytes, expected 96 (a model saved without "
                     "its run cannot resume)");
    ck_assert_ptr_null(s2s_run_resume(path, &WORDS_TASK, -1));
    ck_assert_str_eq(qkv_last_error(), "qkv_training_resume: iters -1 is negative (0 keeps "
                     "the saved run length)");
    test_run_free(a);
    test_run_free(b);
    unlink(path);
}
END_TEST

START_TEST(test_cached_greedy_equals_uncached)
{
    /* With RoPE the decoder's cache keeps each key turned at its own position. */
    qkv_seq2seq *m = tiny_model_with(3, _i == 1);
    sharpen(m, 20);
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, 3);
    const char *in[3] = {"abc", "queriesandke", "v"};
    ck_assert_int_eq(qkv_seq2seq_batch_fill(m, b, 3, in, NULL), 0);
    int32_t cached[3 * 12], uncached[3 * 12];
    ck_assert_int_eq(qkv_seq2seq_greedy(m, b->src, b->src_valid, 3, b->Ts, true, cached), 0);
    ck_assert_int_eq(qkv_seq2seq_greedy(m, b->src, b->src_valid, 3, b->Ts, false, uncached), 0);
    int letters = 0;
    for (int i = 0; i < 3 * 12; i++) {
        ck_assert_msg(cached[i] == uncached[i], "token %d: cached %d, uncached %d", i, cached[i],
                      uncached[i]);
        letters += cached[i] >= QKV_SEQ2SEQ_N_SPECIAL;
    }
    ck_assert_msg(letters > 3, "the outputs are nearly empty (%d letters): a weak test", letters);
    qkv_seq2seq_batch_free(b);
    qkv_seq2seq_free(m);
}
END_TEST

/* Greedy decoding from its definition: the whole decoder rerun on BOS and
 * the answer so far, the most likely token appended, until EOS; after it,
 * padding. qkv_seq2seq_greedy (qkv_generate_batch over qkv_seq2seq_lm_new)
 * must give exactly these tokens for every row of a padded batch. */
START_TEST(test_greedy_is_argmax_fed_back_until_eos)
{
    qkv_seq2seq *m = tiny_model(3);
    sharpen(m, 20);
    enum { B = 3 };
    int Tmax = m->cfg.max_tgt, V = m->vocab_size;
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, B);
    const char *in[B] = {"abc", "queriesandke", "v"};
    ck_assert_int_eq(qkv_seq2seq_batch_fill(m, b, B, in, NULL), 0);
    int32_t got[B * 12], dec_in[12];
    ck_assert_int_le(Tmax, 12);
    ck_assert_int_eq(qkv_seq2seq_greedy(m, b->src, b->src_valid, B, b->Ts, true, got), 0);
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_ctx ctx = {.arena = a};
    bool was = qkv_set_grad_enabled(false);
    for (int r = 0; r < B; r++) {
        const int32_t *src = b->src + (size_t)r * b->Ts;
        const uint8_t *valid = b->src_valid + (size_t)r * b->Ts;
        bool ended = false;
        dec_in[0] = QKV_SEQ2SEQ_BOS;
        for (int t = 0; t < Tmax; t++) {
            int32_t want = QKV_SEQ2SEQ_PAD;
            if (!ended) {
                qkv_arena_reset(a);
                qkv_tensor *memory = qkv_seq2seq_encode(m, &ctx, src, valid, 1, b->Ts);
                qkv_tensor *lg = qkv_seq2seq_decode(m, &ctx, memory, valid, dec_in, 1, t + 1, NULL);
                ck_assert_qkv(lg);
                const qkv_real *row = lg->data + (size_t)t * V;
                want = 0;
                for (int j = 1; j < V; j++)
                    want = row[j] > row[want] ? j : want;
                ended = want == QKV_SEQ2SEQ_EOS;
                if (t + 1 < Tmax)
                    dec_in[t + 1] = want;
            }
            ck_assert_msg(got[r * Tmax + t] == want, "row %d step %d: %d, by definition %d", r, t,
                          got[r * Tmax + t], want);
        }
    }
    qkv_set_grad_enabled(was);
    qkv_arena_free(&a);
    qkv_seq2seq_batch_free(b);
    qkv_seq2seq_free(m);
}
END_TEST

/* Sampling from the encoder-decoder through qkv/generate.h: with and
 * without the cache the same draws give the same tokens, and a batch of one
 * is qkv_generate's answer. */
START_TEST(test_sampling_through_the_generic_loop)
{
    qkv_seq2seq *m = tiny_model(3);
    sharpen(m, 5);
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, 1);
    const char *in[1] = {"queries"};
    ck_assert_int_eq(qkv_seq2seq_batch_fill(m, b, 1, in, NULL), 0);
    qkv_sample_opts opts = {.temperature = 1.5};
    int32_t bos = QKV_SEQ2SEQ_BOS, out[2][40];
    int letters = 0;
    for (int cache = 0; cache < 2; cache++) {
        qkv_lm *lm = qkv_seq2seq_lm_new(m, b->src, b->src_valid, 1, b->Ts, cache);
        ck_assert_qkv(lm);
        qkv_rng rng;
        qkv_rng_seed(&rng, 5);
        ck_assert_int_eq(qkv_generate_batch(lm, 1, &bos, 1, 40, &opts, &rng, -1, out[cache]), 0);
        qkv_seq2seq_lm_free(lm);
    }
    for (int i = 0; i < 40; i++) {
        ck_assert_msg(out[0][i] == out[1][i], "token %d: %d uncached, %d cached", i, out[0][i],
                      out[1][i]);
        letters += out[0][i] >= QKV_SEQ2SEQ_N_SPECIAL;
    }
    ck_assert_msg(letters > 10, "only %d letters in 40 draws: a weak test", letters);
    qkv_seq2seq_batch_free(b);
    qkv_seq2seq_free(m);
}
END_TEST

START_TEST(test_checkpoint_round_trip)
{
    qkv_seq2seq *m = tiny_model(4);
    sharpen(m, 10);
    char path[] = "/tmp/qkv_s2s_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_msg(qkv_seq2seq_save(m, path, 42) == 0, "%s", qkv_last_error());
    qkv_seq2seq *n = qkv_seq2seq_load(path);
    ck_assert_qkv(n);
    ck_assert(same_config(&m->cfg, &n->cfg));
    ck_assert_int_eq(n->chars.size, 26);
    ck_assert_int_eq(n->vocab_size, QKV_SEQ2SEQ_N_SPECIAL + 26);
    ck_assert_uint_eq(m->params->total, n->params->total);
    ck_assert_msg(memcmp(m->params->data, n->params->data, m->params->total * sizeof(qkv_real)) == 0,
                  "parameters differ after loading");
    qkv_checkpoint *ck = qkv_checkpoint_open(path, NULL);
    ck_assert_qkv(ck);
    ck_assert_str_eq(ck->kind, "seq2seq");
    ck_assert_int_eq(ck->step, 42);
    qkv_checkpoint_close(ck);
    qkv_tokenizer vocab;
    ck_assert_ptr_null(qkv_gpt_load(path, &vocab)); /* the wrong kind is named */
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "seq2seq"));
    qkv_seq2seq_free(n);
    qkv_seq2seq_free(m);
    unlink(path);
}
END_TEST

START_TEST(test_config_round_trip_and_errors)
{
    qkv_seq2seq_config c = {.max_src = 32, .max_tgt = 11, .n_layer = 2, .n_head = 4,
                            .n_embd = 128, .dropout = 0.1}, d;
    uint8_t blob[QKV_SEQ2SEQ_CONFIG_BYTES];
    qkv_seq2seq_config_pack(&c, blob);
    ck_assert_int_eq(qkv_seq2seq_config_unpack(&d, blob, sizeof blob), 0);
    ck_assert(same_config(&c, &d));
    ck_assert_int_eq(qkv_seq2seq_config_unpack(&d, blob, 7), -1);
    c.n_head = 5;
    qkv_tokenizer chars;
    qkv_tokenizer_build(&chars, ALPHABET, 26);
    ck_assert_ptr_null(qkv_seq2seq_new(&c, &chars, 1));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "n_embd 128 is not a multiple of n_head 5"));
    ck_assert_ptr_null(qkv_seq2seq_task_find("poems"));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "dates"));
}
END_TEST

START_TEST(test_zeroed_cross_attention_ignores_the_input)
{
    qkv_seq2seq *m = tiny_model(5);
    sharpen(m, 20);
    const char *in[2] = {"abc", "zyxwvu"};
    char a[13], b[13], *outs[2] = {a, b};
    ck_assert_int_eq(qkv_seq2seq_translate(m, 2, in, outs), 0);
    ck_assert_msg(strcmp(a, b) != 0, "two inputs gave the same answer '%s' even with cross-attention", a);
    qkv_seq2seq_zero_cross(m);
    ck_assert_int_eq(qkv_seq2seq_translate(m, 2, in, outs), 0);
    ck_assert_str_eq(a, b);
    qkv_seq2seq_free(m);
}
END_TEST

/* Occurrences of needle in the file at path. */
static int count_in_file(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    int count = 0;
    for (const char *p = text; (p = strstr(p, needle)); p++)
        count++;
    return count;
}

START_TEST(test_attention_picture_has_one_cell_per_weight)
{
    qkv_seq2seq *m = tiny_model(6);
    sharpen(m, 10);
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_ctx ctx = {.arena = a, .train = false, .rng = NULL};
    char out[13], path[] = "/tmp/qkv_attn_XXXXXX";
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    qkv_tensor *w = qkv_seq2seq_cross_weights(m, &ctx, "hello", 1, out);
    ck_assert_qkv(w);
    int H = 2, Tt = (int)strlen(out) + 1 <= 12 ? (int)strlen(out) + 1 : 12;
    ck_assert_int_eq(w->shape[1], H);
    ck_assert_int_eq(w->shape[2], Tt);
    ck_assert_int_eq(w->shape[3], 5);
    const char *cell = "<rect class=\"cell\"";
    attn_svg_spec spec = {.head = -1, .col_labels = "hello"};
    ck_assert_msg(attn_svg(path, w, &spec) == 0, "%s", qkv_last_error());
    ck_assert_int_eq(count_in_file(path, cell), H * Tt * 5);
    spec.average = true;
    ck_assert_int_eq(attn_svg(path, w, &spec), 0);
    ck_assert_int_eq(count_in_file(path, cell), Tt * 5);

    /* Causal: one head of a 4x4 self-attention draws the 10 cells on or below the diagonal. */
    qkv_tensor *causal = qkv_zeros(a, QKV_SHAPE(1, 2, 4, 4));
    spec = (attn_svg_spec){.head = 1, .causal = true, .row_labels = "abcd", .col_labels = "abcd"};
    ck_assert_int_eq(attn_svg(path, causal, &spec), 0);
    ck_assert_int_eq(count_in_file(path, cell), 10);
    spec.head = 2;
    ck_assert_int_eq(attn_svg(path, causal, &spec), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "head 2"));
    ck_assert_ptr_null(qkv_seq2seq_cross_weights(m, &ctx, "hello", 2, out));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "layer 2"));
    unlink(path);
    qkv_arena_free(&a);
    qkv_seq2seq_free(m);
}
END_TEST

/* The replay decodes as qkv_seq2seq_translate does, and records every
 * attention of the teacher-forced pass in order: the encoder's L, then each
 * decoder layer's self-attention (Tt queries over Tt keys) and
 * cross-attention (Tt queries over the Ts input positions). */
START_TEST(test_replay_records_every_attention_of_the_decoding)
{
    qkv_seq2seq *m = tiny_model(6);
    sharpen(m, 10);
    int L = m->cfg.n_layer;
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_attn_record rec = {.calls = qkv_arena_calloc(a, 3 * (size_t)L * sizeof *rec.calls),
                           .cap = 3 * L};
    qkv_ctx ctx = {.arena = a, .record = &rec};
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, 1);
    const char *in[1] = {"hello"};
    ck_assert_int_eq(qkv_seq2seq_batch_fill(m, b, 1, in, NULL), 0);
    char out[13], want[13], *outs[1] = {want};
    int Tt = qkv_seq2seq_replay(m, &ctx, b->src, b->src_valid, b->Ts, out);
    ck_assert_msg(Tt > 0, "%s", qkv_last_error());
    ck_assert_int_eq(qkv_seq2seq_translate(m, 1, in, outs), 0);
    ck_assert_str_eq(out, want);
    int ended = (int)strlen(out) + 1;
    ck_assert_int_eq(Tt, ended < m->cfg.max_tgt ? ended : m->cfg.max_tgt);
    ck_assert_int_eq(rec.n, 3 * L);
    for (int l = 0; l < L; l++) {
        const qkv_attn_call *self = &rec.calls[L + 2 * l], *cross = self + 1;
        ck_assert_int_eq(rec.calls[l].q->shape[1], b->Ts);
        ck_assert_int_eq(self->q->shape[1], Tt);
        ck_assert_int_eq(self->k->shape[1], Tt);
        ck_assert_int_eq(cross->q->shape[1], Tt);
        ck_assert_int_eq(cross->k->shape[1], b->Ts);
    }
    qkv_seq2seq_batch_free(b);
    qkv_arena_free(&a);
    qkv_seq2seq_free(m);
}
END_TEST

START_TEST(test_bad_inputs_are_errors)
{
    qkv_seq2seq *m = tiny_model(7);
    char a[13], *outs[1] = {a};
    const char *unknown[1] = {"abc!d"}, *empty[1] = {""}, *longer[1] = {"abcdefghijklm"};
    ck_assert_int_eq(qkv_seq2seq_translate(m, 1, unknown, outs), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "'!' at position 3"));
    ck_assert_int_eq(qkv_seq2seq_translate(m, 1, empty, outs), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "0 characters"));
    ck_assert_int_eq(qkv_seq2seq_translate(m, 1, longer, outs), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "13 characters"));
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(m, 1);
    const char *two[2] = {"ab", "cd"}, *target[1] = {"ABC"};
    ck_assert_int_eq(qkv_seq2seq_batch_fill(m, b, 2, two, NULL), -1);
    ck_assert_int_eq(qkv_seq2seq_batch_fill(m, b, 1, two, target), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "target 0"));
    qkv_seq2seq_batch_free(b);
    qkv_seq2seq_free(m);
}
END_TEST

static Suite *seq2seq_suite(void)
{
    Suite *s = suite_create("seq2seq");
    TCase *tc = tcase_create("seq2seq");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_padding_does_not_change_encoder_output);
    tcase_add_test(tc, test_loss_skips_padded_targets);
    tcase_add_loop_test(tc, test_tiny_model_learns_a_few_pairs, 0, 2);
    tcase_add_test(tc, test_training_is_deterministic_for_a_seed);
    tcase_add_test(tc, test_resume_is_bit_exact);
    tcase_add_loop_test(tc, test_cached_greedy_equals_uncached, 0, 2);
    tcase_add_test(tc, test_greedy_is_argmax_fed_back_until_eos);
    tcase_add_test(tc, test_sampling_through_the_generic_loop);
    tcase_add_test(tc, test_checkpoint_round_trip);
    tcase_add_test(tc, test_config_round_trip_and_errors);
    tcase_add_test(tc, test_zeroed_cross_attention_ignores_the_input);
    tcase_add_test(tc, test_attention_picture_has_one_cell_per_weight);
    tcase_add_test(tc, test_replay_records_every_attention_of_the_decoding);
    tcase_add_test(tc, test_bad_inputs_are_errors);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(seq2seq_suite)
