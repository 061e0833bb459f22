/* The encoder-decoder's side of a qkv_training run (see qkv/seq2seq.h): pairs
 * drawn from a task's generator. The generator is the data: every step sees
 * fresh pairs from the training split, and no input of the test split is
 * ever trained on. */
#include <math.h>
#include <string.h>

#include "tensor/check.h"
#include "internal.h"

/* What the run's callbacks work in: the model, the task, the batch. The run
 * owns it (qkv_training_model.release). */
typedef struct s2s_pairs {
    qkv_seq2seq *model;           /* the model being trained (the caller's) */
    const qkv_seq2seq_task *task; /* where the pairs come from */
    qkv_rng data_rng;             /* draws the training pairs */
    int batch_size;               /* pairs per step: the run's */
    qkv_seq2seq_batch *batch;     /* one batch of token ids */
    char *text;                   /* batch_size inputs, then their outputs, as strings */
    char **strings;               /* 2·batch_size pointers to those strings, in order */
    uint8_t config[QKV_SEQ2SEQ_CONFIG_BYTES]; /* the model's config blob */
    qkv_rng *streams[1];          /* data_rng, for the checkpoint */
} s2s_pairs;

/* Draw the next batch_size training pairs and put pairs [lo, hi) into p->batch. */
static int next_batch(s2s_pairs *p, int lo, int hi)
{
    int B = p->batch_size;
    for (int i = 0; i < B; i++)
        if (qkv__seq2seq_draw(p->task, &p->data_rng, false, p->strings[i], p->strings[B + i]) < 0)
            return -1;
    const char *const *in = (const char *const *)p->strings;
    return qkv_seq2seq_batch_fill(p->model, p->batch, hi - lo, in + lo, in + B + lo);
}

/* The loss for the run: the next batch of pairs (all of them, see qkv_loss_fn),
 * teacher-forced over pairs [lo, hi). */
static qkv_tensor *s2s_loss(void *pairs, const qkv_ctx *ctx, int lo, int hi)
{
    s2s_pairs *p = pairs;
    if (next_batch(p, lo, hi) < 0)
        return NULL;
    return qkv_seq2seq_loss(p->model, ctx, p->batch);
}

/* The evaluation for the run: held-out exact-match accuracy (0, the only
 * one), on the same pairs at every call (drawn from the run's seed + 2). */
static double s2s_eval(void *pairs, qkv_training *run, int which)
{
    s2s_pairs *p = pairs;
    if (which != 0) {
        qkv_set_error("seq2seq evaluation %d does not exist: 0 is the held-out exact match", which);
        return NAN;
    }
    const qkv_train_config *c = &run->cfg;
    return qkv__seq2seq_accuracy(p->model, p->task, c->batch_size, c->eval_iters, c->seed + 2,
                                 NULL, NULL, run);
}

/* The pair stream and batch for the run's settings. One seed, separate
 * streams: evaluating never changes the training pairs. 0 or -1. */
static int s2s_start(void *pairs, const qkv_training *run)
{
    s2s_pairs *p = pairs;
    int B = p->batch_size = run->cfg.batch_size;
    qkv_rng_seed(&p->data_rng, run->cfg.seed + 1);
    if (!(p->batch = qkv_seq2seq_batch_new(p->model, B)) ||
        !(p->text = qkv_alloc(2 * (size_t)B * QKV__TEXT_MAX)) ||
        !(p->strings = qkv_alloc(2 * (size_t)B * sizeof *p->strings)))
        return -1;
    for (int i = 0; i < 2 * B; i++)
        p->strings[i] = p->text + (size_t)i * QKV__TEXT_MAX;
    return 0;
}

/* Free the batch and the strings (the model and the task stay). */
static void s2s_release(void *pairs)
{
    s2s_pairs *p = pairs;
    qkv_seq2seq_batch_free(p->batch);
    qkv_free(p->text);
    qkv_free(p->strings);
    qkv_free(p);
}

int qkv_seq2seq_training_model(qkv_seq2seq *m, const qkv_seq2seq_task *task,
                               qkv_training_model *out)
{
    const char *fn = "qkv_seq2seq_training_model";
    qkv_tokenizer chars;
    if (qkv__null(fn, "m", m) || qkv__null(fn, "out", out))
        return -1;
    if (qkv_seq2seq_task_chars(task, &chars) < 0)
        return qkv__fail_in(fn);
    /* The pairs are encoded with the model's alphabet: it must be the task's
     * (a resumed model's comes from its checkpoint). */
    if (chars.size != m->chars.size || memcmp(chars.byte, m->chars.byte, (size_t)chars.size) != 0)
        return qkv_set_error("%s: the model's alphabet is not task %s's (train it, or resume "
                             "it, with the task it was made for)", fn, task->name);
    s2s_pairs *p = qkv_calloc(sizeof *p);
    if (!p)
        return qkv__fail_in(fn);
    *p = (s2s_pairs){.model = m, .task = task, .streams = {&p->data_rng}};
    qkv_seq2seq_config_pack(&m->cfg, p->config);
    *out = (qkv_training_model){.kind = "seq2seq", .model = p, .params = m->params,
                                .config = p->config, .config_len = sizeof p->config,
                                .vocab = &m->chars, .rngs = p->streams, .n_rngs = 1,
                                .loss = s2s_loss, .eval = s2s_eval, .start = s2s_start,
                                .release = s2s_release};
    return 0;
}
