/* Training the encoder-decoder on pairs drawn from a task's generator (see
 * qkv/seq2seq.h). The generator is the data: every step sees fresh pairs
 * from the training split, and no input of the test split is ever trained on. */
#include <math.h>
#include <string.h>

#include "../tensor/check.h"
#include "seq2seq_internal.h"
#include "train_step.h"

qkv_seq2seq_trainer *qkv_seq2seq_trainer_new(const qkv_seq2seq_config *mc,
                                             const qkv_train_config *tc,
                                             const qkv_seq2seq_task *task)
{
    const char *fn = "qkv_seq2seq_trainer_new";
    if (qkv__null(fn, "mc", mc) || qkv__null(fn, "tc", tc) || qkv__null(fn, "task", task))
        return NULL;
    if (qkv__check_train_config("seq2seq train config", tc) < 0) {
        qkv__fail_in(fn);
        return NULL;
    }
    if (task->max_input >= QKV__TEXT_MAX || task->max_output >= QKV__TEXT_MAX) {
        qkv_set_error("seq2seq trainer: task %s has strings longer than %d characters", task->name,
                      QKV__TEXT_MAX - 1);
        return NULL;
    }
    qkv_seq2seq_trainer *t = qkv_calloc(sizeof *t);
    if (!t)
        return NULL;
    t->task = task;
    t->cfg = *tc;
    qkv_optim_config oc;
    qkv__train_plan(tc, &t->sched, &oc);
    qkv_tokenizer chars;
    const char *alphabet = task->alphabet();
    qkv_tokenizer_build(&chars, alphabet, strlen(alphabet));
    /* One seed, separate streams: evaluating never changes the training pairs. */
    qkv_rng_seed(&t->data_rng, tc->seed + 1);
    qkv_rng_seed(&t->dropout_rng, tc->seed + 3);
    if (!(t->model = qkv_seq2seq_new(mc, &chars, tc->seed)) ||
        !(t->opt = qkv_optim_new(t->model->params, &oc)) ||
        !(t->batch = qkv_seq2seq_batch_new(t->model, tc->batch_size)) ||
        !(t->arena = qkv_arena_new((size_t)16 << 20)) ||
        !(t->text = qkv_alloc(2 * (size_t)tc->batch_size * QKV__TEXT_MAX)) ||
        !(t->strings = qkv_alloc(2 * (size_t)tc->batch_size * sizeof *t->strings))) {
        qkv_seq2seq_trainer_free(t);
        return NULL;
    }
    for (int i = 0; i < 2 * tc->batch_size; i++)
        t->strings[i] = t->text + (size_t)i * QKV__TEXT_MAX;
    return t;
}

void qkv_seq2seq_trainer_free(qkv_seq2seq_trainer *t)
{
    if (!t)
        return;
    qkv_seq2seq_free(t->model);
    qkv_optim_free(t->opt);
    qkv_seq2seq_batch_free(t->batch);
    qkv_arena_free(t->arena);
    qkv_free(t->text);
    qkv_free(t->strings);
    qkv_free(t);
}

/* Draw batch_size training pairs into t->batch. */
static int next_batch(qkv_seq2seq_trainer *t)
{
    int B = t->cfg.batch_size;
    for (int i = 0; i < B; i++)
        if (t->task->sample(&t->data_rng, false, t->strings[i], QKV__TEXT_MAX, t->strings[B + i],
                            QKV__TEXT_MAX) < 0)
            return -1;
    const char *const *in = (const char *const *)t->strings;
    return qkv_seq2seq_batch_fill(t->model, t->batch, B, in, in + B);
}

int qkv_seq2seq_trainer_step(qkv_seq2seq_trainer *t, double *loss_out, double *norm_out)
{
    if (qkv__null("qkv_seq2seq_trainer_step", "t", t))
        return -1;
    qkv_params *p = t->model->params;
    if (next_batch(t) < 0)
        return -1;
    qkv_params_zero_grad(p);
    qkv_run run = {.arena = t->arena, .train = true, .rng = &t->dropout_rng};
    qkv_tensor *loss = qkv_seq2seq_loss(t->model, &run, t->batch);
    if (qkv__finish_step(t->opt, p, t->arena, loss, t->cfg.grad_clip,
                         qkv_lr_at(&t->sched, t->step), t->step, loss_out, norm_out) < 0)
        return -1;
    t->step++;
    return 0;
}

double qkv_seq2seq_trainer_eval(const qkv_seq2seq_trainer *t)
{
    if (qkv__null("qkv_seq2seq_trainer_eval", "t", t))
        return NAN;
    return qkv_seq2seq_accuracy(t->model, t->task, t->cfg.eval_iters * t->cfg.batch_size,
                                t->cfg.seed + 2, NULL, NULL);
}
