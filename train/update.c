/* The end of every training step: check, clip, update (see qkv/optim.h). */
#include <math.h>

#include "qkv/optim.h"

#include "../tensor/check.h"

int qkv_optim_apply(qkv_optim *o, qkv_params *p, double loss, double grad_clip, double lr,
                    int64_t step, double *norm_out)
{
    const char *fn = "qkv_optim_apply";
    if (qkv__null(fn, "o", o) || qkv__null(fn, "p", p))
        return -1;
    if (!(lr >= 0 && isfinite(lr)))
        return qkv_set_error("%s: lr %g must be a finite number >= 0", fn, lr);
    if (!(grad_clip >= 0)) /* NaN too; +inf is "no clipping" */
        return qkv_set_error("%s: grad_clip %g must be >= 0 (0 = no clipping)", fn, grad_clip);
    /* A non-finite loss or gradient would poison every weight it touched:
     * stop here, while the weights are still the last good ones. */
    if (!isfinite(loss))
        return qkv_set_error("step %lld: the loss is %g; stopping before it reaches the weights",
                             (long long)step, loss);
    double norm = qkv_clip_grad_norm(p, grad_clip > 0 ? grad_clip : INFINITY);
    if (!isfinite(norm))
        return qkv_set_error("step %lld: the gradient norm is %g; stopping before it reaches the "
                             "weights", (long long)step, norm);
    if (qkv_optim_step(o, p, lr) < 0)
        return -1;
    if (norm_out)
        *norm_out = norm;
    return 0;
}
