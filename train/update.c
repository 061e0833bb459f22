/* The end of every training step: check, clip, update (see qkv/optim.h). */
#include <math.h>

#include "internal.h"
#include "qkv/optim.h"

int qkv_optim_apply(qkv_optim *o, qkv_params *p, double loss, double grad_clip, double lr,
                    int64_t step, double *norm_out)
{
    /* A non-finite loss or gradient would poison every weight it touched:
     * stop here, while the weights are still the last good ones. */
    if (!isfinite(loss))
        return qkv_set_error("step %lld: the loss is %g; stopping before it reaches the weights",
                             (long long)step, loss);
    if (!p->grad)
        return qkv_set_error("step %lld: the parameters have no gradients (not allocated)",
                             (long long)step);
    double norm = qkv__grad_norm(p);
    if (!isfinite(norm))
        return qkv_set_error("step %lld: the gradient norm is %g; stopping before it reaches the "
                             "weights", (long long)step, norm);
    /* Clipping scales the gradients as the update reads them: one pass over them, not two. */
    qkv_real k = qkv__clip_coef(norm, grad_clip > 0 ? grad_clip : INFINITY);
    if (qkv__optim_step_scaled(o, p, lr, k) < 0)
        return -1;
    if (norm_out)
        *norm_out = norm;
    return 0;
}
