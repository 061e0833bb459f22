/* The end of a training step (see train_step.h). */
#include "train_step.h"

#include <math.h>

int qkv__finish_step(qkv_optim *o, qkv_params *p, qkv_arena *arena, qkv_tensor *loss,
                     double grad_clip, double lr, int64_t step, double *loss_out,
                     double *norm_out)
{
    int rc = loss ? qkv_backward(arena, loss) : -1;
    double value = loss ? loss->data[0] : NAN;
    qkv_arena_reset(arena); /* the graph is used up; the gradients live in p */
    double norm;
    if (rc < 0 || qkv_optim_apply(o, p, value, grad_clip, lr, step, &norm) < 0)
        return -1;
    if (loss_out)
        *loss_out = value;
    if (norm_out)
        *norm_out = norm;
    return 0;
}
