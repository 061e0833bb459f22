/* A training run for any model (see qkv/training.h): its settings, the
 * optimizer, the schedule, the step, evaluation and exact resume. */
#include "qkv/training.h"

#include <math.h>
#include <string.h>

#include "../tensor/check.h"
#include "bytes.h"
#include "internal.h"
#include "resume.h"

/* tc with each zero field that has a default (see qkv/training.h) filled in:
 * the one place those defaults are written. */
static qkv_train_config filled(const qkv_train_config *tc)
{
    qkv_train_config c = *tc;
    if (c.iters == 0)
        c.iters = 2000;
    if (c.batch_size == 0)
        c.batch_size = 12;
    if (c.lr == 0)
        c.lr = 1e-3;
    if (c.eval_iters == 0)
        c.eval_iters = 200;
    return c;
}

qkv_train_config qkv_train_defaults(void)
{
    qkv_train_config tc = filled(&(qkv_train_config){0});
    tc.min_lr = 1e-4;
    tc.warmup = 100;
    tc.weight_decay = 0.1;
    tc.grad_clip = 1.0;
    tc.seed = 1337;
    return tc;
}

int qkv_train_config_check(const qkv_train_config *tc)
{
    if (qkv__null("qkv_train_config_check", "tc", tc))
        return -1;
    const char *who = "qkv_train_config_check: train config";
    if (tc->iters < 0)
        return qkv_set_error("%s: iters %d must be >= 1 (or 0 for 2000)", who, tc->iters);
    if (tc->batch_size < 0)
        return qkv_set_error("%s: batch_size %d must be >= 1 (or 0 for 12)", who, tc->batch_size);
    if (!(tc->lr >= 0) || !(tc->min_lr >= 0) || !isfinite(tc->lr) || !isfinite(tc->min_lr))
        return qkv_set_error("%s: lr %g and min_lr %g must be >= 0 and finite", who, tc->lr,
                             tc->min_lr);
    if (tc->warmup < 0)
        return qkv_set_error("%s: warmup %d must be >= 0", who, tc->warmup);
    if (!(tc->weight_decay >= 0) || !(tc->grad_clip >= 0))
        return qkv_set_error("%s: weight_decay %g and grad_clip %g must be >= 0", who,
                             tc->weight_decay, tc->grad_clip);
    if (tc->eval_iters < 0)
        return qkv_set_error("%s: eval_iters %d must be >= 1 (or 0 for 200)", who, tc->eval_iters);
    if (!(tc->wsd_decay >= 0 && tc->wsd_decay <= 1))
        return qkv_set_error("%s: wsd_decay %g is not in [0, 1]", who, tc->wsd_decay);
    return 0;
}

/* The run's settings as QKV_TRAIN_CONFIG_BYTES little-endian bytes. */
static void pack_config(uint8_t *p, const qkv_train_config *tc)
{
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

int qkv_training_config_load(qkv_train_config *tc, const qkv_checkpoint *ck, size_t model_bytes)
{
    const char *fn = "qkv_training_config_load";
    if (qkv__null(fn, "tc", tc) || qkv__null(fn, "ck", ck))
        return -1;
    size_t want = model_bytes + QKV_TRAIN_CONFIG_BYTES;
    bool v1 = ck->config_len == model_bytes + QKV_TRAIN_CONFIG_BYTES_V1;
    if (model_bytes > SIZE_MAX - QKV_TRAIN_CONFIG_BYTES || (ck->config_len != want && !v1))
        return qkv_set_error("%s: %s checkpoint: config of %zu bytes, expected %zu (a model "
                             "saved without its run cannot resume)",
                             fn, ck->kind, ck->config_len, want);
    const uint8_t *p = (const uint8_t *)ck->config + model_bytes;
    tc->iters = qkv__get_size(p);
    tc->batch_size = qkv__get_size(p + 4);
    tc->warmup = qkv__get_size(p + 8);
    tc->eval_iters = qkv__get_size(p + 12);
    tc->lr = qkv__get_f64(p + 16);
    tc->min_lr = qkv__get_f64(p + 24);
    tc->weight_decay = qkv__get_f64(p + 32);
    tc->grad_clip = qkv__get_f64(p + 40);
    tc->seed = qkv__get_u64(p + 48);
    tc->wsd_decay = v1 ? 0 : qkv__get_f64(p + 56);
    return qkv_train_config_check(tc) < 0 ? qkv__fail_in(fn) : 0;
}

qkv_checkpoint *qkv__training_resume_open(const char *fn, const char *path, const char *kind,
                                          size_t model_bytes, int iters, qkv_train_config *tc)
{
    if (iters < 0) {
        qkv_set_error("%s: iters %d is negative (0 keeps the saved run length)", fn, iters);
        return NULL;
    }
    qkv_checkpoint *ck = qkv_checkpoint_open(path, kind);
    if (ck && qkv_training_config_load(tc, ck, model_bytes) < 0) {
        qkv_checkpoint_close(ck);
        ck = NULL;
    }
    if (!ck) {
        qkv__fail_in(fn);
        return NULL;
    }
    if (iters > 0)
        tc->iters = iters;
    return ck;
}

/* 0 when a model can be trained: a kind, params, a loss, 0..8 streams. */
static int check_model(const qkv_training_model *model)
{
    if (!model->kind || !model->params || !model->loss)
        return qkv_set_error("training: the model needs a kind, params and a loss");
    if (model->n_rngs < 0 || model->n_rngs > QKV_TRAINING_MAX_RNGS ||
        (model->n_rngs > 0 && !model->rngs))
        return qkv_set_error("training: %d model streams (0 to %d, with pointers)",
                             model->n_rngs, QKV_TRAINING_MAX_RNGS);
    return 0;
}

qkv_training *qkv_training_new(const qkv_training_model *model, const qkv_train_config *tc)
{
    const char *fn = "qkv_training_new";
    if (qkv__null(fn, "model", model) || qkv__null(fn, "tc", tc))
        return NULL;
    if (check_model(model) < 0 || qkv_train_config_check(tc) < 0) {
        qkv__fail_in(fn);
        return NULL;
    }
    qkv_training *t = qkv_calloc(sizeof *t);
    if (!t)
        return NULL;
    t->model = *model;
    /* The defaults are filled in here, so the run, its callbacks and the
     * checkpoint all see (and a resume gets back) the values actually used. */
    t->cfg = filled(tc);
    const qkv_train_config *c = &t->cfg;
    t->batch_hi = c->batch_size;
    t->sched = (qkv_lr_schedule){.lr = c->lr, .min_lr = c->min_lr, .warmup_iters = c->warmup,
                                 .decay_iters = c->iters, .wsd_decay = c->wsd_decay};
    qkv_optim_config oc = qkv_adamw_defaults();
    oc.weight_decay = c->weight_decay;
    /* One seed, separate streams: the model's use seed + 1..3, dropout its own. */
    qkv_rng_seed(&t->dropout_rng, c->seed + 4);
    t->rngs[0] = &t->dropout_rng;
    for (int i = 0; i < model->n_rngs; i++)
        t->rngs[1 + i] = model->rngs[i];
    t->model.rngs = NULL; /* the run's list is t->rngs */
    void *blob = qkv_alloc(model->config_len + QKV_TRAIN_CONFIG_BYTES);
    t->model.config = blob;
    if (!blob || !(t->opt = qkv_optim_new(model->params, &oc)) ||
        !(t->arena = qkv_arena_new(model->arena_bytes ? model->arena_bytes : (size_t)16 << 20))) {
        qkv_training_free(t);
        return NULL;
    }
    if (model->config_len)
        memcpy(blob, model->config, model->config_len);
    return t;
}

void qkv_training_free(qkv_training *t)
{
    if (!t)
        return;
    qkv_free((void *)t->model.config);
    qkv_optim_free(t->opt);
    qkv_arena_free(t->arena);
    qkv_free(t);
}

double qkv_training_lr(const qkv_training *t, int64_t step)
{
    if (qkv__null("qkv_training_lr", "t", t))
        return NAN;
    double lr = qkv_lr_at(&t->sched, step);
    if (isnan(lr))
        qkv__fail_in("qkv_training_lr");
    return lr;
}

/* x for a message: "inf", "-inf" or "NaN (not a number)", never printf's "-nan". */
static const char *non_finite(double x)
{
    return isnan(x) ? "NaN (not a number)" : x > 0 ? "inf" : "-inf";
}

int qkv_training_step(qkv_training *t, double *loss_out, double *norm_out)
{
    if (qkv__null("qkv_training_step", "t", t))
        return -1;
    qkv_params *p = t->model.params;
    qkv_params_zero_grad(p);
    qkv_run run = {.arena = t->arena, .train = true, .rng = &t->dropout_rng};
    qkv_tensor *loss = t->model.loss(t->model.model, &run, t->batch_lo, t->batch_hi);
    int rc = loss ? qkv_backward(t->arena, loss) : -1;
    double value = loss ? loss->data[0] : NAN;
    qkv_arena_reset(t->arena); /* the graph is used up; the gradients live in p */
    if (rc == 0 && t->grad_hook)
        rc = t->grad_hook(t->grad_hook_ud, p, &value);
    if (rc < 0)
        return -1;
    /* A non-finite loss or gradient would poison every weight it touched:
     * stop here, while the weights are still the last good ones. */
    if (!isfinite(value))
        return qkv_set_error("step %lld: the loss is %s; stopping before it reaches the weights",
                             (long long)t->step, non_finite(value));
    double norm = qkv__grad_norm(p);
    if (!isfinite(norm))
        return qkv_set_error("step %lld: the gradient norm is %s; stopping before it reaches the "
                             "weights", (long long)t->step, non_finite(norm));
    /* Clipping scales the gradients as the update reads them: one pass over them, not two. */
    qkv_real clip = qkv__clip_coef(norm, t->cfg.grad_clip > 0 ? t->cfg.grad_clip : INFINITY);
    if (qkv__optim_step_scaled(t->opt, p, qkv_lr_at(&t->sched, t->step), clip) < 0)
        return -1;
    t->step++;
    if (loss_out)
        *loss_out = value;
    if (norm_out)
        *norm_out = norm;
    return 0;
}

double qkv_training_eval(qkv_training *t, int which)
{
    if (qkv__null("qkv_training_eval", "t", t))
        return NAN;
    if (!t->model.eval) {
        qkv_set_error("qkv_training_eval: the '%s' model has no evaluation", t->model.kind);
        return NAN;
    }
    double value = t->model.eval(t->model.model, t->arena, which);
    if (isnan(value))
        qkv__fail_in("qkv_training_eval");
    return value;
}

bool qkv_training_eval_more(qkv_training *t, int done)
{
    if (qkv__null("qkv_training_eval_more", "t", t))
        return false;
    if (done < 0) {
        qkv_set_error("qkv_training_eval_more: done %d is negative", done);
        return false;
    }
    t->eval_done = done;
    /* At least one batch, so that an evaluation always has a result. */
    return done == 0 || (done < t->cfg.eval_iters && !(t->eval_stop && t->eval_stop(t->eval_stop_ud)));
}

int qkv_training_set_iters(qkv_training *t, int64_t iters)
{
    if (qkv__null("qkv_training_set_iters", "t", t))
        return -1;
    if (iters < 1 || iters > INT32_MAX)
        return qkv_set_error("qkv_training_set_iters: iters %lld must be in [1, %d]",
                             (long long)iters, INT32_MAX);
    t->cfg.iters = (int)iters;
    t->sched.decay_iters = iters;
    return 0;
}

/* 0 when every parameter value is finite, else -1 naming the first that is
 * not: a diverged run must not replace the last good checkpoint. */
static int check_finite(const qkv_params *p, const char *path)
{
    for (int i = 0; i < p->count; i++) {
        const qkv_tensor *w = p->items[i].t;
        for (size_t j = 0; j < w->size; j++)
            if (!isfinite(w->data[j]))
                return qkv_set_error("save '%s': parameter '%s' holds %g (the run "
                                     "diverged); the checkpoint there is left as it was",
                                     path, p->items[i].name, (double)w->data[j]);
    }
    return 0;
}

int qkv_training_save(const qkv_training *t, const char *path)
{
    if (qkv__null("qkv_training_save", "t", t) || qkv__null("qkv_training_save", "path", path))
        return -1;
    if (check_finite(t->model.params, path) < 0)
        return -1;
    /* The run's settings go after the model's blob at every save: cfg.iters may have moved. */
    uint8_t *blob = (uint8_t *)t->model.config;
    pack_config(blob + t->model.config_len, &t->cfg);
    qkv_ckpt_model model = {.kind = t->model.kind, .config = blob,
                            .config_len = t->model.config_len + QKV_TRAIN_CONFIG_BYTES,
                            .vocab = t->model.vocab};
    qkv_ckpt_progress prog = {.step = t->step, .n_rngs = 1 + t->model.n_rngs, .rngs = t->rngs};
    return qkv_checkpoint_save(path, &model, t->model.params, t->opt, &prog);
}

int qkv_training_load(qkv_training *t, const qkv_checkpoint *ck)
{
    if (qkv__null("qkv_training_load", "t", t) || qkv__null("qkv_training_load", "ck", ck))
        return -1;
    qkv_ckpt_progress prog = {.n_rngs = 1 + t->model.n_rngs, .rngs = t->rngs};
    if (qkv_checkpoint_load(ck, t->model.params, t->opt, &prog) < 0)
        return -1;
    t->step = prog.step;
    return 0;
}
