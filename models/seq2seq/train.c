/* Training the encoder-decoder on pairs drawn from a task's generator (see
 * qkv/seq2seq.h): its side of a qkv_training run. The generator is the data:
 * every step sees fresh pairs from the training split, and no input of the
 * test split is ever trained on. */
#include <math.h>
#include <string.h>

#include "tensor/check.h"
#include "train/resume.h"
#include "internal.h"

/* Draw the next batch_size training pairs and put pairs [lo, hi) into t->batch. */
static int next_batch(qkv_seq2seq_trainer *t, int lo, int hi)
{
    int B = t->run->cfg.batch_size;
    for (int i = 0; i < B; i++)
        if (t->task->sample(&t->data_rng, false, t->strings[i], QKV__TEXT_MAX, t->strings[B + i],
                            QKV__TEXT_MAX) < 0)
            return -1;
    const char *const *in = (const char *const *)t->strings;
    return qkv_seq2seq_batch_fill(t->model, t->batch, hi - lo, in + lo, in + B + lo);
}

/* The loss for the run: the next batch of pairs (all of them, see qkv_loss_fn),
 * teacher-forced over pairs [lo, hi). */
static qkv_tensor *seq2seq_loss(void *trainer, const qkv_ctx *ctx, int lo, int hi)
{
    qkv_seq2seq_trainer *t = trainer;
    if (next_batch(t, lo, hi) < 0)
        return NULL;
    return qkv_seq2seq_loss(t->model, ctx, t->batch);
}

/* The evaluation for the run: held-out exact-match accuracy (one kind only). */
static double seq2seq_eval(void *trainer, qkv_arena *arena, int which)
{
    (void)arena, (void)which;
    return qkv_seq2seq_trainer_eval(trainer);
}

/* The run of t's model of config mc with settings tc. */
static qkv_training *new_run(qkv_seq2seq_trainer *t, const qkv_seq2seq_config *mc,
                             const qkv_train_config *tc)
{
    uint8_t blob[QKV_SEQ2SEQ_CONFIG_BYTES];
    qkv_seq2seq_config_pack(mc, blob);
    qkv_rng *streams[] = {&t->data_rng};
    qkv_training_model plug = {.kind = "seq2seq", .model = t, .params = t->model->params,
                               .config = blob, .config_len = sizeof blob,
                               .vocab = &t->model->chars, .rngs = streams, .n_rngs = 1,
                               .loss = seq2seq_loss, .eval = seq2seq_eval};
    return qkv_training_new(&plug, tc);
}

/* t's pair stream and batch, sized by its run's settings (where a batch_size
 * left 0 is filled in). One seed, separate streams: evaluating never changes
 * the training pairs. 0 or -1. */
static int init_batch(qkv_seq2seq_trainer *t)
{
    int B = t->run->cfg.batch_size;
    qkv_rng_seed(&t->data_rng, t->run->cfg.seed + 1);
    if (!(t->batch = qkv_seq2seq_batch_new(t->model, B)) ||
        !(t->text = qkv_alloc(2 * (size_t)B * QKV__TEXT_MAX)) ||
        !(t->strings = qkv_alloc(2 * (size_t)B * sizeof *t->strings)))
        return -1;
    for (int i = 0; i < 2 * B; i++)
        t->strings[i] = t->text + (size_t)i * QKV__TEXT_MAX;
    return 0;
}

qkv_seq2seq_trainer *qkv_seq2seq_trainer_new(const qkv_seq2seq_config *mc,
                                             const qkv_train_config *tc,
                                             const qkv_seq2seq_task *task)
{
    const char *fn = "qkv_seq2seq_trainer_new";
    if (qkv__null(fn, "mc", mc) || qkv__null(fn, "tc", tc) ||
        qkv__seq2seq_check_task(fn, task) < 0)
        return NULL;
    if (qkv_train_config_check(tc) < 0) {
        qkv__fail_in(fn);
        return NULL;
    }
    qkv_seq2seq_trainer *t = qkv_calloc(sizeof *t);
    if (!t)
        return NULL;
    t->task = task;
    qkv_tokenizer chars;
    const char *alphabet = task->alphabet();
    qkv_tokenizer_build(&chars, alphabet, strlen(alphabet));
    if (!(t->model = qkv_seq2seq_new(mc, &chars, tc->seed)) || !(t->run = new_run(t, mc, tc)) ||
        init_batch(t) < 0) {
        qkv_seq2seq_trainer_free(t);
        return NULL;
    }
    return t;
}

void qkv_seq2seq_trainer_free(qkv_seq2seq_trainer *t)
{
    if (!t)
        return;
    qkv_training_free(t->run);
    qkv_seq2seq_free(t->model);
    qkv_seq2seq_batch_free(t->batch);
    qkv_free(t->text);
    qkv_free(t->strings);
    qkv_free(t);
}

int qkv_seq2seq_trainer_step(qkv_seq2seq_trainer *t, double *loss, double *grad_norm)
{
    if (qkv__null("qkv_seq2seq_trainer_step", "t", t))
        return -1;
    return qkv_training_step(t->run, loss, grad_norm) < 0 ? qkv__fail_in("qkv_seq2seq_trainer_step")
                                                          : 0;
}

double qkv_seq2seq_trainer_eval(qkv_seq2seq_trainer *t)
{
    if (qkv__null("qkv_seq2seq_trainer_eval", "t", t))
        return NAN;
    const qkv_train_config *c = &t->run->cfg;
    return qkv__seq2seq_accuracy(t->model, t->task, c->batch_size, c->eval_iters, c->seed + 2,
                                 NULL, NULL, t->run);
}

int qkv_seq2seq_trainer_save(const qkv_seq2seq_trainer *t, const char *path)
{
    const char *fn = "qkv_seq2seq_trainer_save";
    if (qkv__null(fn, "t", t) || qkv__null(fn, "path", path))
        return -1;
    return qkv_training_save(t->run, path) < 0 ? qkv__fail_in(fn) : 0;
}

qkv_seq2seq_trainer *qkv_seq2seq_trainer_resume(const char *path, const qkv_seq2seq_task *task,
                                                int iters)
{
    const char *fn = "qkv_seq2seq_trainer_resume";
    if (qkv__null(fn, "path", path) || qkv__seq2seq_check_task(fn, task) < 0)
        return NULL;
    qkv_train_config tc;
    qkv_checkpoint *ck =
        qkv__training_resume_open(fn, path, "seq2seq", QKV_SEQ2SEQ_CONFIG_BYTES, iters, &tc);
    if (!ck)
        return NULL;
    qkv_seq2seq_trainer *t = NULL;
    qkv_seq2seq_config mc;
    if (qkv_seq2seq_config_unpack(&mc, ck->config, ck->config_len) < 0 ||
        qkv__seq2seq_check_holds(ck, &mc, path) < 0)
        goto done;
    if (!(t = qkv_seq2seq_trainer_new(&mc, &tc, task)))
        goto done;
    const qkv_tokenizer *a = &ck->vocab, *b = &t->model->chars;
    if (a->size != b->size || memcmp(a->byte, b->byte, (size_t)a->size) != 0) {
        qkv_set_error("%s: its alphabet is not task %s's (resume with the task it was trained on)",
                      path, task->name);
        goto fail;
    }
    if (qkv_training_load(t->run, ck) == 0)
        goto done;
fail:
    qkv_seq2seq_trainer_free(t);
    t = NULL;
done:
    qkv_checkpoint_close(ck);
    if (!t)
        qkv__fail_in(fn);
    return t;
}
