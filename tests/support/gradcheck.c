/* Finite-difference gradient checks (see gradcheck.h). */
#include "gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* L = Σ f(inputs) ⊙ R, with R drawn afresh from the same seed every call. */
static qkv_tensor *weighted_loss(qkv_arena *a, gradcheck_fn f, qkv_tensor **inputs, void *ud)
{
    qkv_tensor *out = f(a, inputs, ud);
    if (!out)
        return NULL;
    qkv_rng rng;
    qkv_rng_seed(&rng, 12345);
    qkv_tensor *r = qkv_randn(a, out->ndim, out->shape, 1, &rng);
    return qkv_sum(a, qkv_mul(a, out, r));
}

double gradcheck(gradcheck_fn f, int n_inputs, qkv_tensor **inputs, void *ud)
{
    const double h = 1e-5;
    if (n_inputs > 64)
        return INFINITY;
    qkv_arena *a = qkv_arena_new(1 << 20);
    if (!a)
        return INFINITY;
    /* Fresh zeroed gradients; parameters get their own buffers back at the end. */
    qkv_real *own_grad[64];
    for (int i = 0; i < n_inputs; i++) {
        own_grad[i] = inputs[i]->grad;
        if (inputs[i]->requires_grad)
            inputs[i]->grad = qkv_arena_calloc(a, inputs[i]->size * sizeof(qkv_real));
    }
    qkv_tensor *loss = weighted_loss(a, f, inputs, ud);
    if (!loss || qkv_backward(a, loss) < 0) {
        fprintf(stderr, "gradcheck: %s\n", qkv_last_error());
        for (int i = 0; i < n_inputs; i++)
            inputs[i]->grad = own_grad[i];
        qkv_arena_free(&a);
        return INFINITY;
    }
    /* Keep the analytic gradients; the arena is reused for the probes. */
    qkv_arena *keep = qkv_arena_new(1 << 16);
    qkv_real **analytic = qkv_arena_alloc(keep, (size_t)n_inputs * sizeof *analytic);
    for (int i = 0; i < n_inputs; i++)
        if (inputs[i]->requires_grad) {
            analytic[i] = qkv_arena_alloc(keep, inputs[i]->size * sizeof(qkv_real));
            memcpy(analytic[i], inputs[i]->grad, inputs[i]->size * sizeof(qkv_real));
        }
    bool was = qkv_set_grad_enabled(false);
    double worst = 0, worst_a = 0, worst_n = 0;
    int worst_i = -1;
    size_t worst_j = 0;
    for (int i = 0; i < n_inputs; i++) {
        qkv_tensor *x = inputs[i];
        if (!x->requires_grad)
            continue;
        for (size_t j = 0; j < x->size; j++) {
            qkv_real saved = x->data[j];
            x->data[j] = saved + (qkv_real)h;
            qkv_arena_reset(a);
            qkv_tensor *lp = weighted_loss(a, f, inputs, ud);
            double plus = lp ? lp->data[0] : NAN;
            x->data[j] = saved - (qkv_real)h;
            qkv_arena_reset(a);
            qkv_tensor *lm = weighted_loss(a, f, inputs, ud);
            double minus = lm ? lm->data[0] : NAN;
            x->data[j] = saved;
            double num = (plus - minus) / (2 * h), an = analytic[i][j];
            double den = fmax(fmax(fabs(an), fabs(num)), 1e-3);
            double err = fabs(an - num) / den;
            if (!(err <= worst)) { /* also catches NaN */
                worst = isnan(err) ? INFINITY : err;
                worst_i = i, worst_j = j, worst_a = an, worst_n = num;
            }
        }
    }
    qkv_set_grad_enabled(was);
    if (worst > GRADCHECK_TOL)
        fprintf(stderr, "gradcheck: input %d value %zu: analytic %.12g numeric %.12g (error %.3g)\n",
                worst_i, worst_j, worst_a, worst_n, worst);
    for (int i = 0; i < n_inputs; i++)
        inputs[i]->grad = own_grad[i];
    qkv_arena_free(&keep);
    qkv_arena_free(&a);
    return worst;
}
