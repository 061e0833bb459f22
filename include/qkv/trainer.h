/* qkv/trainer.h — training the character GPT: steps, evaluation, checkpoints
 * that resume exactly.
 *
 *     qkv_corpus *corpus = qkv_corpus_load("input.txt", NULL);
 *     qkv_gpt_config mc = {.vocab_size = corpus->tok.size, .block_size = 64, .n_layer = 4,
 *                          .n_head = 4, .n_embd = 128};
 *     qkv_train_config tc = qkv_train_defaults();
 *     qkv_trainer *t = qkv_trainer_new(&mc, &tc, corpus);
 *     while (t->step < tc.iters) {
 *         double loss;
 *         if (qkv_trainer_step(t, &loss, NULL) < 0) break;
 *     }
 *     qkv_trainer_save(t, "run.ckpt");
 *     qkv_trainer_free(t);
 *
 * Everything a run draws at random comes from streams saved in the
 * checkpoint (dropout, the training batches, the evaluation batches), so
 * training N steps straight, or N/2, saving, resuming and N/2 more, gives
 * bit-identical parameters and losses at the same thread count.
 */
#ifndef QKV_TRAINER_H
#define QKV_TRAINER_H

#include "qkv/checkpoint.h"
#include "qkv/data.h"
#include "qkv/gpt.h"
#include "qkv/optim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct qkv_train_config {
    int iters;           /* optimizer steps in the whole run (the lr schedule ends here) */
    int batch_size;      /* B: sequences per step */
    double lr;           /* peak learning rate */
    double min_lr;       /* learning rate at the end of the decay */
    int warmup;          /* steps of linear warmup */
    double wsd_decay;    /* 0: cosine decay; in (0, 1]: warmup-stable-decay, the last
                            wsd_decay of the run decaying linearly (see qkv_lr_schedule) */
    double weight_decay; /* AdamW decay of weight matrices and embeddings */
    double grad_clip;    /* global gradient-norm limit (0 = none) */
    int eval_iters;      /* batches averaged per evaluation */
    uint64_t seed;       /* seeds the model's init, the batches and dropout */
} qkv_train_config;

/* nanoGPT's baby Shakespeare settings: 2000 iters, batch 12, lr 1e-3 → 1e-4,
 * warmup 100, weight decay 0.1, clip 1.0, 200 eval batches, seed 1337. */
qkv_train_config qkv_train_defaults(void);

typedef struct qkv_trainer {
    qkv_gpt *model;            /* the model being trained */
    qkv_train_config cfg;      /* the run's settings */
    qkv_optim *opt;            /* AdamW and its moments */
    qkv_lr_schedule sched;     /* warmup + cosine (or stable-decay) over cfg.iters */
    const qkv_corpus *corpus;  /* the text (the caller owns it) */
    qkv_sampler train;         /* training batches */
    qkv_sampler eval[2];       /* evaluation batches of the train and val splits */
    qkv_rng dropout_rng;       /* dropout masks */
    qkv_arena *arena;          /* everything one step creates */
    int32_t *x, *y;            /* one batch of inputs and targets (B·T each) */
    int64_t step;              /* optimizer steps done */
    qkv_corpus *own_corpus;    /* the corpus qkv_trainer_resume loaded, freed with the trainer */
} qkv_trainer;

/* A trainer for a new model of config mc on corpus (whose vocabulary size
 * must equal mc->vocab_size); NULL with a message on failure. */
qkv_trainer *qkv_trainer_new(const qkv_gpt_config *mc, const qkv_train_config *tc,
                             const qkv_corpus *corpus);

/* Free the trainer and its model (NULL is fine); the corpus stays. */
void qkv_trainer_free(qkv_trainer *t);

/* One optimizer step on a fresh batch: forward, backward, clip, AdamW.
 * Writes the batch loss and the gradient norm before clipping (either may
 * be NULL). A NaN or infinite loss or norm is an error naming the step, and
 * the parameters are left as they were before it. 0 or -1. */
int qkv_trainer_step(qkv_trainer *t, double *loss, double *grad_norm);

/* The mean loss over cfg.eval_iters batches of a split, in no-grad mode,
 * without dropout; NAN with a message on failure. */
double qkv_trainer_eval(qkv_trainer *t, qkv_split split);

/* Save the whole run (model, AdamW moments, step, every random stream) to
 * path, atomically. 0 or -1; a parameter that is NaN or infinite (a diverged
 * run) is an error naming it, and the file at path is left as it was. */
int qkv_trainer_save(const qkv_trainer *t, const char *path);

/* A trainer continuing the run saved at path, on corpus_path's text (encoded
 * with the checkpoint's vocabulary). The corpus it loads is freed with the
 * trainer. When iters > 0 it replaces the saved run length (the schedule
 * then ends there). NULL with a message on failure. */
qkv_trainer *qkv_trainer_resume(const char *path, const char *corpus_path, int iters);

/* The mean loss of m over iters batches from s (no-grad, no dropout), using
 * arena for the activations and x, y (B·T each) for the batch; NAN with a
 * message on failure. */
double qkv_gpt_mean_loss(const qkv_gpt *m, qkv_sampler *s, int iters, qkv_arena *arena,
                         int32_t *x, int32_t *y);

/* The model saved at path, for sampling or evaluation, and its vocabulary
 * into vocab. NULL with a message on failure. */
qkv_gpt *qkv_gpt_load(const char *path, qkv_tokenizer *vocab);

#ifdef __cplusplus
}
#endif
#endif
