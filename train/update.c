/* The end of every training step: check, clip, update (see qkv/optim.h). */
#include <math.h>

#include "qkv/optim.h"

/* x for a message: "inf", "-inf" or "NaN (not a number)", never printf's "-nan". */
static const char *non_finite(double x)
{
    return isnan(x) ? "NaN (not a number)" : x > 0 ? "inf" : "-inf";
}

int qkv_optim_apply(qkv_optim *o, qkv_params *p, double loss, double grad_clip, double lr,
                    int64_t step, double *norm_out)
{
    /* A non-finite loss or gradient would poison every weight it touched:
     * stop here, while the weights are still the last good ones. */
    if (!isfinite(loss))
        return qkv_set_error("step %lld: the loss is %s; stopping before it reaches the weights",
                             (long long)step, non_finite(loss));
    double norm = qkv_clip_grad_norm(p, grad_clip > 0 ? grad_clip : INFINITY);
    if (!isfinite(norm))
        return qkv_set_error("step %lld: the gradient norm is %s; stopping before it reaches the "
                             "weights", (long long)step, non_finite(norm));
    if (qkv_optim_step(o, p, lr) < 0)
        return -1;
    if (norm_out)
        *norm_out = norm;
    return 0;
}
