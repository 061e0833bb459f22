/* Internal to models/: what the GPT and seq2seq trainers share. Not installed. */
#ifndef QKV_TRAIN_STEP_H
#define QKV_TRAIN_STEP_H

#include "qkv/optim.h"
#include "qkv/tensor.h"
#include "qkv/trainer.h"

/* 0 when the run config tc is usable (iters, batch_size, eval_iters >= 1,
 * warmup >= 0, lr > 0, min_lr, weight_decay, grad_clip >= 0, all finite,
 * wsd_decay in [0, 1]);
 * else -1 with "<who>: ..." naming the first bad field. */
int qkv__check_train_config(const char *who, const qkv_train_config *tc);

/* The learning-rate schedule and the AdamW settings a run config asks for. */
void qkv__train_plan(const qkv_train_config *tc, qkv_lr_schedule *sched, qkv_optim_config *oc);

/* Backpropagate from loss (a graph built in arena over p's parameters, whose
 * gradients were zeroed before it), free the graph (reset arena), then
 * qkv_optim_apply with grad_clip and lr as step `step`. The loss value and the
 * gradient norm go to loss_out and norm_out (either may be NULL) on success.
 * A NULL loss (the forward failed) returns -1 with its message. 0 or -1. */
int qkv__finish_step(qkv_optim *o, qkv_params *p, qkv_arena *arena, qkv_tensor *loss,
                     double grad_clip, double lr, int64_t step, double *loss_out,
                     double *norm_out);

#endif
