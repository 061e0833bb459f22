/* A training run for any model (see qkv/training.h): its settings, the
 * optimizer, the schedule, the step, evaluation and exact resume. */
#include "qkv/training.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "tensor/check.h"
#include "train/bytes.h"
#include "data/internal.h"
#include "train/internal.h"

/* The range of each field of the run's settings, and what a 0 means where
 * it means a default: the one place both are written (qkv/training.h
 * documents them). A new run, a save and a load all check against this. */
typedef struct field_range {
    const char *name; /* as the field is called */
    size_t offset;    /* of the field in qkv_train_config */
    bool whole;       /* an int field, else a double */
    double lo, hi;    /* the range, inclusive */
    double when_zero; /* what 0 stands for, or 0 when 0 is itself a setting */
} field_range;

#define FIELD(name, whole, lo, hi, when_zero)                                                      \
    {#name, offsetof(qkv_train_config, name), whole, lo, hi, when_zero}
static const field_range ranges[] = {
    FIELD(iters, true, 1, QKV_TRAIN_ITERS_MAX, 2000),
    FIELD(batch_size, true, 1, QKV_TRAIN_BATCH_MAX, 12),
    FIELD(lr, false, QKV_TRAIN_LR_MIN, QKV_TRAIN_LR_MAX, 1e-3),
    FIELD(min_lr, false, 0, QKV_TRAIN_LR_MAX, 0), /* and at most lr */
    FIELD(warmup, true, 0, QKV_TRAIN_ITERS_MAX, 0),
    FIELD(wsd_decay, false, 0, 1, 0),
    FIELD(weight_decay, false, 0, QKV_TRAIN_WEIGHT_DECAY_MAX, 0),
    FIELD(grad_clip, false, 0, QKV_TRAIN_GRAD_CLIP_MAX, 0),
    FIELD(eval_iters, true, 1, QKV_TRAIN_EVAL_ITERS_MAX, 200),
    FIELD(grad_accum, true, 1, QKV_TRAIN_GRAD_ACCUM_MAX, 1),
};
#undef FIELD
enum { N_RANGES = sizeof ranges / sizeof ranges[0] };

/* The value of field f of tc, as a double (exact for the int fields). */
static double field_get(const qkv_train_config *tc, const field_range *f)
{
    const char *at = (const char *)tc + f->offset;
    return f->whole ? *(const int *)at : *(const double *)at;
}

/* tc with each zero field that has a default filled in. */
static qkv_train_config filled(const qkv_train_config *tc)
{
    qkv_train_config c = *tc;
    for (int i = 0; i < N_RANGES; i++) {
        const field_range *f = &ranges[i];
        char *at = (char *)&c + f->offset;
        if (f->when_zero != 0 && field_get(&c, f) == 0) {
            if (f->whole)
                *(int *)at = (int)f->when_zero;
            else
                *(double *)at = f->when_zero;
        }
    }
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

/* 0 when every field of tc is in its range (and min_lr <= lr); else -1 with
 * "who: NAME VALUE is not in [LO, HI]". saved: tc is a run's settings as
 * used and saved, where a 0 cannot stand for a default any more. */
static int check_config(const char *who, const qkv_train_config *tc, bool saved)
{
    for (int i = 0; i < N_RANGES; i++) {
        const field_range *f = &ranges[i];
        double v = field_get(tc, f);
        if (v == 0 && f->when_zero != 0 && !saved)
            continue;
        if (!(v >= f->lo && v <= f->hi)) {
            char zero[64] = "";
            if (f->when_zero != 0)
                snprintf(zero, sizeof zero, saved ? " (a saved run holds the value it used)"
                                                  : " (or 0 for %g)",
                         f->when_zero);
            return qkv_set_error(f->whole ? "%s: %s %.0f is not in [%.0f, %.0f]%s"
                                          : "%s: %s %g is not in [%g, %g]%s",
                                 who, f->name, v, f->lo, f->hi, zero);
        }
    }
    double lr = filled(tc).lr;
    if (tc->min_lr > lr)
        return qkv_set_error("%s: min_lr %g is above lr %g", who, tc->min_lr, lr);
    return 0;
}

int qkv_train_config_check(const qkv_train_config *tc)
{
    if (qkv__null("qkv_train_config_check", "tc", tc))
        return -1;
    return check_config("qkv_train_config_check: train config", tc, false);
}

/* 0 when step can stand in a saved run of the settings tc: from 0 to the
 * run's length (a run is never saved past its end). Else -1 naming who. */
static int check_step(const char *who, int64_t step, const qkv_train_config *tc)
{
    if (step < 0 || step > tc->iters)
        return qkv_set_error("%s: step %lld is not in [0, iters %d]: a run is never saved "
                             "before its start or past its end",
                             who, (long long)step, tc->iters);
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

/* What follows the run's 64 bytes of settings in a newer checkpoint: its
 * grad_accum, then the model's stream names (see QKV_TRAIN_CONFIG_BYTES),
 * then, when the program gave one (qkv_training_set_note), its note: a
 * length byte (1..QKV_TRAINING_NOTE_MAX) and the bytes. */
enum { NAME_MAX_BYTES = 64 };
typedef struct stream_names {
    int n;                                   /* 0: the streams are unnamed */
    const uint8_t *name[QKV_TRAINING_MAX_RNGS];
    int len[QKV_TRAINING_MAX_RNGS];
    const uint8_t *note;                     /* the program's note, or NULL */
    int note_len;
} stream_names;

/* Bytes of the extension for grad_accum, names (NULL: none) and a note of
 * note_len bytes, 0 when all are what a checkpoint without the extension
 * means (1, unnamed, no note). */
static size_t extension_bytes(int grad_accum, const char *const *names, int n, int note_len)
{
    if (grad_accum == 1 && !names && note_len == 0)
        return 0;
    size_t b = 4 + 1;
    for (int i = 0; names && i < n; i++)
        b += 1 + strlen(names[i]);
    return b + (note_len ? 1 + (size_t)note_len : 0);
}

/* Write the extension at p: grad_accum, the count of names, each name, the note. */
static void pack_extension(uint8_t *p, int grad_accum, const char *const *names, int n,
                           const uint8_t *note)
{
    qkv__put_u32(p, (uint32_t)grad_accum);
    p[4] = (uint8_t)(names ? n : 0);
    p += 5;
    for (int i = 0; names && i < n; i++) {
        size_t len = strlen(names[i]);
        *p++ = (uint8_t)len;
        memcpy(p, names[i], len);
        p += len;
    }
    if (note[0])
        memcpy(p, note, 1 + (size_t)note[0]);
}

/* The program's note of run t: a length byte, then up to QKV_TRAINING_NOTE_MAX
 * bytes, kept after the copy of its kind (see new_run). */
static uint8_t *note_of(const qkv_training *t)
{
    return (uint8_t *)t->model.kind + strlen(t->model.kind) + 1;
}

/* Read the extension of len bytes at p (len 0: none) into grad_accum and
 * names; -1 naming who when it is not one pack_extension writes. */
static int read_extension(const char *who, const uint8_t *p, size_t len, int *grad_accum,
                          stream_names *names)
{
    *grad_accum = 1;
    names->n = 0;
    names->note = NULL;
    names->note_len = 0;
    if (len == 0)
        return 0;
    *grad_accum = (int32_t)qkv__get_u32(p);
    int n = p[4];
    size_t at = 5;
    if (n > QKV_TRAINING_MAX_RNGS)
        return qkv_set_error("%s: %d stream names (at most %d)", who, n, QKV_TRAINING_MAX_RNGS);
    for (int i = 0; i < n; i++) {
        if (at >= len || p[at] == 0 || p[at] > len - at - 1)
            return qkv_set_error("%s: stream name %d runs past the config blob", who, i);
        names->len[i] = p[at];
        names->name[i] = p + at + 1;
        at += 1 + (size_t)p[at];
    }
    if (at < len && p[at] >= 1 && p[at] <= QKV_TRAINING_NOTE_MAX && at + 1 + p[at] == len) {
        names->note = p + at + 1;
        names->note_len = p[at];
        at = len;
    }
    if (at != len)
        return qkv_set_error("%s: %zu bytes after the stream names", who, len - at);
    names->n = n;
    return 0;
}

/* The run's settings and stream names in ck's config blob after the
 * model's first model_bytes bytes; -1 with a message naming fn. */
static int read_run(const char *fn, qkv_train_config *tc, stream_names *names,
                    const qkv_checkpoint *ck, size_t model_bytes)
{
    if (qkv__null(fn, "tc", tc) || qkv__null(fn, "ck", ck))
        return -1;
    size_t want = model_bytes + QKV_TRAIN_CONFIG_BYTES;
    bool v1 = ck->config_len == model_bytes + QKV_TRAIN_CONFIG_BYTES_V1;
    /* The settings alone (of either version), or followed by an extension. */
    bool sized = ck->config_len == want || ck->config_len >= want + 5;
    if (model_bytes > SIZE_MAX - QKV_TRAIN_CONFIG_BYTES || (!sized && !v1))
        return qkv_set_error("%s: %s checkpoint: config of %zu bytes, expected %zu (a model "
                             "saved without its run cannot resume)",
                             fn, ck->kind, ck->config_len, want);
    if (!ck->body || (ck->config_len > 0 && !ck->config))
        return qkv_set_error("%s: ck was not made by qkv_checkpoint_open", fn);
    /* The int fields as pack_config wrote them: a u32 of an int. */
    const uint8_t *p = (const uint8_t *)ck->config + model_bytes;
    tc->iters = (int32_t)qkv__get_u32(p);
    tc->batch_size = (int32_t)qkv__get_u32(p + 4);
    tc->warmup = (int32_t)qkv__get_u32(p + 8);
    tc->eval_iters = (int32_t)qkv__get_u32(p + 12);
    tc->lr = qkv__get_f64(p + 16);
    tc->min_lr = qkv__get_f64(p + 24);
    tc->weight_decay = qkv__get_f64(p + 32);
    tc->grad_clip = qkv__get_f64(p + 40);
    tc->seed = qkv__get_u64(p + 48);
    tc->wsd_decay = v1 ? 0 : qkv__get_f64(p + 56);
    char who[128];
    snprintf(who, sizeof who, "%s: the %s checkpoint's saved run", fn, ck->kind);
    size_t extra = v1 ? 0 : ck->config_len - want;
    if (read_extension(who, p + QKV_TRAIN_CONFIG_BYTES, extra, &tc->grad_accum, names) < 0 ||
        check_config(who, tc, true) < 0 || check_step(who, ck->step, tc) < 0)
        return -1;
    return 0;
}

int qkv_training_config_load(qkv_train_config *tc, const qkv_checkpoint *ck, size_t model_bytes)
{
    stream_names names;
    return read_run("qkv_training_config_load", tc, &names, ck, model_bytes);
}

/* 0 when a model can be trained: a kind, params, a loss, 0..8 streams. */
static int check_model(const qkv_training_model *model)
{
    const char *missing = !model->kind     ? "kind"
                          : !model->params ? "params"
                          : !model->loss   ? "loss"
                                           : NULL;
    if (missing)
        return qkv_set_error("training: model->%s is NULL: a model needs a kind, params and a "
                             "loss", missing);
    if (model->n_rngs < 0 || model->n_rngs > QKV_TRAINING_MAX_RNGS ||
        (model->n_rngs > 0 && !model->rngs))
        return qkv_set_error("training: %d model streams (0 to %d, with pointers)",
                             model->n_rngs, QKV_TRAINING_MAX_RNGS);
    if (model->config_len > 0 && !model->config)
        return qkv_set_error("training: model->config is NULL but model->config_len is %zu",
                             model->config_len);
    if (model->config_len > SIZE_MAX / 2)
        return qkv_set_error("training: model->config_len %zu is not a size in memory",
                             model->config_len);
    if (model->vocab && qkv__vocab_check(model->vocab->byte, model->vocab->size) < 0)
        return qkv__error_prefix("training: model->vocab");
    for (int i = 0; model->rng_names && i < model->n_rngs; i++) {
        const char *name = model->rng_names[i];
        size_t len = name ? strlen(name) : 0;
        if (len < 1 || len > NAME_MAX_BYTES || !strcmp(name, "dropout"))
            return qkv_set_error("training: model->rng_names[%d] is %s%s%s: a name of 1 to %d "
                                 "bytes, not \"dropout\" (the run's own stream)", i,
                                 name ? "'" : "NULL", name ? name : "", name ? "'" : "",
                                 NAME_MAX_BYTES);
        for (int j = 0; j < i; j++)
            if (!strcmp(name, model->rng_names[j]))
                return qkv_set_error("training: model->rng_names[%d] and [%d] are both '%s'", j,
                                     i, name);
    }
    return 0;
}

/* Free what model's callbacks work in, when a run was to own it: the end
 * of every qkv_training_model given to a run that could not be made. */
static void release(const qkv_training_model *model)
{
    if (model->release)
        model->release(model->model);
}

/* An optimizer of this kind for t's parameters: the kind's defaults with the
 * run's weight decay. NULL with a message. */
static qkv_optim *run_optim(const qkv_training *t, qkv_optim_kind kind)
{
    qkv_optim_config oc = kind == QKV_OPTIM_MUON  ? qkv_muon_defaults()
                          : kind == QKV_OPTIM_SGD ? qkv_sgd_defaults()
                                                  : qkv_adamw_defaults();
    oc.kind = kind;
    oc.weight_decay = t->cfg.weight_decay;
    return qkv_optim_new(t->model.params, &oc);
}

int qkv_training_set_optim(qkv_training *t, qkv_optim_kind kind)
{
    const char *fn = "qkv_training_set_optim";
    if (qkv__null(fn, "t", t))
        return -1;
    if (t->step != 0)
        return qkv_set_error("%s: the run is at step %lld; its optimizer is chosen before the "
                             "first step (a resumed run keeps the saved one)", fn,
                             (long long)t->step);
    qkv_optim *o = run_optim(t, kind);
    if (!o)
        return qkv__fail_in(fn);
    qkv_optim_free(t->opt);
    t->opt = o;
    return 0;
}

/* qkv_training_new, named fn in messages; model and tc checked for NULL. */
static qkv_training *new_run(const char *fn, const qkv_training_model *model,
                             const qkv_train_config *tc)
{
    if (check_model(model) < 0 || qkv_train_config_check(tc) < 0) {
        qkv__fail_in(fn);
        release(model);
        return NULL;
    }
    qkv_training *t = qkv_calloc(sizeof *t);
    if (!t) {
        release(model);
        return NULL;
    }
    t->model = *model;
    /* The defaults are filled in here, so the run, its callbacks and the
     * checkpoint all see (and a resume gets back) the values actually used. */
    t->cfg = filled(tc);
    const qkv_train_config *c = &t->cfg;
    t->batch_hi = c->batch_size;
    t->sched = (qkv_lr_schedule){.lr = c->lr, .min_lr = c->min_lr, .warmup_iters = c->warmup,
                                 .decay_iters = c->iters, .wsd_decay = c->wsd_decay};
    /* One seed, separate streams: the model's get seed + 1, + 2, ... (a
     * model that seeds them itself after this, as the GPT does, keeps its
     * own), dropout its own. */
    qkv_rng_seed(&t->dropout_rng, c->seed + 4);
    t->rngs[0] = &t->dropout_rng;
    for (int i = 0; i < model->n_rngs; i++) {
        t->rngs[1 + i] = model->rngs[i];
        qkv_rng_seed(model->rngs[i], c->seed + 1 + (uint64_t)i);
    }
    t->model.rngs = NULL; /* the run's list is t->rngs */
    /* Room for the extension whatever grad_accum a save finds in t->cfg, and
     * then a copy of the kind: the caller's string may live no longer than
     * this call (a rebuild's plug->kind = ck->kind). */
    size_t extra = extension_bytes(2, model->rng_names, model->n_rngs, QKV_TRAINING_NOTE_MAX);
    size_t at_kind = model->config_len + QKV_TRAIN_CONFIG_BYTES + extra;
    uint8_t *blob = qkv_alloc(at_kind + strlen(model->kind) + 1 + 1 + QKV_TRAINING_NOTE_MAX);
    t->model.config = blob;
    if (blob) {
        t->model.kind = strcpy((char *)blob + at_kind, model->kind);
        note_of(t)[0] = 0; /* no note until the program gives one */
    }
    if (!blob || !(t->opt = run_optim(t, QKV_OPTIM_ADAMW)) ||
        !(t->arena = qkv_arena_new(model->arena_bytes ? model->arena_bytes : (size_t)16 << 20))) {
        qkv_training_free(t);
        return NULL;
    }
    if (model->config_len)
        memcpy(blob, model->config, model->config_len);
    if (model->start && model->start(model->model, t) < 0) {
        qkv__fail_in(fn);
        qkv_training_free(t);
        return NULL;
    }
    return t;
}

qkv_training *qkv_training_new(const qkv_training_model *model, const qkv_train_config *tc)
{
    const char *fn = "qkv_training_new";
    if (qkv__null(fn, "model", model))
        return NULL;
    if (qkv__null(fn, "tc", tc)) {
        release(model);
        return NULL;
    }
    return new_run(fn, model, tc);
}

/* 0 when the checkpoint ck at path holds the model: the same kind (checked
 * at opening), config blob and vocabulary. The parameters' names and shapes
 * are checked as they load. */
size_t qkv__first_difference(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

static int check_saved_model(const qkv_checkpoint *ck, const qkv_training_model *model,
                             const char *path)
{
    const uint8_t *saved = ck->config, *here = model->config;
    size_t i = model->config_len ? qkv__first_difference(saved, here, model->config_len) : 0;
    if (i < model->config_len)
        return qkv_set_error("'%s' holds another %s model than this one (its config differs at "
                             "byte %zu: %u in the checkpoint, %u here): rebuild the model from "
                             "the checkpoint", path, model->kind, i, saved[i], here[i]);
    int n = model->vocab ? model->vocab->size : 0;
    if (ck->vocab.size != n)
        return qkv_set_error("'%s' holds a vocabulary of %d symbols but the model's has %d",
                             path, ck->vocab.size, n);
    if (n && memcmp(ck->vocab.byte, model->vocab->byte, (size_t)n) != 0)
        return qkv_set_error("'%s' holds another vocabulary of %d symbols than the model's",
                             path, n);
    return 0;
}

qkv_training *qkv_training_resume(const qkv_training_model *model, const char *path, int iters)
{
    const char *fn = "qkv_training_resume";
    if (qkv__null(fn, "model", model))
        return NULL;
    qkv_checkpoint *ck = NULL;
    qkv_training *t = NULL;
    qkv_train_config tc;
    if (qkv__null(fn, "path", path) || check_model(model) < 0)
        goto fail;
    if (iters < 0) {
        qkv_set_error("iters %d is negative (0 keeps the saved run length)", iters);
        goto fail;
    }
    if (!(ck = qkv_checkpoint_open(path, model->kind)) ||
        qkv_training_config_load(&tc, ck, model->config_len) < 0 ||
        check_saved_model(ck, model, path) < 0)
        goto fail;
    if (iters > 0 && iters < ck->step) {
        qkv_set_error("the run saved in '%s' is at step %lld (of %d): iters %d would end it "
                      "before it resumes; pass iters above %lld to go further",
                      path, (long long)ck->step, tc.iters, iters, (long long)ck->step);
        goto fail;
    }
    if (iters > 0)
        tc.iters = iters;
    /* The model is handed over here: from now on the run releases it. */
    t = new_run(fn, model, &tc);
    model = NULL;
    if (!t || qkv_training_load(t, ck) < 0)
        goto fail;
    qkv_checkpoint_close(ck);
    return t;
fail:
    qkv__fail_in(fn);
    if (model)
        release(model);
    qkv_training_free(t);
    qkv_checkpoint_close(ck);
    return NULL;
}

void qkv_training_free(qkv_training *t)
{
    if (!t)
        return;
    release(&t->model);
    qkv_free((void *)t->model.config);
    qkv_optim_free(t->opt);
    qkv_arena_free(&t->arena);
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

/* The model's loss on the next (micro-)batch and its backward, the
 * gradients adding up in p->grad; the loss value into *value. 0 or -1. */
static int loss_backward(qkv_training *t, double *value)
{
    qkv_ctx ctx = {.arena = t->arena, .train = true, .rng = &t->dropout_rng};
    /* The message is cleared for the loss, so that one failing without a
     * message is told apart from an older failure's, and put back after. */
    char before[1024];
    snprintf(before, sizeof before, "%s", qkv_last_error());
    qkv_clear_error();
    qkv_tensor *loss = t->model.loss(t->model.model, &ctx, t->batch_lo, t->batch_hi);
    if (loss)
        qkv_set_error("%s", before);
    else if (!qkv_last_error()[0])
        qkv_set_error("qkv_training_step: step %lld: the '%s' model's loss returned NULL and "
                      "left no message", (long long)t->step, t->model.kind);
    else
        qkv__error_prefix("qkv_training_step: step %lld", (long long)t->step);
    int rc = loss ? qkv_backward(t->arena, loss) : -1;
    *value = loss ? loss->data[0] : NAN;
    qkv_arena_reset(t->arena); /* the graph is used up; the gradients live in p */
    return rc;
}

int qkv_training_step(qkv_training *t, double *loss_out, double *norm_out)
{
    if (qkv__null("qkv_training_step", "t", t))
        return -1;
    qkv_params *p = t->model.params;
    qkv_params_zero_grad(p);
    /* k micro-batches: their gradients add up, and the mean of k equal-sized
     * batches' mean gradients is the mean gradient over all their rows. */
    int k = t->cfg.grad_accum > 1 ? t->cfg.grad_accum : 1;
    double value = 0;
    int rc = 0;
    for (int i = 0; i < k && rc == 0; i++) {
        double v;
        rc = loss_backward(t, &v);
        value += v;
    }
    if (k > 1) {
        value /= k;
        for (size_t j = 0; j < p->total; j++)
            p->grad[j] /= (qkv_real)k;
    }
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

/* The mean of the model's eval_loss over the batches qkv_training_eval_more
 * allows, each in a fresh arena without dropout; NAN when one fails. */
static double mean_eval_loss(qkv_training *t, int which)
{
    qkv_ctx ctx = {.arena = t->arena, .train = false, .rng = NULL};
    double sum = 0;
    int b = 0;
    for (; qkv_training_eval_more(t, b); b++) {
        /* A failed batch ends the work but not the asking: eval_stop may be
         * a vote of data-parallel ranks, which must all ask it as often. */
        if (isnan(sum))
            continue;
        qkv_arena_reset(t->arena);
        qkv_tensor *loss = t->model.eval_loss(t->model.model, &ctx, which, t->batch_lo, t->batch_hi);
        if (!loss && !qkv_last_error()[0])
            qkv_set_error("evaluation %d, batch %d: the '%s' model's eval_loss returned NULL "
                          "and left no message", which, b, t->model.kind);
        sum += loss ? loss->data[0] : NAN;
    }
    qkv_arena_reset(t->arena);
    return sum / b;
}

double qkv_training_eval(qkv_training *t, int which)
{
    if (qkv__null("qkv_training_eval", "t", t))
        return NAN;
    if (!t->model.eval && !t->model.eval_loss) {
        qkv_set_error("qkv_training_eval: the '%s' model has no evaluation", t->model.kind);
        return NAN;
    }
    /* No graph is kept, and the arena starts (and is left) empty, whichever
     * callback evaluates. */
    bool was = qkv_set_grad_enabled(false);
    double value;
    if (t->model.eval_loss) {
        value = mean_eval_loss(t, which);
    } else {
        qkv_arena_reset(t->arena);
        value = t->model.eval(t->model.model, t, which);
        qkv_arena_reset(t->arena);
    }
    qkv_set_grad_enabled(was);
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
    int64_t lo = t->step > 1 ? t->step : 1; /* a run never ends before the steps it did */
    if (iters < lo || iters > QKV_TRAIN_ITERS_MAX)
        return qkv_set_error("qkv_training_set_iters: iters %lld must be in [%lld, %d]",
                             (long long)iters, (long long)lo, QKV_TRAIN_ITERS_MAX);
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
    const char *fn = "qkv_training_save";
    if (qkv__null(fn, "t", t) || qkv__null(fn, "path", path))
        return -1;
    /* What qkv_training_config_load and the checkpoint's load would refuse. */
    if (check_config("qkv_training_save: t->cfg", &t->cfg, true) < 0 ||
        check_step("qkv_training_save: t", t->step, &t->cfg) < 0)
        return -1;
    if (t->model.vocab && qkv__vocab_check(t->model.vocab->byte, t->model.vocab->size) < 0)
        return qkv__error_prefix("%s: t->model.vocab", fn);
    if (check_finite(t->model.params, path) < 0)
        return -1;
    /* The run's settings go after the model's blob at every save: cfg.iters may have moved. */
    uint8_t *blob = (uint8_t *)t->model.config;
    const qkv_training_model *m = &t->model;
    pack_config(blob + m->config_len, &t->cfg);
    const uint8_t *note = note_of(t);
    size_t extra = extension_bytes(t->cfg.grad_accum, m->rng_names, m->n_rngs, note[0]);
    if (extra)
        pack_extension(blob + m->config_len + QKV_TRAIN_CONFIG_BYTES, t->cfg.grad_accum,
                       m->rng_names, m->n_rngs, note);
    qkv_ckpt_model model = {.kind = t->model.kind, .config = blob,
                            .config_len = t->model.config_len + QKV_TRAIN_CONFIG_BYTES + extra,
                            .vocab = t->model.vocab};
    qkv_ckpt_progress prog = {.step = t->step, .n_rngs = 1 + t->model.n_rngs, .rngs = t->rngs};
    return qkv_checkpoint_save(path, &model, t->model.params, t->opt, &prog);
}

/* Into rngs, the run's streams in the order ck saved them: the dropout
 * stream, then the model's by the saved names (by position when the
 * checkpoint has none: one written before streams had names). -1 naming
 * fn when a saved name has no stream of the model's. */
static int match_streams(const char *fn, const qkv_training *t, const stream_names *saved,
                         qkv_rng **rngs)
{
    const qkv_training_model *m = &t->model;
    memcpy(rngs, t->rngs, sizeof t->rngs);
    if (saved->n == 0)
        return 0;
    if (!m->rng_names)
        return qkv_set_error("%s: the checkpoint names its %d streams, the '%s' model gives "
                             "none (rng_names) to match them by", fn, saved->n, m->kind);
    if (saved->n != m->n_rngs)
        return qkv_set_error("%s: the checkpoint has %d model streams, the '%s' model %d", fn,
                             saved->n, m->kind, m->n_rngs);
    for (int r = 0; r < saved->n; r++) {
        int j = 0;
        while (j < m->n_rngs && !((int)strlen(m->rng_names[j]) == saved->len[r] &&
                                  !memcmp(m->rng_names[j], saved->name[r], (size_t)saved->len[r])))
            j++;
        if (j == m->n_rngs)
            return qkv_set_error("%s: the checkpoint's stream '%.*s' is not one of the '%s' "
                                 "model's rng_names", fn, saved->len[r],
                                 (const char *)saved->name[r], m->kind);
        rngs[1 + r] = t->rngs[1 + j];
    }
    return 0;
}

int qkv_training_load(qkv_training *t, const qkv_checkpoint *ck)
{
    if (qkv__null("qkv_training_load", "t", t) || qkv__null("qkv_training_load", "ck", ck))
        return -1;
    const char *fn = "qkv_training_load";
    qkv_train_config saved;
    stream_names names;
    if (read_run(fn, &saved, &names, ck, t->model.config_len) < 0)
        return -1;
    /* A run makes one optimizer step per step: another count would resume
     * AdamW's bias correction somewhere else than the run it continues. */
    if (ck->optim_step != ck->step)
        return qkv_set_error("%s: the checkpoint's optimizer is at step %lld but its run at step "
                             "%lld: a saved run has made one update per step",
                             fn, (long long)ck->optim_step, (long long)ck->step);
    qkv_rng *rngs[1 + QKV_TRAINING_MAX_RNGS];
    if (match_streams(fn, t, &names, rngs) < 0)
        return -1;
    qkv_ckpt_progress prog = {.n_rngs = 1 + t->model.n_rngs, .rngs = rngs};
    /* The saved moments go on in an optimizer of their kind. */
    qkv_optim *opt = t->opt;
    if (qkv__optim_moments(ck->optim_kind) && ck->optim_kind != (int)opt->cfg.kind &&
        !(opt = run_optim(t, (qkv_optim_kind)ck->optim_kind)))
        return qkv__fail_in(fn);
    if (qkv_checkpoint_load(ck, t->model.params, opt, &prog) < 0) {
        if (opt != t->opt)
            qkv_optim_free(opt);
        return -1;
    }
    if (opt != t->opt) {
        qkv_optim_free(t->opt);
        t->opt = opt;
    }
    t->step = prog.step;
    uint8_t *note = note_of(t); /* the program's note goes on with the run */
    note[0] = (uint8_t)names.note_len;
    if (names.note_len)
        memcpy(note + 1, names.note, (size_t)names.note_len);
    return 0;
}

int qkv_training_set_note(qkv_training *t, const void *note, int len)
{
    const char *fn = "qkv_training_set_note";
    if (qkv__null(fn, "t", t) || (len && qkv__null(fn, "note", note)))
        return -1;
    if (len < 0 || len > QKV_TRAINING_NOTE_MAX)
        return qkv_set_error("%s: len %d: a note is 0 to %d bytes", fn, len, QKV_TRAINING_NOTE_MAX);
    uint8_t *at = note_of(t);
    at[0] = (uint8_t)len;
    memcpy(at + 1, note, (size_t)len);
    return 0;
}

int qkv_training_note(const qkv_training *t, const uint8_t **note)
{
    const char *fn = "qkv_training_note";
    if (qkv__null(fn, "t", t) || qkv__null(fn, "note", note))
        return -1;
    *note = note_of(t) + 1;
    return note_of(t)[0];
}
