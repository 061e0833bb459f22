/* Training the character GPT (see qkv/trainer.h). */
#include "qkv/trainer.h"

#include <math.h>
#include <string.h>

#include "tensor/check.h"
#include "train/resume.h"
#include "internal.h"

/* The GPT's loss for the run: draw the next training batch (all of it, see
 * qkv_loss_fn) and the mean loss of its rows [lo, hi). */
static qkv_tensor *gpt_loss(void *trainer, const qkv_ctx *ctx, int lo, int hi)
{
    qkv_trainer *t = trainer;
    int T = t->model->cfg.block_size;
    qkv_batcher_next(&t->train, t->x, t->y);
    return qkv_gpt_loss(t->model, ctx, t->x + (size_t)lo * T, t->y + (size_t)lo * T, hi - lo, T);
}

/* The mean loss of m over iters batches from s, on rows [lo, hi) of each;
 * with a training run, over the batches qkv_training_eval_more allows
 * instead (iters is then the run's eval_iters). */
static double mean_loss_rows(const qkv_gpt *m, qkv_batcher *s, int iters, qkv_arena *arena,
                             int32_t *x, int32_t *y, int lo, int hi, qkv_training *training)
{
    if (iters < 1) {
        qkv_set_error("qkv_gpt_mean_loss: iters %d must be >= 1", iters);
        return NAN;
    }
    bool was = qkv_set_grad_enabled(false);
    qkv_ctx ctx = {.arena = arena, .train = false, .rng = NULL};
    size_t T = (size_t)s->block_size;
    double sum = 0;
    int i = 0;
    for (; training ? qkv_training_eval_more(training, i) : i < iters && !isnan(sum); i++) {
        /* A failed batch ends the work but not the asking: eval_stop may be a
         * vote of data-parallel ranks, which must all ask it as often. */
        if (isnan(sum))
            continue;
        qkv_batcher_next(s, x, y);
        qkv_tensor *loss = qkv_gpt_loss(m, &ctx, x + lo * T, y + lo * T, hi - lo, s->block_size);
        sum += loss ? loss->data[0] : NAN;
        if (!loss)
            qkv__fail_in("qkv_gpt_mean_loss");
        else if (isnan(loss->data[0]))
            qkv_set_error("qkv_gpt_mean_loss: batch %d has a NaN loss (the weights are not finite)",
                          i);
        qkv_arena_reset(arena);
    }
    qkv_set_grad_enabled(was);
    return sum / i;
}

/* The GPT's evaluation for the run: the mean loss of split `which`, on the
 * rows of each batch the run computes (all of them, but for data parallelism). */
static double gpt_eval(void *trainer, qkv_arena *arena, int which)
{
    qkv_trainer *t = trainer;
    if (which != QKV_SPLIT_TRAIN && which != QKV_SPLIT_VAL) {
        qkv_set_error("gpt evaluation %d does not exist: 0 is the train split, 1 the val split",
                      which);
        return NAN;
    }
    return mean_loss_rows(t->model, &t->eval[which], t->run->cfg.eval_iters, arena, t->x, t->y,
                          t->run->batch_lo, t->run->batch_hi, t->run);
}

/* The run of t's model of config mc with settings tc. */
static qkv_training *new_run(qkv_trainer *t, const qkv_gpt_config *mc, const qkv_train_config *tc)
{
    uint8_t blob[QKV_GPT_CONFIG_BYTES];
    qkv_gpt_config_pack(mc, blob);
    qkv_rng *streams[] = {&t->train.rng, &t->eval[QKV_SPLIT_TRAIN].rng, &t->eval[QKV_SPLIT_VAL].rng};
    qkv_training_model plug = {.kind = "gpt", .model = t, .params = t->model->params,
                               .config = blob, .config_len = sizeof blob, .vocab = &t->corpus->tok,
                               .rngs = streams, .n_rngs = 3, .loss = gpt_loss, .eval = gpt_eval,
                               .arena_bytes = (size_t)64 << 20};
    return qkv_training_new(&plug, tc);
}

/* t's batches of block_size T, sized by its run's settings (where a
 * batch_size left 0 is filled in). One seed, separate streams: changing how
 * often we evaluate never changes the training batches. 0 or -1. */
static int init_batches(qkv_trainer *t, int T)
{
    const qkv_corpus *d = t->corpus;
    int B = t->run->cfg.batch_size;
    uint64_t seed = t->run->cfg.seed;
    if (qkv_batcher_init(&t->train, d, QKV_SPLIT_TRAIN, B, T, seed + 1) < 0 ||
        qkv_batcher_init(&t->eval[QKV_SPLIT_TRAIN], d, QKV_SPLIT_TRAIN, B, T, seed + 2) < 0 ||
        qkv_batcher_init(&t->eval[QKV_SPLIT_VAL], d, QKV_SPLIT_VAL, B, T, seed + 3) < 0 ||
        !(t->x = qkv_alloc((size_t)B * T * sizeof *t->x)) ||
        !(t->y = qkv_alloc((size_t)B * T * sizeof *t->y)))
        return -1;
    return 0;
}

qkv_trainer *qkv_trainer_new(const qkv_gpt_config *mc, const qkv_train_config *tc,
                             const qkv_corpus *corpus)
{
    const char *fn = "qkv_trainer_new";
    if (qkv__null(fn, "mc", mc) || qkv__null(fn, "tc", tc) || qkv__null(fn, "corpus", corpus))
        return NULL;
    if (qkv_train_config_check(tc) < 0) {
        qkv__fail_in(fn);
        return NULL;
    }
    if (corpus->tok.size != mc->vocab_size) {
        qkv_set_error("trainer: the corpus has %d distinct characters but the model's vocabulary "
                      "is %d", corpus->tok.size, mc->vocab_size);
        return NULL;
    }
    qkv_trainer *t = qkv_calloc(sizeof *t);
    if (!t)
        return NULL;
    t->corpus = corpus;
    if (!(t->model = qkv_gpt_new(mc, tc->seed)) || !(t->run = new_run(t, mc, tc)) ||
        init_batches(t, mc->block_size) < 0) {
        qkv_trainer_free(t);
        return NULL;
    }
    return t;
}

void qkv_trainer_free(qkv_trainer *t)
{
    if (!t)
        return;
    qkv_training_free(t->run);
    qkv_gpt_free(t->model);
    qkv_free(t->x);
    qkv_free(t->y);
    qkv_corpus_free(t->own_corpus);
    qkv_free(t);
}

int qkv_trainer_step(qkv_trainer *t, double *loss, double *grad_norm)
{
    if (qkv__null("qkv_trainer_step", "t", t))
        return -1;
    return qkv_training_step(t->run, loss, grad_norm) < 0 ? qkv__fail_in("qkv_trainer_step") : 0;
}

double qkv_gpt_mean_loss(const qkv_gpt *m, qkv_batcher *s, int iters, qkv_arena *arena,
                         int32_t *x, int32_t *y)
{
    const char *fn = "qkv_gpt_mean_loss";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "s", s) || qkv__null(fn, "arena", arena) ||
        qkv__null(fn, "x", x) || qkv__null(fn, "y", y))
        return NAN;
    return mean_loss_rows(m, s, iters, arena, x, y, 0, s->batch_size, NULL);
}

double qkv_trainer_eval(qkv_trainer *t, qkv_split split)
{
    if (qkv__null("qkv_trainer_eval", "t", t))
        return NAN;
    if (split != QKV_SPLIT_TRAIN && split != QKV_SPLIT_VAL) {
        qkv_set_error("qkv_trainer_eval: split %d is neither QKV_SPLIT_TRAIN nor QKV_SPLIT_VAL",
                      (int)split);
        return NAN;
    }
    double loss = qkv_training_eval(t->run, split);
    if (isnan(loss))
        qkv__fail_in("qkv_trainer_eval");
    return loss;
}

int qkv_trainer_save(const qkv_trainer *t, const char *path)
{
    if (qkv__null("qkv_trainer_save", "t", t) || qkv__null("qkv_trainer_save", "path", path))
        return -1;
    return qkv_training_save(t->run, path) < 0 ? qkv__fail_in("qkv_trainer_save") : 0;
}

/* 0 when the checkpoint at path holds a model of config mc: its vocabulary
 * and its number of values. Checked before the model is built, so a file
 * whose config describes a huge model but which holds a small one is an
 * error rather than a huge allocation. */
static int check_holds(const qkv_checkpoint *ck, const qkv_gpt_config *mc, const char *path)
{
    if (ck->vocab.size != mc->vocab_size)
        return qkv_set_error("%s: the vocabulary holds %d characters but the model expects %d",
                             path, ck->vocab.size, mc->vocab_size);
    uint64_t want = qkv__gpt_n_values(mc);
    if (want != ck->n_values)
        return qkv_set_error("%s: its config describes a model of %llu parameter values but it "
                             "holds %zu",
                             path, (unsigned long long)want, ck->n_values);
    return 0;
}

qkv_trainer *qkv_trainer_resume(const char *path, const char *corpus_path, int iters)
{
    const char *fn = "qkv_trainer_resume";
    if (qkv__null(fn, "path", path) || qkv__null(fn, "corpus_path", corpus_path))
        return NULL;
    qkv_train_config tc;
    qkv_checkpoint *ck =
        qkv__training_resume_open(fn, path, "gpt", QKV_GPT_CONFIG_BYTES, iters, &tc);
    if (!ck)
        return NULL;
    qkv_trainer *t = NULL;
    qkv_corpus *corpus = NULL;
    qkv_gpt_config mc;
    if (qkv_gpt_config_unpack(&mc, ck->config, ck->config_len) < 0 ||
        check_holds(ck, &mc, path) < 0)
        goto fail;
    if (!(corpus = qkv_corpus_load(corpus_path, &ck->vocab)))
        goto fail;
    if (!(t = qkv_trainer_new(&mc, &tc, corpus)))
        goto fail;
    t->own_corpus = corpus;
    corpus = NULL;
    if (qkv_training_load(t->run, ck) < 0)
        goto fail;
    qkv_checkpoint_close(ck);
    return t;
fail:
    qkv__fail_in(fn);
    qkv_trainer_free(t);
    qkv_corpus_free(corpus);
    qkv_checkpoint_close(ck);
    return NULL;
}

qkv_gpt *qkv_gpt_load(const char *path, qkv_tokenizer *vocab)
{
    const char *fn = "qkv_gpt_load";
    if (qkv__null(fn, "path", path) || qkv__null(fn, "vocab", vocab))
        return NULL;
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    if (!ck) {
        qkv__fail_in(fn);
        return NULL;
    }
    qkv_gpt_config mc;
    qkv_gpt *m = NULL;
    if (qkv_gpt_config_unpack(&mc, ck->config, ck->config_len) < 0 ||
        check_holds(ck, &mc, path) < 0)
        goto done;
    if (!(m = qkv_gpt_new(&mc, 0)))
        goto done;
    if (qkv_checkpoint_load(ck, m->params, NULL, NULL) < 0) {
        qkv_gpt_free(m);
        m = NULL;
        goto done;
    }
    *vocab = ck->vocab;
done:
    qkv_checkpoint_close(ck);
    if (!m)
        qkv__fail_in(fn);
    return m;
}
