/* Internal to models/: the end of a training step both trainers share. Not installed. */
#ifndef QKV_TRAIN_STEP_H
#define QKV_TRAIN_STEP_H

#include "qkv/optim.h"
#include "qkv/tensor.h"

/* Backpropagate from loss (a graph built in arena over p's parameters, whose
 * gradients were zeroed before it), free the graph (reset arena), then
 * qkv_optim_apply with grad_clip and lr as step `step`. The loss value and the
 * gradient norm go to loss_out and norm_out (either may be NULL) on success.
 * A NULL loss (the forward failed) returns -1 with its message. 0 or -1. */
int qkv__finish_step(qkv_optim *o, qkv_params *p, qkv_arena *arena, qkv_tensor *loss,
                     double grad_clip, double lr, int64_t step, double *loss_out,
                     double *norm_out);

#endif
