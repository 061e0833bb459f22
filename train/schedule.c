/* Warmup + cosine learning rate, as nanoGPT's get_lr, or warmup-stable-decay
 * (see qkv/optim.h). */
#include "qkv/optim.h"

#include "tensor/check.h"

#include <math.h>

static const double PI = 3.14159265358979323846;

double qkv_lr_at(const qkv_lr_schedule *s, int64_t it)
{
    if (qkv__null("qkv_lr_at", "s", s))
        return NAN;
    if (it < 0) {
        qkv_set_error("qkv_lr_at: step %lld is negative; steps count from 0", (long long)it);
        return NAN;
    }
    double lr = s->lr != 0 ? s->lr : 1e-3; /* zero means the default */
    /* Warmup starts above 0 (it + 1) so that step 0 already learns something. */
    if (it < s->warmup_iters)
        return lr * (double)(it + 1) / (double)(s->warmup_iters + 1);
    if (s->decay_iters == 0) /* no decay asked for */
        return lr;
    /* With no room for a decay (decay_iters <= warmup_iters) go straight to the floor. */
    if (it > s->decay_iters || s->decay_iters <= s->warmup_iters)
        return s->min_lr;
    if (s->wsd_decay > 0) {
        /* Stable: the full rate for as long as possible, so the decay at the
         * end (which is where the loss drops) starts from well-trained weights. */
        int64_t start = s->decay_iters - (int64_t)llround(s->wsd_decay * (double)s->decay_iters);
        if (start < s->warmup_iters)
            start = s->warmup_iters;
        if (it < start)
            return lr;
        double ratio = (double)(it - start) / (double)(s->decay_iters - start);
        return lr + ratio * (s->min_lr - lr);
    }
    double ratio = (double)(it - s->warmup_iters) / (double)(s->decay_iters - s->warmup_iters);
    double coeff = 0.5 * (1.0 + cos(PI * ratio)); /* 1 → 0 */
    return s->min_lr + coeff * (lr - s->min_lr);
}
