/* What both trainers share: the run config check, the schedule and optimizer
 * settings it implies, and the end of a training step (see train_step.h). */
#include "train_step.h"

#include <math.h>

int qkv__check_train_config(const char *who, const qkv_train_config *tc)
{
    if (tc->iters < 1)
        return qkv_set_error("%s: iters %d must be >= 1", who, tc->iters);
    if (tc->batch_size < 1)
        return qkv_set_error("%s: batch_size %d must be >= 1", who, tc->batch_size);
    if (!(tc->lr > 0) || !(tc->min_lr >= 0) || !isfinite(tc->lr) || !isfinite(tc->min_lr))
        return qkv_set_error("%s: lr %g and min_lr %g must be > 0 and >= 0", who, tc->lr,
                             tc->min_lr);
    if (tc->warmup < 0)
        return qkv_set_error("%s: warmup %d must be >= 0", who, tc->warmup);
    if (!(tc->weight_decay >= 0) || !(tc->grad_clip >= 0))
        return qkv_set_error("%s: weight_decay %g and grad_clip %g must be >= 0", who,
                             tc->weight_decay, tc->grad_clip);
    if (!(tc->wsd_decay >= 0 && tc->wsd_decay <= 1))
        return qkv_set_error("%s: wsd_decay %g is not in [0, 1]", who, tc->wsd_decay);
    if (tc->eval_iters < 1)
        return qkv_set_error("%s: eval_iters %d must be >= 1", who, tc->eval_iters);
    return 0;
}

void qkv__train_plan(const qkv_train_config *tc, qkv_lr_schedule *sched, qkv_optim_config *oc)
{
    *sched = (qkv_lr_schedule){.lr = tc->lr, .min_lr = tc->min_lr, .warmup_iters = tc->warmup,
                               .decay_iters = tc->iters, .wsd_decay = tc->wsd_decay};
    *oc = qkv_adamw_defaults();
    oc->weight_decay = tc->weight_decay;
}

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
