/* qkv/trainer.h — training the character GPT: the GPT's side of a
 * qkv_training run (qkv/training.h), on a corpus.
 *
 *     qkv_corpus *corpus = qkv_corpus_load("input.txt", NULL);
 *     qkv_gpt_config mc = {.vocab_size = corpus->tok.size, .block_size = 64, .n_layer = 4,
 *                          .n_head = 4, .n_embd = 128};
 *     qkv_train_config tc = qkv_train_defaults();
 *     qkv_trainer *t = qkv_trainer_new(&mc, &tc, corpus);
 *     while (t->run->step < t->run->cfg.iters) {
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

#include "qkv/data.h"
#include "qkv/gpt.h"
#include "qkv/training.h"

QKV_BEGIN_DECLS

/* The GPT's side of a qkv_training run: the model, its text and its batches. */
typedef struct qkv_trainer {
    qkv_gpt *model;            /* the model being trained */
    qkv_training *run;         /* settings, AdamW, schedule, step, dropout, arena */
    const qkv_corpus *corpus;  /* the text (the caller owns it) */
    qkv_batcher train;         /* training batches */
    qkv_batcher eval[2];       /* evaluation batches of the train and val splits */
    int32_t *x, *y;            /* one batch of inputs and targets (B·T each) */
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
 * without dropout (fewer batches when the run's eval_stop ends it:
 * t->run->eval_done says how many); NAN with a message on failure. */
double qkv_trainer_eval(qkv_trainer *t, qkv_split split);

/* Save the whole run (model, AdamW moments, step, every random stream) to
 * path, atomically. 0 or -1; a parameter that is NaN or infinite (a diverged
 * run) is an error naming it, and the file at path is left as it was. */
int qkv_trainer_save(const qkv_trainer *t, const char *path);

/* A trainer continuing the run saved at path, on corpus_path's text (encoded
 * with the checkpoint's vocabulary). The corpus it loads is freed with the
 * trainer. When iters > 0 it replaces the saved run length (the schedule
 * then ends there; below the saved step is an error naming that step). NULL
 * with a message on failure. */
qkv_trainer *qkv_trainer_resume(const char *path, const char *corpus_path, int iters);

/* The mean loss of m over iters batches from s (no-grad, no dropout), using
 * arena for the activations and x, y (B·T each) for the batch; NAN with a
 * message on failure. */
double qkv_gpt_mean_loss(const qkv_gpt *m, qkv_batcher *s, int iters, qkv_arena *arena,
                         int32_t *x, int32_t *y);

/* The model saved at path, for sampling or evaluation, and its vocabulary
 * into vocab. NULL with a message on failure. */
qkv_gpt *qkv_gpt_load(const char *path, qkv_tokenizer *vocab);

QKV_END_DECLS
#endif
