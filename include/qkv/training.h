/* qkv/training.h — a training run for any model: the run's settings, AdamW,
 * the learning-rate schedule, the dropout stream, the step arena, the step
 * counter, evaluation, and checkpoints that resume exactly.
 *
 * A model plugs in its loss (and, optionally, an evaluation), its parameters,
 * its config blob and its own random streams (its batch samplers):
 *
 *     typedef struct line_fit {          // the model: y = w·x, to learn w = 3
 *         qkv_params *params;
 *         qkv_tensor *w;
 *         qkv_rng batches;               // its own stream, saved with the run
 *     } line_fit;
 *
 *     static qkv_tensor *line_loss(void *model, const qkv_ctx *ctx, int lo, int hi)
 *     {
 *         line_fit *m = model;
 *         qkv_real x[16], y[16];         // the whole batch: every stream moves alike
 *         for (int i = 0; i < 16; i++) {
 *             x[i] = (qkv_real)qkv_rng_normal(&m->batches);
 *             y[i] = 3 * x[i];
 *         }
 *         qkv_tensor *xs = qkv_from_array(ctx->arena, QKV_SHAPE(hi - lo, 1), x + lo);
 *         qkv_tensor *ys = qkv_from_array(ctx->arena, QKV_SHAPE(hi - lo, 1), y + lo);
 *         qkv_tensor *err = qkv_sub(ctx->arena, qkv_matmul(ctx->arena, xs, m->w, false, false), ys);
 *         return qkv_mean(ctx->arena, qkv_mul(ctx->arena, err, err));   // of rows [lo, hi)
 *     }
 *
 *     static int line_rebuild(void *ud, const qkv_checkpoint *ck, qkv_training_model *plug)
 *     {
 *         (void)ck;                      // a model with sizes reads them from ck->config
 *         *plug = *(const qkv_training_model *)ud;
 *         return 0;
 *     }
 *
 *     line_fit m = {.params = qkv_params_new()};
 *     m.w = qkv_params_add(m.params, "w", QKV_SHAPE(1, 1), QKV_INIT_ZEROS, 0);
 *     qkv_rng_seed(&m.batches, 1);
 *     qkv_params_alloc(m.params, &m.batches);
 *     qkv_rng *streams[] = {&m.batches};     // seeded by the run from tc.seed
 *     const char *const names[] = {"batches"};
 *     uint8_t blob[1] = {1};                 // the model's config (its sizes; none here)
 *     qkv_training_model plug = {.kind = "line", .model = &m, .params = m.params,
 *                                .config = blob, .config_len = sizeof blob, .rngs = streams,
 *                                .rng_names = names, .n_rngs = 1, .loss = line_loss};
 *     qkv_train_config tc = {.iters = 500, .batch_size = 16, .lr = 0.05}; // rest: 0 = default
 *     qkv_training *t = qkv_training_new(&plug, &tc);
 *     while (t && t->step < 250)
 *         if (qkv_training_step(t, NULL, NULL) < 0) break;
 *     qkv_training_save(t, "line.ckpt");
 *     qkv_training_free(t);
 *     t = qkv_training_resume_rebuild("line.ckpt", "line", line_rebuild, &plug);   // step 250 again
 *     while (t && t->step < t->cfg.iters)
 *         if (qkv_training_step(t, NULL, NULL) < 0) break;
 *     qkv_training_free(t);
 *     qkv_params_free(&m.params);
 *
 * The models of this library fill a qkv_training_model themselves:
 * qkv_gpt_training_model (qkv/gpt.h) and qkv_seq2seq_training_model
 * (qkv/seq2seq.h). A run is then the same calls whatever the model, and so
 * is resuming one: rebuild the model from the checkpoint (qkv_gpt_load,
 * qkv_seq2seq_load), fill its qkv_training_model, qkv_training_resume.
 *
 * A model of your own is rebuilt from the checkpoint in the same call by
 * qkv_training_resume_rebuild (its rebuild callback reads the model's config
 * blob, the first bytes of the checkpoint's, and fills the model's side).
 *
 * Every stream a run draws from is saved (the run's dropout stream first,
 * then the model's), so N steps straight, or N/2, save, resume, N/2 more,
 * give bit-identical parameters and losses at the same thread count. Named
 * streams (rng_names) are matched by name on loading, so a model that lists
 * them in another order still gets each its own state.
 */
#ifndef QKV_TRAINING_H
#define QKV_TRAINING_H

#include "qkv/checkpoint.h"
#include "qkv/nn.h"
#include "qkv/optim.h"

QKV_BEGIN_DECLS

/* The range of each of the run's settings (inclusive), the one place they
 * are written: a new run, qkv_training_save, qkv_training_config_load and
 * the qkv program's options all check against these. */
#define QKV_TRAIN_ITERS_MAX 2147483647  /* iters, warmup (and the saved step) */
#define QKV_TRAIN_BATCH_MAX (1 << 20)   /* batch_size */
#define QKV_TRAIN_LR_MIN 1e-12          /* lr; min_lr is in [0, lr] */
#define QKV_TRAIN_LR_MAX 10.0           /* lr, min_lr */
#define QKV_TRAIN_WEIGHT_DECAY_MAX 10.0 /* weight_decay */
#define QKV_TRAIN_GRAD_CLIP_MAX 1e9     /* grad_clip */
#define QKV_TRAIN_EVAL_ITERS_MAX 1000000 /* eval_iters */
#define QKV_TRAIN_GRAD_ACCUM_MAX 4096   /* grad_accum */

/* The run's settings. A field left 0 takes the default its comment names
 * (the one rule of qkv/base.h): (qkv_train_config){0} is 2000 steps of batch
 * 12 on a cosine from lr 1e-3 down to 0, with no warmup, no weight decay
 * and no clipping. Where 0 is itself a setting (min_lr, warmup, weight_decay,
 * grad_clip, seed) it keeps that meaning. The run's cfg holds the values
 * filled in, and so does its checkpoint (where a 0 standing for a default is
 * an error). Each field's range follows its comment. */
typedef struct qkv_train_config {
    int iters;           /* optimizer steps in the run (where the lr schedule ends); 0 = 2000;
                            [1, QKV_TRAIN_ITERS_MAX] */
    int batch_size;      /* B: sequences (or pairs) per step; 0 = 12; [1, QKV_TRAIN_BATCH_MAX] */
    double lr;           /* peak learning rate; 0 = 1e-3; [QKV_TRAIN_LR_MIN, QKV_TRAIN_LR_MAX] */
    double min_lr;       /* learning rate at the end of the decay; 0 = 0; [0, lr] */
    int warmup;          /* steps of linear warmup; 0 = none; [0, QKV_TRAIN_ITERS_MAX] */
    double wsd_decay;    /* 0: cosine decay; in (0, 1]: warmup-stable-decay, the last
                            wsd_decay of the run decaying linearly (see qkv_lr_schedule) */
    double weight_decay; /* AdamW decay of weight matrices and embeddings; 0 = none;
                            [0, QKV_TRAIN_WEIGHT_DECAY_MAX] */
    double grad_clip;    /* global gradient-norm limit; 0 = none; [0, QKV_TRAIN_GRAD_CLIP_MAX] */
    int eval_iters;      /* batches averaged per evaluation; 0 = 200; [1, QKV_TRAIN_EVAL_ITERS_MAX] */
    uint64_t seed;       /* seeds the run's streams: dropout (seed + 4) and the model's
                            registered rngs (stream i gets seed + 1 + i) when the run is
                            made. The model's init happens before the run, so it takes its
                            seed from this field itself. 0 is a seed too */
    int grad_accum;      /* micro-batches per optimizer step: the loss is called this many
                            times (each a fresh batch of batch_size) and the update uses the
                            mean of their gradients, as one batch of grad_accum * batch_size
                            would; 0 = 1; [1, QKV_TRAIN_GRAD_ACCUM_MAX] */
} qkv_train_config;

/* nanoGPT's baby Shakespeare recipe: the zero config plus min_lr 1e-4,
 * warmup 100, weight decay 0.1, clip 1.0 and seed 1337 (2000 iters, batch
 * 12, lr 1e-3, 200 eval batches written out). */
qkv_train_config qkv_train_defaults(void);

/* 0 when every field of tc is 0 where that means a default, or in its range
 * above (NaN and infinities are in none); else -1 with "train config: NAME
 * VALUE is not in [LO, HI]" naming the first bad field, or "min_lr ... is
 * above lr ...". */
int qkv_train_config_check(const qkv_train_config *tc);

/* Bytes the run's settings add to a checkpoint's config blob, after the
 * model's. Checkpoints written before wsd_decay (the last 8 bytes) hold
 * QKV_TRAIN_CONFIG_BYTES_V1 and load as the cosine schedule they used. A
 * run with grad_accum above 1 or named streams adds, after these 64 bytes,
 * grad_accum (4 bytes) and the streams' names (a count byte, then each name
 * as a length byte and its bytes); a run without either writes the 64 bytes
 * alone, so its checkpoint is what earlier versions wrote (grad_accum 1). */
#define QKV_TRAIN_CONFIG_BYTES 64
#define QKV_TRAIN_CONFIG_BYTES_V1 56

/* The mean loss of rows [lo, hi) of the next training batch of the run's
 * batch_size, built in ctx->arena (ctx->train is set, ctx->rng is the dropout
 * stream). The callback draws the whole batch, whatever the slice, so that
 * processes sharing one batch keep their streams in step. NULL on failure,
 * with a message. */
typedef qkv_tensor *(*qkv_loss_fn)(void *model, const qkv_ctx *ctx, int lo, int hi);

typedef struct qkv_training qkv_training;

/* Evaluation number `which` of the model in run (what it means is the
 * model's: the GPT's 0 and 1 are the train and val losses, the
 * encoder-decoder's 0 its held-out exact match), on run->cfg.eval_iters
 * batches, its activations in run->arena; NAN with a message on failure. An
 * evaluation of several batches asks qkv_training_eval_more before each, so
 * that the run's eval_stop can end it early. */
typedef double (*qkv_eval_fn)(void *model, qkv_training *run, int which);

/* Called once by qkv_training_new when the run's settings are known (in
 * run->cfg, the defaults filled in, or a checkpoint's): the model sizes its
 * batches to cfg.batch_size and seeds its streams from cfg.seed. 0, or -1
 * with a message (the run is then not made). */
typedef int (*qkv_start_fn)(void *model, const qkv_training *run);

/* The mean loss of rows [lo, hi) of the next batch of evaluation `which`
 * (what it means is the model's: a split, a task), built in ctx->arena. The
 * run calls it once per batch with gradients off, ctx->train false (no
 * dropout), ctx->rng NULL and the arena reset before each call, for as many
 * batches as qkv_training_eval_more allows. NULL on failure, with a message. */
typedef qkv_tensor *(*qkv_eval_loss_fn)(void *model, const qkv_ctx *ctx, int which, int lo,
                                        int hi);

/* Asked between an evaluation's batches: true ends the evaluation there (a
 * signal, a deadline), its result then coming from the batches done. */
typedef bool (*qkv_stop_fn)(void *ud);

/* Called by each step after backward and before clipping, with every
 * gradient in p->grad (p->total values, one flat buffer) and the step's loss:
 * it may change both (data parallelism all-reduces them here, so the norm,
 * the clipping and the update see the global gradient). 0, or -1 with a
 * message (the step then fails and the weights are untouched). */
typedef int (*qkv_grad_hook)(void *ud, qkv_params *p, double *loss);

/* What a model gives the run. The run copies this and the config blob; the
 * model, its params and its streams must outlive the run. With release set,
 * the run owns `model` (the callbacks' state: batches, buffers): one
 * qkv_training_new or qkv_training_resume takes it over, and releases it in
 * qkv_training_free, or at once if it fails; a qkv_training_model that is
 * never given to one is released by calling release(model). */
typedef struct qkv_training_model {
    const char *kind;           /* the checkpoint's model kind: "gpt", "seq2seq", ... */
    void *model;                /* handed to the callbacks */
    qkv_params *params;         /* what the optimizer trains */
    const void *config;         /* the model's config blob, saved before the run's settings */
    size_t config_len;          /* its length in bytes */
    const qkv_tokenizer *vocab; /* saved in the checkpoint, or NULL */
    qkv_rng *const *rngs;       /* the model's own streams (its batch samplers), saved in order */
    int n_rngs;                 /* how many (0..8) */
    qkv_loss_fn loss;           /* the training loss */
    qkv_eval_fn eval;           /* evaluation done by the model, or NULL (eval_loss is used
                                   when set; this one is for evaluations that are not a
                                   mean loss, such as an accuracy) */
    qkv_start_fn start;         /* readies the model for the run's settings, or NULL */
    void (*release)(void *model); /* frees model with the run, or NULL (the caller keeps it) */
    size_t arena_bytes;         /* first size of the step arena (0: 16 MiB; it grows) */
    qkv_eval_loss_fn eval_loss; /* one batch of an evaluation the run averages, or NULL */
    const char *const *rng_names; /* NULL, or a name for each of rngs (1 to 64 bytes, none
                                     "dropout", no two alike): saved, and matched by name
                                     when a checkpoint is loaded */
} qkv_training_model;

/* Most streams a model may add to the run's. */
#define QKV_TRAINING_MAX_RNGS 8

struct qkv_training {
    qkv_training_model model;     /* the model's side (the blob pointer is the run's copy) */
    qkv_train_config cfg;         /* the run's settings; cfg.iters is the schedule's length */
    qkv_optim *opt;               /* AdamW and its moments */
    qkv_lr_schedule sched;        /* warmup + cosine (or stable-decay) over cfg.iters */
    qkv_rng dropout_rng;          /* dropout masks (seeded with cfg.seed + 4) */
    qkv_arena *arena;             /* everything one step creates */
    int64_t step;                 /* optimizer steps done */
    int batch_lo, batch_hi;       /* the rows of each global batch this process computes:
                                     [0, batch_size) unless set for data parallelism */
    qkv_grad_hook grad_hook;      /* called between backward and clipping, or NULL */
    void *grad_hook_ud;           /* its first argument */
    qkv_stop_fn eval_stop;        /* asked between evaluation batches, or NULL (never stop early) */
    void *eval_stop_ud;           /* its first argument */
    int eval_done;                /* batches the last evaluation averaged (at least 1; fewer than
                                     cfg.eval_iters when eval_stop ended it) */
    qkv_rng *rngs[1 + QKV_TRAINING_MAX_RNGS]; /* every stream, in checkpoint order */
};

/* A run for model with settings tc (its zero fields filled in, into t->cfg):
 * AdamW (weight decay from tc; qkv_training_set_optim for another) over
 * model->params, the schedule, the dropout
 * stream, the arena, then model->start. NULL with a message on a bad config
 * or no memory (model->model released then, if the run was to own it). */
qkv_training *qkv_training_new(const qkv_training_model *model, const qkv_train_config *tc);

/* The run saved at path, continued with model, which must be the one saved
 * there (its kind, its config blob and its vocabulary; rebuilt from the
 * checkpoint, e.g. by qkv_gpt_load or qkv_seq2seq_load): the run's settings
 * come from the file (qkv_training_config_load), then the parameters,
 * moments, step and streams (qkv_training_load), so it goes on bit-exactly.
 * When iters > 0 it replaces the saved run length (the schedule then ends
 * there; below the saved step is an error naming that step). NULL with a
 * message on failure (model->model released then, as by qkv_training_new). */
qkv_training *qkv_training_resume(const qkv_training_model *model, const char *path, int iters);

/* Free the run, and the callbacks' state when the run owns it (see
 * qkv_training_model); never the model's params. NULL is fine. */
void qkv_training_free(qkv_training *t);

/* One optimizer step: zero the gradients, the model's loss, backward, the
 * grad hook, then refuse a NaN or infinite loss or gradient norm (an error
 * naming the step, the weights untouched), clip the global norm to
 * cfg.grad_clip, the optimizer at the schedule's lr, and count the step. Writes the
 * loss and the norm before clipping (either may be NULL). 0 or -1. */
int qkv_training_step(qkv_training *t, double *loss, double *grad_norm);

/* The learning rate of step `step` (from 0) under the run's schedule. */
double qkv_training_lr(const qkv_training *t, int64_t step);

/* Evaluation `which` of the model: with eval_loss, the mean of its losses
 * over the batches qkv_training_eval_more allows (gradients off, dropout
 * off, the arena reset before each); else the model's eval (gradients off,
 * the arena reset before and after). NAN with a message when the model has
 * neither or it fails. */
double qkv_training_eval(qkv_training *t, int which);

/* Whether an evaluation of t that has done `done` batches does another:
 * the first always, then while done < cfg.eval_iters and eval_stop (if
 * set) does not say stop. Records done in t->eval_done. False with a
 * message when t is NULL or done is negative. */
bool qkv_training_eval_more(qkv_training *t, int done);

/* Make the run iters steps long (from the steps done, at least 1, to
 * QKV_TRAIN_ITERS_MAX): the cosine then ends at iters. A time-budgeted run
 * moves it as its speed becomes known; it is saved in the checkpoint. 0 or -1. */
int qkv_training_set_iters(qkv_training *t, int64_t iters);

/* Make the run's optimizer one of this kind (QKV_OPTIM_MUON, ...): the
 * kind's defaults (qkv_muon_defaults, ...) with the run's weight decay, its
 * moments zero; groups set on the old one are gone. Only before the first
 * step; a resumed run takes the kind it was saved with. 0, or -1 (an unknown
 * kind, a run past step 0, no memory). */
int qkv_training_set_optim(qkv_training *t, qkv_optim_kind kind);

/* Save the whole run (parameters, optimizer moments, step, every stream, the
 * model's config blob followed by the run's settings) to path, atomically. It
 * refuses what loading would: a parameter that is NaN or infinite (a
 * diverged run), a setting out of its range, a step past cfg.iters, a
 * vocabulary that is not 0..256 strictly ascending bytes; the message names
 * it, and the file at path is left as it was. 0 or -1. */
int qkv_training_save(const qkv_training *t, const char *path);

/* The run's settings stored in ck's config blob after the model's first
 * model_bytes bytes, into tc. -1 with a message when the blob has no run
 * settings (a model saved without its run cannot resume), when a setting is
 * out of its range (a 0 among them: a saved run holds the values it used),
 * or when ck's step is past the saved iters. */
int qkv_training_config_load(qkv_train_config *tc, const qkv_checkpoint *ck, size_t model_bytes);

/* The most bytes of a program's note in a saved run. */
#define QKV_TRAINING_NOTE_MAX 32

/* Keep a note of the program's own with run t (len 0..QKV_TRAINING_NOTE_MAX
 * bytes: settings that change the run but are not the library's, as qkv
 * train's --eval-every), saved by every qkv_training_save from now on and
 * given back by qkv_training_note after qkv_training_load or _resume. 0 or -1. */
int qkv_training_set_note(qkv_training *t, const void *note, int len);

/* Run t's note: its length (0: none) and its bytes at *note; -1 for bad arguments. */
int qkv_training_note(const qkv_training *t, const uint8_t **note);

/* Load the parameters, moments, step and streams of ck into a run made for
 * the model and settings ck describes. Streams saved with names go to the
 * model's stream of that name (wherever it is in rngs); a saved name the
 * model lacks, or named streams against unnamed ones, is refused naming
 * it. When ck's moments are another optimizer kind's than t->opt's, t->opt
 * becomes one of that kind (as qkv_training_set_optim makes it). Nothing
 * changes on -1. */
int qkv_training_load(qkv_training *t, const qkv_checkpoint *ck);

/* Rebuilds the model a checkpoint holds: from ck's config blob (the model's
 * own config first, then the run's settings) and its vocabulary, makes the
 * model and fills plug as for qkv_training_new, plug->config being the
 * same bytes the checkpoint starts with. 0, or -1 with a message. */
typedef int (*qkv_rebuild_fn)(void *ud, const qkv_checkpoint *ck, qkv_training_model *plug);

/* The run saved at path (of model kind `kind`), resumed in one call: open
 * it, rebuild the model, then qkv_training_resume(plug, path, 0). NULL with
 * a message on failure; a model rebuild made is then the caller's to free
 * (ud is the place to find it), unless rebuild gave it a release callback,
 * which qkv_training_resume has then called. */
qkv_training *qkv_training_resume_rebuild(const char *path, const char *kind,
                                          qkv_rebuild_fn rebuild, void *ud);

/* ---- The light run: one process, a loss that draws its own batch ----
 *
 * The common case in fewer lines: the run above, filled in for you from a
 * qkv_light_model (one implementation: a light run is a qkv_training, and
 * every qkv_training_* call works on it). Its loss is one callback with a
 * context pointer, called with ctx->train true for a training batch and false
 * for a held-out one; the streams and their names are copied, so they may be
 * locals; the config blob is checked on resume byte by byte:
 *
 *     qkv_light_model lm = {.kind = "line", .params = m.params, .loss = line_loss,
 *                           .ud = &m, .config = &sizes, .config_len = sizeof sizes,
 *                           .rngs = {&m.batches}, .rng_names = {"batches"}};
 *     qkv_training *t = qkv_light_new(&lm, &tc);          // or qkv_light_resume(&lm, path)
 *     while (t && t->step < t->cfg.iters && qkv_training_step(t, &loss, NULL) == 0) {}
 *     double val = qkv_training_eval(t, 0);                 // the loss, ctx->train false
 *
 * A light run saves a mark and the model's config_len (8 bytes) before its
 * blob, so a resume can say which differs. It computes whole batches: for data
 * parallelism use qkv_training_model. */

/* A light run's batch: the mean loss of a batch the callback draws itself
 * (from its own streams), built in ctx->arena; ctx->train says a training
 * batch (dropout on, ctx->rng the dropout stream) or a held-out one (no
 * gradients, no dropout, ctx->rng NULL). NULL on failure, with a message. */
typedef qkv_tensor *(*qkv_light_loss_fn)(void *ud, const qkv_ctx *ctx);

/* What a light run is made of. Only kind, params and loss are required. The
 * run copies all of it; ud, params and the streams must outlive the run. */
typedef struct qkv_light_model {
    const char *kind;                 /* the checkpoint's model kind, 1..QKV_CKPT_KIND_MAX bytes */
    qkv_params *params;               /* what the optimizer trains */
    qkv_light_loss_fn loss;           /* training batches, and evaluation when eval is NULL */
    void *ud;                         /* handed to loss and eval */
    qkv_light_loss_fn eval;           /* evaluation's held-out batch, or NULL (loss with
                                         ctx->train false) */
    const void *config;               /* the model's config (its sizes), or NULL */
    size_t config_len;                /* its length in bytes (at most 65536) */
    const qkv_tokenizer *vocab;       /* saved with the run, or NULL */
    qkv_rng *rngs[QKV_TRAINING_MAX_RNGS]; /* the streams the callbacks draw from, saved with
                                             the run and seeded from its seed; the first
                                             NULL ends the list */
    const char *rng_names[QKV_TRAINING_MAX_RNGS]; /* a name for each stream (matched by name
                                                     on resume), or all NULL */
} qkv_light_model;

/* The most bytes of a light model's config. */
#define QKV_LIGHT_CONFIG_MAX 65536

/* A new light run of m with settings tc, as qkv_training_new. Evaluation 0
 * (qkv_training_eval(t, 0)) is the mean of cfg.eval_iters held-out batches.
 * NULL with a message naming the field at fault. */
qkv_training *qkv_light_new(const qkv_light_model *m, const qkv_train_config *tc);

/* The light run saved at path, continued with m bit-exactly, as
 * qkv_training_resume (the settings from the file). m's config must be the
 * saved one: else NULL with a message saying where they differ ("config byte
 * 2: 32 in the checkpoint, 64 here", or their lengths). NULL with a message
 * on any failure. */
qkv_training *qkv_light_resume(const qkv_light_model *m, const char *path);

/* ---- The exact evaluation: a model's loss over a whole split ---- */

/* What an evaluation over a whole split found. */
typedef struct qkv_split_loss {
    double loss;     /* the mean of the windows' mean losses */
    double se;       /* its standard error: the windows' sample standard deviation / sqrt(windows)
                        (NAN for one window) */
    int64_t windows; /* windows read */
    int64_t tokens;  /* tokens predicted: windows x T */
} qkv_split_loss;

/* The mean next-token loss of one window: x its T input ids, y = x + 1 the
 * targets, one row, built in ctx->arena (gradients and dropout are off).
 * NULL on failure, with a message. */
typedef qkv_tensor *(*qkv_window_loss_fn)(void *ud, const qkv_ctx *ctx, const int32_t *x,
                                          const int32_t *y, int T);

/* Windows qkv_eval_split reads of split with windows of T tokens: the split
 * cut from its start into windows of T inputs (the targets one token
 * further), at most max_tokens / T of them when max_tokens > 0; 0 when the
 * split has fewer than T + 1 tokens. -1 with a message for bad arguments. */
int64_t qkv_split_windows(const qkv_corpus *c, qkv_split split, int T, int64_t max_tokens);

/* The mean loss of a model over the windows of split (qkv_split_windows),
 * one window at a time through loss(ud, ...) with gradients off, each
 * window's activations in arena (reset after each; NULL: an arena of its
 * own), into *out with its standard error. 0, or -1 with a message (no
 * window, a window's loss failed or is NaN, naming the window). */
int qkv_eval_split(qkv_window_loss_fn loss, void *ud, const qkv_corpus *c, qkv_split split, int T,
                   int64_t max_tokens, qkv_arena *arena, qkv_split_loss *out);

QKV_END_DECLS
#endif
