/* Misuse cases for qkv/training.h: a training run for any model. */
#include "misuse.h"

MISUSE(qkv_train_defaults, takes_no_arguments) { MISUSE_ASSERT(qkv_train_defaults().iters > 0); }

MISUSE(qkv_train_config_check, null) { FAILS_INT(qkv_train_config_check(NULL), "tc is NULL"); }
MISUSE(qkv_train_config_check, nan_lr)
{
    qkv_train_config tc = qkv_train_defaults();
    tc.lr = NAN;
    FAILS_INT(qkv_train_config_check(&tc), "lr nan");
}
MISUSE(qkv_train_config_check, negative_batch)
{
    qkv_train_config tc = qkv_train_defaults();
    tc.batch_size = -1;
    FAILS_INT(qkv_train_config_check(&tc), "batch_size -1");
}
MISUSE(qkv_training_new, null_model)
{
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_training_new(NULL, &tc), "model is NULL");
}
MISUSE(qkv_training_new, null_config)
{
    qkv_training_model plug = borrowed();
    FAILS_NULL(qkv_training_new(&plug, NULL), "tc is NULL");
}
MISUSE(qkv_training_new, no_loss)
{
    qkv_training_model plug = {.kind = "x", .params = params()};
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_training_new(&plug, &tc), "loss");
}
MISUSE(qkv_training_new, too_many_streams)
{
    qkv_training_model plug = borrowed();
    plug.n_rngs = 99;
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_training_new(&plug, &tc), "99");
}
MISUSE(qkv_training_new, config_len_without_config)
{
    qkv_training_model plug = borrowed();
    plug.n_rngs = 0; /* the run keeps the streams in its own list */
    plug.config = NULL;
    plug.config_len = 8;
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_training_new(&plug, &tc), "model->config is NULL", "config_len is 8");
}
MISUSE(qkv_training_resume, null_model)
{
    FAILS_NULL(qkv_training_resume(NULL, ckpt_path(), 0), "model is NULL");
}
/* The GPT of gpt_run() with a qkv_training_model of its own, which the
 * failing call must release (the sanitizer's leak check would see it otherwise). */
static qkv_training_model own_model(void)
{
    qkv_training_model tm;
    MISUSE_ASSERT(qkv_gpt_training_model(gpt_run()->model, corpus(), &tm) == 0);
    return tm;
}
MISUSE(qkv_training_resume, null_path)
{
    qkv_training_model tm = own_model();
    FAILS_NULL(qkv_training_resume(&tm, NULL, 0), "path is NULL");
}
MISUSE(qkv_training_resume, negative_iters)
{
    qkv_training_model tm = own_model();
    FAILS_NULL(qkv_training_resume(&tm, ckpt_path(), -5), "iters -5");
}
MISUSE(qkv_training_resume, below_the_saved_step)
{
    const char *path = tmp_path("one.ckpt");
    MISUSE_ASSERT(qkv_training_step(gpt_run()->run, NULL, NULL) == 0 &&
                  qkv_training_step(gpt_run()->run, NULL, NULL) == 0 &&
                  qkv_training_save(gpt_run()->run, path) == 0);
    qkv_training_model tm = own_model();
    FAILS_NULL(qkv_training_resume(&tm, path, 1), "at step 2", "iters 1");
}
MISUSE(qkv_training_resume, another_kind)
{
    qkv_training_model tm = own_model();
    FAILS_NULL(qkv_training_resume(&tm, s2s_ckpt_path(), 0), "seq2seq");
}
MISUSE(qkv_training_resume, another_model)
{
    qkv_training_model tm = own_model();
    uint8_t other[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config mc = gpt_run()->model->cfg;
    mc.dropout = 0.5; /* the same parameters, another model */
    qkv_gpt_config_pack(&mc, other);
    tm.config = other;
    FAILS_NULL(qkv_training_resume(&tm, ckpt_path(), 0), "config differs");
}
MISUSE(qkv_training_resume, another_vocabulary)
{
    qkv_training_model tm = own_model();
    qkv_tokenizer v = corpus()->tok;
    v.byte[v.size - 1]++; /* still ascending: a vocabulary, but not the saved one */
    tm.vocab = &v;
    FAILS_NULL(qkv_training_resume(&tm, ckpt_path(), 0), "another vocabulary");
}
MISUSE(qkv_training_free, null) { HARMLESS((qkv_training_free(NULL), 0)); }
MISUSE(qkv_training_step, null) { FAILS_INT(qkv_training_step(NULL, NULL, NULL), "t is NULL"); }
/* A loss that fails and says nothing: the step says so, naming itself. */
static qkv_tensor *silent_loss(void *model, const qkv_ctx *ctx, int lo, int hi)
{
    (void)model, (void)ctx, (void)lo, (void)hi;
    return NULL;
}
MISUSE(qkv_training_step, loss_fails_without_a_message)
{
    gpt_run()->run->model.loss = silent_loss;
    FAILS_INT(qkv_training_step(gpt_run()->run, NULL, NULL), "loss returned NULL");
}
MISUSE(qkv_training_lr, null) { FAILS_NAN(qkv_training_lr(NULL, 0), "t is NULL"); }
MISUSE(qkv_training_lr, negative_step) { FAILS_NAN(qkv_training_lr(gpt_run()->run, -3), "-3"); }
MISUSE(qkv_training_eval, null) { FAILS_NAN(qkv_training_eval(NULL, 0), "t is NULL"); }
MISUSE(qkv_training_eval, which_9) { FAILS_NAN(qkv_training_eval(gpt_run()->run, 9), "9"); }
MISUSE(qkv_training_eval, which_negative)
{
    FAILS_NAN(qkv_training_eval(gpt_run()->run, -1), "-1");
}
MISUSE(qkv_training_set_optim, null)
{
    FAILS_INT(qkv_training_set_optim(NULL, QKV_OPTIM_MUON), "t is NULL");
}
MISUSE(qkv_training_set_optim, unknown_kind)
{
    FAILS_INT(qkv_training_set_optim(gpt_run()->run, (qkv_optim_kind)9), "unknown kind 9");
}
MISUSE(qkv_training_set_optim, after_a_step)
{
    qkv_training *t = gpt_run()->run;
    MISUSE_ASSERT(qkv_training_step(t, NULL, NULL) == 0);
    FAILS_INT(qkv_training_set_optim(t, QKV_OPTIM_MUON), "at step 1");
    MISUSE_ASSERT(t->opt->cfg.kind == QKV_OPTIM_ADAMW); /* unchanged */
}
MISUSE(qkv_training_set_note, null) { FAILS_INT(qkv_training_set_note(NULL, "x", 1), "t is NULL"); }
MISUSE(qkv_training_set_note, bad_values)
{
    qkv_training *t = gpt_run()->run;
    MISUSE_ASSERT(qkv_training_set_note(t, "ab", 2) == 0);
    FAILS_INT(qkv_training_set_note(t, NULL, 3), "note is NULL");
    char big[QKV_TRAINING_NOTE_MAX + 1] = {0};
    FAILS_INT(qkv_training_set_note(t, big, QKV_TRAINING_NOTE_MAX + 1), "len 33");
    FAILS_INT(qkv_training_set_note(t, big, -1), "len -1");
    const uint8_t *note;
    MISUSE_ASSERT(qkv_training_note(t, &note) == 2 && memcmp(note, "ab", 2) == 0); /* unchanged */
}
MISUSE(qkv_training_note, null)
{
    const uint8_t *note;
    FAILS_INT(qkv_training_note(NULL, &note), "t is NULL");
    FAILS_INT(qkv_training_note(gpt_run()->run, NULL), "note is NULL");
}
MISUSE(qkv_training_set_iters, null) { FAILS_INT(qkv_training_set_iters(NULL, 5), "t is NULL"); }
MISUSE(qkv_training_set_iters, zero)
{
    FAILS_INT(qkv_training_set_iters(gpt_run()->run, 0), "iters 0");
}
MISUSE(qkv_training_set_iters, huge)
{
    FAILS_INT(qkv_training_set_iters(gpt_run()->run, INT64_MAX), "iters");
}
MISUSE(qkv_training_save, null_ctx)
{
    FAILS_INT(qkv_training_save(NULL, tmp_path("r.ckpt")), "t is NULL");
}
MISUSE(qkv_training_save, null_path)
{
    FAILS_INT(qkv_training_save(gpt_run()->run, NULL), "path is NULL");
}
MISUSE(qkv_training_save, vocab_size_negative)
{
    qkv_tokenizer v = *tok();
    v.size = -1;
    gpt_run()->run->model.vocab = &v;
    FAILS_INT(qkv_training_save(gpt_run()->run, tmp_path("r.ckpt")), "vocab", "-1 bytes");
}
/* A checkpoint not made by qkv_checkpoint_open: its config is nowhere. */
MISUSE(qkv_training_config_load, zeroed_checkpoint)
{
    qkv_checkpoint ck = {.config_len = 96};
    qkv_train_config tc;
    FAILS_INT(qkv_training_config_load(&tc, &ck, QKV_GPT_CONFIG_BYTES), "ck");
}
MISUSE(qkv_training_config_load, null_config)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt_path(), NULL);
    MISUSE_ASSERT(ck != NULL);
    FAILS_INT(qkv_training_config_load(NULL, ck, QKV_GPT_CONFIG_BYTES), "tc is NULL");
    qkv_checkpoint_close(ck);
}
MISUSE(qkv_training_config_load, null_checkpoint)
{
    qkv_train_config tc;
    FAILS_INT(qkv_training_config_load(&tc, NULL, QKV_GPT_CONFIG_BYTES), "ck is NULL");
}
MISUSE(qkv_training_config_load, huge_model_bytes)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt_path(), NULL);
    MISUSE_ASSERT(ck != NULL);
    qkv_train_config tc;
    FAILS_INT(qkv_training_config_load(&tc, ck, SIZE_MAX), "config of");
    qkv_checkpoint_close(ck);
}
MISUSE(qkv_training_load, null_ctx)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(ckpt_path(), NULL);
    MISUSE_ASSERT(ck != NULL);
    FAILS_INT(qkv_training_load(NULL, ck), "t is NULL");
    qkv_checkpoint_close(ck);
}
MISUSE(qkv_training_load, null_checkpoint)
{
    FAILS_INT(qkv_training_load(gpt_run()->run, NULL), "ck is NULL");
}
MISUSE(qkv_training_eval_more, null) { FAILS_AS(false, qkv_training_eval_more(NULL, 0), "t is NULL"); }
MISUSE(qkv_training_eval_more, negative_done)
{
    FAILS_AS(false, qkv_training_eval_more(gpt_run()->run, -2), "done -2");
}
/* A run of the GPT's model side with two of its streams named a and b must be refused, saying want. */
static void refuses_stream_names(const char *a, const char *b, const char *want)
{
    qkv_training_model plug = gpt_run()->run->model;
    plug.release = NULL; /* the run keeps its model's side: a refused call must not free it */
    qkv_rng *streams[] = {gpt_run()->run->rngs[1], gpt_run()->run->rngs[2]};
    const char *const names[] = {a, b};
    plug.rngs = streams, plug.n_rngs = 2, plug.rng_names = names;
    qkv_train_config tc = gpt_run()->run->cfg;
    FAILS_NULL(qkv_training_new(&plug, &tc), want);
}
MISUSE(qkv_training_new, stream_named_dropout)
{
    refuses_stream_names("train", "dropout", "rng_names[1] is 'dropout'");
}
MISUSE(qkv_training_new, two_streams_of_one_name)
{
    refuses_stream_names("train", "train", "rng_names[0] and [1] are both 'train'");
}
MISUSE(qkv_training_new, grad_accum_negative)
{
    qkv_training_model plug = gpt_run()->run->model;
    plug.release = NULL; /* the run keeps its model's side: a refused call must not free it */
    qkv_train_config tc = gpt_run()->run->cfg;
    plug.rngs = gpt_run()->run->rngs + 1; /* the run keeps its model's streams there */
    tc.grad_accum = -4;
    FAILS_NULL(qkv_training_new(&plug, &tc), "grad_accum -4 is not in [1, 4096]");
}

/* Rebuilds: one that fails, one whose config is not the checkpoint's. */
static int rebuild_fails(void *ud, const qkv_checkpoint *ck, qkv_training_model *plug)
{
    (void)ud, (void)ck, (void)plug;
    return qkv_set_error("my rebuild: no such model");
}
static int rebuild_other_config(void *ud, const qkv_checkpoint *ck, qkv_training_model *plug)
{
    static const uint8_t other[4] = {9, 9, 9, 9};
    (void)ck;
    *plug = *(qkv_training_model *)ud;
    plug->config = other, plug->config_len = sizeof other;
    return 0;
}
MISUSE(qkv_training_resume_rebuild, null_path)
{
    FAILS_NULL(qkv_training_resume_rebuild(NULL, "gpt", rebuild_fails, NULL), "path is NULL");
}
MISUSE(qkv_training_resume_rebuild, null_kind)
{
    FAILS_NULL(qkv_training_resume_rebuild(ckpt_path(), NULL, rebuild_fails, NULL), "kind is NULL");
}
MISUSE(qkv_training_resume_rebuild, null_rebuild)
{
    FAILS_NULL(qkv_training_resume_rebuild(ckpt_path(), "gpt", NULL, NULL), "rebuild is NULL");
}
MISUSE(qkv_training_resume_rebuild, missing_file)
{
    FAILS_NULL(qkv_training_resume_rebuild(tmp_path("none.ckpt"), "gpt", rebuild_fails, NULL),
               "none.ckpt");
}
MISUSE(qkv_training_resume_rebuild, rebuild_fails)
{
    FAILS_NULL(qkv_training_resume_rebuild(ckpt_path(), "gpt", rebuild_fails, NULL),
               "qkv_training_resume_rebuild", "my rebuild: no such model");
}
MISUSE(qkv_training_resume_rebuild, config_not_the_saved_one)
{
    qkv_training_model plug = gpt_run()->run->model;
    plug.release = NULL; /* the run keeps its model's side: a refused call must not free it */
    FAILS_NULL(qkv_training_resume_rebuild(ckpt_path(), "gpt", rebuild_other_config, &plug),
               "is not the one the checkpoint starts with");
}

/* A rebuild that fails and says nothing: the message says so. */
static int rebuild_silent(void *ud, const qkv_checkpoint *ck, qkv_training_model *plug)
{
    (void)ud, (void)ck, (void)plug;
    return -1;
}
MISUSE(qkv_training_resume_rebuild, rebuild_fails_without_a_message)
{
    FAILS_NULL(qkv_training_resume_rebuild(ckpt_path(), "gpt", rebuild_silent, NULL),
               "the rebuild callback returned -1 and left no message");
}
/* The natural rebuild: the model's blob and kind taken from the checkpoint
 * itself. The run must not read them after the checkpoint is closed. */
static int rebuild_from_ck(void *ud, const qkv_checkpoint *ck, qkv_training_model *plug)
{
    (void)ud;
    *plug = own_model();
    plug->config = ck->config;
    plug->kind = ck->kind;
    return 0;
}
MISUSE(qkv_training_resume_rebuild, plug_points_into_the_checkpoint)
{
    qkv_training *t = qkv_training_resume_rebuild(ckpt_path(), "gpt", rebuild_from_ck, NULL);
    MISUSE_ASSERT(t != NULL);
    MISUSE_ASSERT(strcmp(t->model.kind, "gpt") == 0);
    MISUSE_ASSERT(qkv_training_step(t, NULL, NULL) == 0);
    MISUSE_ASSERT(qkv_training_save(t, tmp_path("again.ckpt")) == 0);
    qkv_training_free(t);
}
MISUSE(qkv_training_new, null_kind_or_params)
{
    qkv_training_model plug = {.kind = "x", .loss = silent_loss};
    qkv_train_config tc = qkv_train_defaults();
    FAILS_NULL(qkv_training_new(&plug, &tc), "model->params is NULL");
    plug.kind = NULL, plug.params = params();
    FAILS_NULL(qkv_training_new(&plug, &tc), "model->kind is NULL");
}
/* A checkpoint whose optimizer made another number of updates than its run's steps. */
static void refuses_optim_step(int64_t optim_step, const char *want)
{
    qkv_training *run = gpt_run()->run;
    const char *path = tmp_path("steps.ckpt");
    MISUSE_ASSERT(qkv_training_step(run, NULL, NULL) == 0 &&
                  qkv_training_step(run, NULL, NULL) == 0);
    run->opt->step = optim_step;
    MISUSE_ASSERT(qkv_training_save(run, path) == 0);
    qkv_training_model tm = own_model();
    FAILS_NULL(qkv_training_resume(&tm, path, 0), want, "its run at step 2");
}
MISUSE(qkv_training_resume, optimizer_step_0)
{
    refuses_optim_step(0, "optimizer is at step 0");
}
MISUSE(qkv_training_resume, optimizer_step_huge)
{
    refuses_optim_step((int64_t)1 << 62, "optimizer is at step 4611686018427387904");
}
