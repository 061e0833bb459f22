/* The light run (see qkv/training.h): a qkv_training_model filled in from a
 * qkv_light_model, so that a one-process run is the training run itself,
 * with a context pointer, copied streams and a checked config blob. */
#include <string.h>

#include "qkv/training.h"
#include "tensor/check.h"
#include "train/bytes.h"
#include "train/internal.h"

/* Bytes before the model's config in a light run's blob: a mark (MARK), so
 * that another run's blob is not read as a light one's, and its length. */
enum { LEN_BYTES = 8, NAME_BYTES = 64 /* a stream name's most, as the run's */ };
static const uint8_t MARK[4] = {'q', 'k', 'v', 'L'};

/* What the run owns for a light model (its callbacks' `model`). */
typedef struct light {
    qkv_light_loss_fn loss, eval;             /* the user's batch losses */
    void *ud;                                 /* their context */
    int batch;                                /* the run's batch_size: the only slice there is */
    const char *names[QKV_TRAINING_MAX_RNGS]; /* the run's rng_names: copies of the user's */
    char name_bytes[QKV_TRAINING_MAX_RNGS][NAME_BYTES + 1];
} light;

static void light_free(void *model) { qkv_free(model); }

/* A light run has one process: the slice of every batch is the whole of it. */
static int whole_batch(const light *l, int lo, int hi)
{
    if (lo == 0 && hi == l->batch)
        return 0;
    return qkv_set_error("a light run computes whole batches: rows [%d, %d) of %d asked "
                         "(data parallelism needs a qkv_training_model)",
                         lo, hi, l->batch);
}

/* The run's loss: the user's, on a training batch. */
static qkv_tensor *light_loss(void *model, const qkv_ctx *ctx, int lo, int hi)
{
    light *l = model;
    return whole_batch(l, lo, hi) < 0 ? NULL : l->loss(l->ud, ctx);
}

/* The run's evaluation 0: the user's eval, or the loss on a held-out batch. */
static qkv_tensor *light_eval(void *model, const qkv_ctx *ctx, int which, int lo, int hi)
{
    light *l = model;
    if (which != 0) {
        qkv_set_error("a light run has one evaluation, 0 (the held-out loss), not %d", which);
        return NULL;
    }
    return whole_batch(l, lo, hi) < 0 ? NULL : (l->eval ? l->eval : l->loss)(l->ud, ctx);
}

/* The run's start: the batch size its slices are checked against. */
static int light_start(void *model, const qkv_training *run)
{
    ((light *)model)->batch = run->cfg.batch_size;
    return 0;
}

/* Fill plug from m (fn names the caller in messages): the run's state made
 * (plug->model, released with the run), the streams counted, the blob (its
 * mark, its length, then m's config) made in *blob, the caller's to free. 0 or -1. */
static int fill(const char *fn, const qkv_light_model *m, qkv_training_model *plug, uint8_t **blob)
{
    if (qkv__null(fn, "m", m) || qkv__null(fn, "m->kind", m->kind) ||
        qkv__null(fn, "m->params", m->params) || qkv__null(fn, "m->loss", m->loss))
        return -1;
    if (m->config_len > QKV_LIGHT_CONFIG_MAX || (m->config_len && !m->config))
        return qkv_set_error("%s: m->config_len %zu with config %s (at most %d bytes, with a "
                             "config)",
                             fn, m->config_len, m->config ? "set" : "NULL", QKV_LIGHT_CONFIG_MAX);
    int n = 0;
    while (n < QKV_TRAINING_MAX_RNGS && m->rngs[n])
        n++;
    bool named = m->rng_names[0] != NULL;
    for (int i = 0; i < QKV_TRAINING_MAX_RNGS; i++) {
        size_t len = m->rng_names[i] ? strlen(m->rng_names[i]) : 0;
        if ((i < n && named != (m->rng_names[i] != NULL)) || (i >= n && m->rng_names[i]) ||
            len > NAME_BYTES)
            return qkv_set_error("%s: m->rng_names[%d] is %s: a name of 1 to %d bytes for each "
                                 "of the %d streams, or none",
                                 fn, i, m->rng_names[i] ? m->rng_names[i] : "NULL", NAME_BYTES, n);
    }
    light *l = qkv_calloc(sizeof *l);
    *blob = qkv_alloc(LEN_BYTES + m->config_len);
    if (!l || !*blob) {
        qkv_free(l);
        qkv_free(*blob);
        *blob = NULL;
        return qkv__fail_in(fn);
    }
    *l = (light){.loss = m->loss, .eval = m->eval, .ud = m->ud};
    for (int i = 0; named && i < n; i++)
        l->names[i] = strcpy(l->name_bytes[i], m->rng_names[i]);
    memcpy(*blob, MARK, sizeof MARK);
    qkv__put_u32(*blob + sizeof MARK, (uint32_t)m->config_len);
    if (m->config_len)
        memcpy(*blob + LEN_BYTES, m->config, m->config_len);
    *plug = (qkv_training_model){.kind = m->kind,
                                 .model = l,
                                 .params = m->params,
                                 .config = *blob,
                                 .config_len = LEN_BYTES + m->config_len,
                                 .vocab = m->vocab,
                                 .rngs = m->rngs,
                                 .n_rngs = n,
                                 .loss = light_loss,
                                 .start = light_start,
                                 .release = light_free,
                                 .eval_loss = light_eval,
                                 .rng_names = named ? l->names : NULL};
    return 0;
}

/* 0 when the checkpoint ck (at path) was saved from a light model whose
 * config is blob (the mark, its length, its bytes); else -1 saying where they differ. */
static int same_config(const char *path, const qkv_checkpoint *ck, const uint8_t *blob)
{
    const uint8_t *saved = ck->config;
    size_t here = qkv__get_u32(blob + sizeof MARK);
    bool marked = ck->config_len >= LEN_BYTES + QKV_TRAIN_CONFIG_BYTES_V1 && saved &&
                  !memcmp(saved, MARK, sizeof MARK);
    size_t there = marked ? qkv__get_u32(saved + sizeof MARK) : 0;
    if (!marked || there > ck->config_len - LEN_BYTES - QKV_TRAIN_CONFIG_BYTES_V1)
        return qkv_set_error("'%s' holds no light run (a run of a qkv_training_model?)", path);
    if (there != here)
        return qkv_set_error("'%s': the model's config is %zu bytes in the checkpoint, %zu here",
                             path, there, here);
    size_t i = qkv__first_difference(saved + LEN_BYTES, blob + LEN_BYTES, here);
    if (i < here)
        return qkv_set_error("'%s': config byte %zu: %u in the checkpoint, %u here", path, i,
                             saved[LEN_BYTES + i], blob[LEN_BYTES + i]);
    return 0;
}

/* The run of m: new with settings tc, or (tc NULL) resumed from path.
 * NULL with a message naming fn. */
static qkv_training *light_run(const char *fn, const qkv_light_model *m, const qkv_train_config *tc,
                               const char *path)
{
    qkv_training_model plug;
    uint8_t *blob = NULL;
    if (fill(fn, m, &plug, &blob) < 0)
        return NULL;
    qkv_training *t = NULL;
    if (tc) {
        t = qkv_training_new(&plug, tc); /* it copies the blob, and owns plug.model */
    } else {
        /* The config is compared here, where a difference can be named; the
         * resume then checks the rest (vocabulary, parameters, streams). */
        qkv_checkpoint *ck = qkv_checkpoint_open(path, m->kind);
        int rc = ck ? same_config(path, ck, blob) : -1;
        qkv_checkpoint_close(ck);
        if (rc == 0)
            t = qkv_training_resume(&plug, path, 0); /* it owns plug.model from here */
        else
            light_free(plug.model);
    }
    qkv_free(blob);
    if (!t)
        qkv__fail_in(fn);
    return t;
}

qkv_training *qkv_light_new(const qkv_light_model *m, const qkv_train_config *tc)
{
    return qkv__null("qkv_light_new", "tc", tc) ? NULL : light_run("qkv_light_new", m, tc, NULL);
}

qkv_training *qkv_light_resume(const qkv_light_model *m, const char *path)
{
    const char *fn = "qkv_light_resume";
    return qkv__null(fn, "path", path) ? NULL : light_run(fn, m, NULL, path);
}
