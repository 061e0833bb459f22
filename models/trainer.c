/* Training the character GPT (see qkv/trainer.h). */
#include "qkv/trainer.h"

#include <math.h>
#include <string.h>

#include "../train/bytes.h"
#include "gpt_internal.h"
#include "train_step.h"

/* The config blob of a "gpt" checkpoint: the model's config, then the run's.
 * The first checkpoints end before wsd_decay (the last 8 bytes): they read
 * as the cosine schedule they were trained with. */
enum { TRAIN_BYTES = 64, BLOB_BYTES = QKV_GPT_CONFIG_BYTES + TRAIN_BYTES, BLOB_V1_BYTES = BLOB_BYTES - 8 };

qkv_train_config qkv_train_defaults(void)
{
    return (qkv_train_config){.iters = 2000, .batch_size = 12, .lr = 1e-3, .min_lr = 1e-4,
                              .warmup = 100, .weight_decay = 0.1, .grad_clip = 1.0,
                              .eval_iters = 200, .seed = 1337};
}

static void pack_blob(uint8_t *b, const qkv_gpt_config *mc, const qkv_train_config *tc)
{
    qkv_gpt_config_pack(mc, b);
    uint8_t *p = b + QKV_GPT_CONFIG_BYTES;
    qkv__put_u32(p, (uint32_t)tc->iters);
    qkv__put_u32(p + 4, (uint32_t)tc->batch_size);
    qkv__put_u32(p + 8, (uint32_t)tc->warmup);
    qkv__put_u32(p + 12, (uint32_t)tc->eval_iters);
    qkv__put_f64(p + 16, tc->lr);
    qkv__put_f64(p + 24, tc->min_lr);
    qkv__put_f64(p + 32, tc->weight_decay);
    qkv__put_f64(p + 40, tc->grad_clip);
    qkv__put_u64(p + 48, tc->seed);
    qkv__put_f64(p + 56, tc->wsd_decay);
}

static int unpack_blob(qkv_gpt_config *mc, qkv_train_config *tc, const void *blob, size_t len)
{
    if (len != BLOB_BYTES && len != BLOB_V1_BYTES)
        return qkv_set_error("gpt checkpoint: config of %zu bytes, expected %d (or %d)", len,
                             BLOB_BYTES, BLOB_V1_BYTES);
    if (qkv_gpt_config_unpack(mc, blob, len) < 0)
        return -1;
    const uint8_t *p = (const uint8_t *)blob + QKV_GPT_CONFIG_BYTES;
    tc->iters = qkv__get_size(p);
    tc->batch_size = qkv__get_size(p + 4);
    tc->warmup = qkv__get_size(p + 8);
    tc->eval_iters = qkv__get_size(p + 12);
    tc->lr = qkv__get_f64(p + 16);
    tc->min_lr = qkv__get_f64(p + 24);
    tc->weight_decay = qkv__get_f64(p + 32);
    tc->grad_clip = qkv__get_f64(p + 40);
    tc->seed = qkv__get_u64(p + 48);
    tc->wsd_decay = len == BLOB_BYTES ? qkv__get_f64(p + 56) : 0;
    return qkv__check_train_config("train config", tc);
}

qkv_trainer *qkv_trainer_new(const qkv_gpt_config *mc, const qkv_train_config *tc,
                             const qkv_corpus *corpus)
{
    if (qkv__check_train_config("train config", tc) < 0)
        return NULL;
    if (corpus->tok.size != mc->vocab_size) {
        qkv_set_error("trainer: the corpus has %d distinct characters but the model's vocabulary "
                      "is %d", corpus->tok.size, mc->vocab_size);
        return NULL;
    }
    qkv_trainer *t = qkv_calloc(sizeof *t);
    if (!t)
        return NULL;
    t->cfg = *tc;
    t->corpus = corpus;
    qkv_optim_config oc;
    qkv__train_plan(tc, &t->sched, &oc);
    int B = tc->batch_size, T = mc->block_size;
    /* One seed, separate streams: changing how often we evaluate never changes the training batches. */
    qkv_rng_seed(&t->dropout_rng, tc->seed + 4);
    if (!(t->model = qkv_gpt_new(mc, tc->seed)) ||
        !(t->opt = qkv_optim_new(t->model->params, &oc)) ||
        qkv_sampler_init(&t->train, corpus, QKV_SPLIT_TRAIN, B, T, tc->seed + 1) < 0 ||
        qkv_sampler_init(&t->eval[QKV_SPLIT_TRAIN], corpus, QKV_SPLIT_TRAIN, B, T, tc->seed + 2) < 0 ||
        qkv_sampler_init(&t->eval[QKV_SPLIT_VAL], corpus, QKV_SPLIT_VAL, B, T, tc->seed + 3) < 0 ||
        !(t->arena = qkv_arena_new((size_t)64 << 20)) ||
        !(t->x = qkv_alloc((size_t)B * T * sizeof *t->x)) ||
        !(t->y = qkv_alloc((size_t)B * T * sizeof *t->y))) {
        qkv_trainer_free(t);
        return NULL;
    }
    return t;
}

void qkv_trainer_free(qkv_trainer *t)
{
    if (!t)
        return;
    qkv_gpt_free(t->model);
    qkv_optim_free(t->opt);
    qkv_arena_free(t->arena);
    qkv_free(t->x);
    qkv_free(t->y);
    qkv_corpus_free(t->own_corpus);
    qkv_free(t);
}

int qkv_trainer_step(qkv_trainer *t, double *loss_out, double *norm_out)
{
    qkv_params *p = t->model->params;
    int B = t->cfg.batch_size, T = t->model->cfg.block_size;
    qkv_sampler_next(&t->train, t->x, t->y);
    qkv_params_zero_grad(p);
    qkv_run run = {.arena = t->arena, .train = true, .rng = &t->dropout_rng};
    qkv_tensor *loss = qkv_gpt_loss(t->model, &run, t->x, t->y, B, T);
    if (qkv__finish_step(t->opt, p, t->arena, loss, t->cfg.grad_clip,
                         qkv_lr_at(&t->sched, t->step), t->step, loss_out, norm_out) < 0)
        return -1;
    t->step++;
    return 0;
}

double qkv_gpt_mean_loss(const qkv_gpt *m, qkv_sampler *s, int iters, qkv_arena *arena,
                         int32_t *x, int32_t *y)
{
    if (iters < 1) {
        qkv_set_error("mean loss: iters %d must be >= 1", iters);
        return NAN;
    }
    bool was = qkv_set_grad_enabled(false);
    qkv_run run = {.arena = arena, .train = false, .rng = NULL};
    double sum = 0;
    for (int i = 0; i < iters && !isnan(sum); i++) {
        qkv_sampler_next(s, x, y);
        qkv_tensor *loss = qkv_gpt_loss(m, &run, x, y, s->batch_size, s->block_size);
        sum += loss ? loss->data[0] : NAN;
        if (loss && isnan(loss->data[0]))
            qkv_set_error("mean loss: batch %d has a NaN loss (the weights are not finite)", i);
        qkv_arena_reset(arena);
    }
    qkv_set_grad_enabled(was);
    return sum / iters;
}

double qkv_trainer_eval(qkv_trainer *t, qkv_split split)
{
    return qkv_gpt_mean_loss(t->model, &t->eval[split], t->cfg.eval_iters, t->arena, t->x, t->y);
}

/* The trainer's random streams, in the order the checkpoint stores them. */
static void streams(qkv_trainer *t, qkv_rng *out[4])
{
    out[0] = &t->dropout_rng;
    out[1] = &t->train.rng;
    out[2] = &t->eval[QKV_SPLIT_TRAIN].rng;
    out[3] = &t->eval[QKV_SPLIT_VAL].rng;
}

/* 0 when every parameter value is finite, else -1 naming the first that is
 * not: a diverged run must not replace the last good checkpoint. */
static int check_finite(const qkv_params *p, const char *path)
{
    for (int i = 0; i < p->count; i++) {
        const qkv_tensor *w = p->items[i].t;
        for (size_t j = 0; j < w->size; j++)
            if (!isfinite(w->data[j]))
                return qkv_set_error("trainer save '%s': parameter '%s' holds %g (the run "
                                     "diverged); the checkpoint there is left as it was",
                                     path, p->items[i].name, (double)w->data[j]);
    }
    return 0;
}

int qkv_trainer_save(const qkv_trainer *t, const char *path)
{
    if (check_finite(t->model->params, path) < 0)
        return -1;
    uint8_t blob[BLOB_BYTES];
    pack_blob(blob, &t->model->cfg, &t->cfg);
    qkv_rng *rngs[4];
    streams((qkv_trainer *)t, rngs);
    qkv_ckpt_model model = {.kind = "gpt", .config = blob, .config_len = sizeof blob,
                            .vocab = &t->corpus->tok};
    qkv_ckpt_progress prog = {.step = t->step, .n_rngs = 4, .rngs = rngs};
    return qkv_checkpoint_save(path, &model, t->model->params, t->opt, &prog);
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
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    if (!ck)
        return NULL;
    qkv_trainer *t = NULL;
    qkv_corpus *corpus = NULL;
    qkv_gpt_config mc;
    qkv_train_config tc;
    if (unpack_blob(&mc, &tc, ck->config, ck->config_len) < 0 || check_holds(ck, &mc, path) < 0)
        goto fail;
    if (!(corpus = qkv_corpus_load(corpus_path, &ck->vocab)))
        goto fail;
    if (iters > 0)
        tc.iters = iters;
    if (!(t = qkv_trainer_new(&mc, &tc, corpus)))
        goto fail;
    t->own_corpus = corpus;
    corpus = NULL;
    qkv_rng *rngs[4];
    streams(t, rngs);
    qkv_ckpt_progress prog = {.n_rngs = 4, .rngs = rngs};
    if (qkv_checkpoint_load(ck, t->model->params, t->opt, &prog) < 0)
        goto fail;
    t->step = prog.step;
    qkv_checkpoint_close(ck);
    return t;
fail:
    qkv_trainer_free(t);
    qkv_corpus_free(corpus);
    qkv_checkpoint_close(ck);
    return NULL;
}

qkv_gpt *qkv_gpt_load(const char *path, qkv_tokenizer *vocab)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    if (!ck)
        return NULL;
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
    return m;
}
