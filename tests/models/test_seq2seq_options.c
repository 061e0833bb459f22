/* The encoder-decoder with the model options (qkv/options.h): each option
 * reaches the parts it names, and the options survive a run's and a model's
 * checkpoint (older checkpoints, written without them, load with every option
 * off). Training and cached decoding with every option: tests/models/test_seq2seq.c. */
#include <stdlib.h>
#include <unistd.h>

#include "error_text.h"
#include "testing.h"

static const char *ALPHABET = "abcdefghijklmnopqrstuvwxyz";

static qkv_seq2seq *model_with(qkv_model_options opts, uint64_t seed)
{
    qkv_tokenizer chars;
    qkv_tokenizer_build(&chars, ALPHABET, strlen(ALPHABET));
    qkv_seq2seq_config cfg = {.max_src = 12, .max_tgt = 12, .n_layer = 2, .n_head = 2,
                              .n_embd = 32, .opts = opts};
    qkv_seq2seq *m = qkv_seq2seq_new(&cfg, &chars, seed);
    ck_assert_qkv(m);
    return m;
}

static bool has(const qkv_seq2seq *m, const char *name)
{
    return qkv_params_find(m->params, name) != NULL;
}

START_TEST(test_each_option_reaches_its_parts)
{
    qkv_seq2seq *none = model_with((qkv_model_options){0}, 1);
    ck_assert(has(none, "enc.wpe.weight") && has(none, "dec.wpe.weight"));
    ck_assert(has(none, "enc.ln_f.bias") && has(none, "dec.h.1.cross.c_q.bias"));
    ck_assert(!has(none, "dec.lm_head.weight") && !has(none, "enc.h.0.attn.q_norm.weight"));
    qkv_model_options o = {.no_bias = true};
    qkv_seq2seq *m = model_with(o, 1);
    ck_assert(!has(m, "enc.h.0.attn.c_attn.bias") && !has(m, "dec.h.1.cross.c_q.bias") &&
              !has(m, "dec.h.0.mlp.c_fc.bias") && !has(m, "enc.ln_f.bias") &&
              !has(m, "dec.ln_f.bias"));
    qkv_seq2seq_free(m);
    m = model_with((qkv_model_options){.rope = true}, 1);
    ck_assert(!has(m, "enc.wpe.weight") && !has(m, "dec.wpe.weight"));
    ck_assert(m->enc[0].attn.opts.rope && m->dec[1].attn.opts.rope);
    qkv_seq2seq_free(m);
    m = model_with((qkv_model_options){.rmsnorm = true}, 1);
    ck_assert(m->enc_ln_f.rms && m->dec_ln_f.rms && m->dec[0].ln_3.rms && m->enc[1].ln_2.rms);
    qkv_seq2seq_free(m);
    m = model_with((qkv_model_options){.qk_norm = true}, 1);
    ck_assert(has(m, "enc.h.0.attn.q_norm.weight") && has(m, "dec.h.1.attn.k_norm.weight"));
    qkv_seq2seq_free(m);
    m = model_with((qkv_model_options){.untied = true}, 1);
    ck_assert(has(m, "dec.lm_head.weight"));
    qkv_seq2seq_free(m);
    /* Each activation past GELU changes no parameter, and reaches every MLP:
     * the same weights give another loss. */
    const char *in[1] = {"hello"}, *out[1] = {"olleh"};
    qkv_ctx ctx = {.arena = qkv_arena_new(1 << 20)};
    qkv_seq2seq_batch *b = qkv_seq2seq_batch_new(none, 1);
    ck_assert_int_eq(qkv_seq2seq_batch_fill(none, b, 1, in, out), 0);
    qkv_tensor *l0 = qkv_seq2seq_loss(none, &ctx, b);
    ck_assert_qkv(l0);
    for (int act = 1; act < QKV_N_ACTIVATIONS; act++) {
        m = model_with((qkv_model_options){.activation = (uint8_t)act}, 1);
        ck_assert(m->enc[0].mlp.opts.activation == act && m->dec[1].mlp.opts.activation == act);
        ck_assert_uint_eq(m->params->total, none->params->total);
        memcpy(m->params->data, none->params->data, none->params->total * sizeof(qkv_real));
        qkv_tensor *l1 = qkv_seq2seq_loss(m, &ctx, b);
        ck_assert_qkv(l1);
        ck_assert_msg(l0->data[0] != l1->data[0], "activation %d changed nothing (loss %g)", act,
                      (double)l0->data[0]);
        qkv_seq2seq_free(m);
    }
    qkv_arena_free(&ctx.arena);
    qkv_seq2seq_batch_free(b);
    qkv_seq2seq_free(none);
}
END_TEST

START_TEST(test_a_run_with_every_option_saves_and_resumes_with_them)
{
    const qkv_seq2seq_task *task = qkv_seq2seq_task_find("dates");
    ck_assert_qkv(task);
    qkv_seq2seq_config mc = qkv_seq2seq_config_for(task, 1, 2, 16, 0);
    mc.opts = qkv_test_every_option();
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = 3;
    tc.batch_size = 4;
    tc.eval_iters = 1;
    test_run *t = s2s_run_new(&mc, &tc, task);
    ck_assert_qkv(t);
    for (int i = 0; i < tc.iters; i++)
        ck_assert_msg(qkv_training_step(t->run, NULL, NULL) == 0, "%s", qkv_last_error());
    /* The run's checkpoint and the model's both carry the options. */
    char run[] = "/tmp/qkv_s2s_opts_XXXXXX", model[] = "/tmp/qkv_s2s_optm_XXXXXX";
    char *paths[2] = {run, model};
    for (int k = 0; k < 2; k++) {
        int fd = mkstemp(paths[k]);
        ck_assert_int_ge(fd, 0);
        close(fd);
    }
    ck_assert_msg(qkv_training_save(t->run, run) == 0, "%s", qkv_last_error());
    ck_assert_msg(qkv_seq2seq_save(t->s2s, model, 3) == 0, "%s", qkv_last_error());
    test_run *r = s2s_run_resume(run, task, 0);
    qkv_seq2seq *n = qkv_seq2seq_load(model);
    ck_assert_qkv(r);
    ck_assert_qkv(n);
    const char *in[1] = {"March 3rd, 1998"};
    char want[16], got[16], *outs[1] = {want};
    ck_assert_int_eq(qkv_seq2seq_translate(t->s2s, 1, in, outs), 0);
    const qkv_seq2seq *loaded[2] = {r->s2s, n};
    for (int k = 0; k < 2; k++) {
        const qkv_seq2seq *l = loaded[k];
        ck_assert(memcmp(&l->cfg.opts, &mc.opts, sizeof mc.opts) == 0);
        ck_assert_uint_eq(l->params->total, t->s2s->params->total);
        ck_assert(memcmp(l->params->data, t->s2s->params->data,
                         l->params->total * sizeof(qkv_real)) == 0);
        outs[0] = got;
        ck_assert_int_eq(qkv_seq2seq_translate(l, 1, in, outs), 0);
        ck_assert_str_eq(got, want);
    }
    qkv_seq2seq_free(n);
    test_run_free(r);
    test_run_free(t);
    unlink(run);
    unlink(model);
}
END_TEST

START_TEST(test_flag_word_of_older_and_newer_checkpoints)
{
    qkv_seq2seq_config c = {.max_src = 12, .max_tgt = 12, .n_layer = 2, .n_head = 2, .n_embd = 32,
                            .opts = {.rope = true, .untied = true}},
                       d;
    uint8_t blob[QKV_SEQ2SEQ_CONFIG_BYTES];
    qkv_seq2seq_config_pack(&c, blob);
    ck_assert_int_eq(qkv_seq2seq_config_unpack(&d, blob, sizeof blob), 0);
    ck_assert(memcmp(&c.opts, &d.opts, sizeof c.opts) == 0);
    /* The bits are the table's rows: rope is row 1, untied row 5. */
    ck_assert_int_eq(blob[28], (1 << 1) | (1 << 5));
    /* A checkpoint written before the options has a zero word: every option off. */
    memset(blob + 28, 0, 4);
    ck_assert_int_eq(qkv_seq2seq_config_unpack(&d, blob, sizeof blob), 0);
    ck_assert(memcmp(&d.opts, &(qkv_model_options){0}, sizeof d.opts) == 0);
    /* A bit no option owns comes from a newer qkv: refused, named. */
    blob[31] = 0x80;
    ck_assert_int_eq(qkv_seq2seq_config_unpack(&d, blob, sizeof blob), -1);
    ck_assert_error("flag word is 0x80000000");
    /* RoPE needs an even head size, as in the GPT. */
    c.n_head = 32;
    ck_assert_int_eq(qkv_seq2seq_config_check(&c), -1);
    ck_assert_error("rope needs an even head size");
}
END_TEST

static Suite *seq2seq_options_suite(void)
{
    Suite *s = suite_create("seq2seq_options");
    TCase *tc = tcase_create("options");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_each_option_reaches_its_parts);
    tcase_add_test(tc, test_a_run_with_every_option_saves_and_resumes_with_them);
    tcase_add_test(tc, test_flag_word_of_older_and_newer_checkpoints);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(seq2seq_options_suite)
