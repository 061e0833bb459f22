/* Finite-difference gradient checks (see qkv/gradcheck.h). */
#include "qkv/gradcheck.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph.h"

/* The most inputs one check takes (the saved gradient pointers live on the stack). */
#define MAX_INPUTS 64

/* The weights R of L = Σ f(inputs) ⊙ R, shaped like out: drawn afresh from
 * the same seed every call, so every probe weighs the same. */
static qkv_tensor *weights(qkv_arena *a, const qkv_tensor *out)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 12345);
    return qkv_randn(a, out->ndim, out->shape, 1, &rng);
}

/* L as a graph, for the analytic gradient. */
static qkv_tensor *weighted_loss(qkv_arena *a, qkv_gradcheck_fn f, qkv_tensor **inputs, void *user)
{
    qkv_tensor *out = f(a, inputs, user);
    return out ? qkv_sum(a, qkv_mul(a, out, weights(a, out))) : NULL;
}

/* L summed in double into *l, for the differences: in the float build a
 * float sum's rounding, divided by the step, would swamp small gradients.
 * -1 when f fails (a NaN it returns is a value, not a failure). */
static int probe_loss(qkv_arena *a, qkv_gradcheck_fn f, qkv_tensor **inputs, void *user, double *l)
{
    qkv_tensor *out = f(a, inputs, user), *r = out ? weights(a, out) : NULL;
    if (!r)
        return -1;
    *l = 0;
    for (size_t i = 0; i < out->size; i++)
        *l += (double)out->data[i] * (double)r->data[i];
    return 0;
}

/* The inputs a check may take: at least one wanting a gradient, each of
 * those a leaf (a computed tensor's values are not free to move). */
static int check_inputs(const char *fn, qkv_tensor **inputs, int n_inputs)
{
    if (qkv__null(fn, "inputs", inputs))
        return -1;
    if (n_inputs < 1 || n_inputs > MAX_INPUTS)
        return qkv_set_error("%s: n_inputs is %d; a check takes 1 to %d inputs", fn, n_inputs,
                             MAX_INPUTS);
    bool any = false;
    for (int i = 0; i < n_inputs; i++) {
        char arg[32];
        snprintf(arg, sizeof arg, "inputs[%d]", i);
        if (qkv__check_input(fn, arg, inputs[i]) < 0)
            return -1;
        if (inputs[i]->requires_grad && inputs[i]->node)
            return qkv_set_error("%s: %s is the result of an op; only leaves (tensors made "
                                 "from values, parameters) can be moved to check a gradient",
                                 fn, arg);
        any |= inputs[i]->requires_grad;
    }
    if (!any)
        return qkv_set_error("%s: no input requires grad: nothing to check", fn);
    return 0;
}

/* What each input's gradient holds before the backward: a backward must add
 * to it (+=), so one that assigns (=) ends without it and fails the check,
 * even on an op checked alone, where it is the only contribution. A power of
 * two, so taking it off again leaves the gradient as exact as it can be. */
#define PREFILL 0.5

/* The analytic gradients of L into keep, one array per input that requires
 * grad (the inputs' own gradient buffers are left as they were). */
static int analytic_grads(qkv_arena *a, qkv_arena *keep, qkv_gradcheck_fn f, qkv_tensor **inputs,
                          int n_inputs, void *user, qkv_real **analytic)
{
    qkv_real *own_grad[MAX_INPUTS];
    int rc = 0;
    for (int i = 0; i < n_inputs; i++) {
        own_grad[i] = inputs[i]->grad;
        if (inputs[i]->requires_grad &&
            !(inputs[i]->grad = qkv_arena_alloc(a, inputs[i]->size * sizeof(qkv_real))))
            rc = -1;
        for (size_t j = 0; rc == 0 && inputs[i]->requires_grad && j < inputs[i]->size; j++)
            inputs[i]->grad[j] = PREFILL;
    }
    bool was = qkv_set_grad_enabled(true);
    qkv_tensor *loss = rc ? NULL : weighted_loss(a, f, inputs, user);
    if (!loss || qkv_backward(a, loss) < 0)
        rc = -1;
    qkv_set_grad_enabled(was);
    for (int i = 0; i < n_inputs && rc == 0; i++)
        if (inputs[i]->requires_grad) {
            size_t bytes = inputs[i]->size * sizeof(qkv_real);
            if ((analytic[i] = qkv_arena_alloc(keep, bytes)))
                for (size_t j = 0; j < inputs[i]->size; j++)
                    analytic[i][j] = inputs[i]->grad[j] - (qkv_real)PREFILL;
            else
                rc = -1;
        }
    /* Backwards: a tensor given twice got its second buffer over its first,
     * and must end with the one it came in with, not the first buffer. */
    for (int i = n_inputs - 1; i >= 0; i--)
        inputs[i]->grad = own_grad[i];
    return rc;
}

/* L with value j of x moved to v, in no-grad mode, into *l; -1 when f fails. */
static int loss_at(qkv_arena *a, qkv_gradcheck_fn f, qkv_tensor **inputs, void *user,
                   qkv_tensor *x, size_t j, double v, double *l)
{
    qkv_real saved = x->data[j];
    x->data[j] = (qkv_real)v;
    qkv_arena_reset(a);
    int rc = probe_loss(a, f, inputs, user, l);
    x->data[j] = saved;
    return rc;
}

double qkv_gradcheck(qkv_gradcheck_fn f, qkv_tensor **inputs, int n_inputs, void *user)
{
    const char *fn = "qkv_gradcheck";
    const double h = QKV_GRADCHECK_STEP;
    if (qkv__null(fn, "f", f) || check_inputs(fn, inputs, n_inputs) < 0)
        return NAN;
    qkv_arena *a = qkv_arena_new(1 << 20), *keep = qkv_arena_new(1 << 16);
    qkv_real **analytic = keep ? qkv_arena_calloc(keep, (size_t)n_inputs * sizeof *analytic) : NULL;
    if (!a || !analytic || analytic_grads(a, keep, f, inputs, n_inputs, user, analytic) < 0) {
        qkv__fail_in(fn);
        qkv_arena_free(&keep);
        qkv_arena_free(&a);
        return NAN;
    }
    bool was = qkv_set_grad_enabled(false);
    double worst = 0, worst_a = 0, worst_n = 0;
    int worst_i = -1, rc = 0;
    size_t worst_j = 0;
    for (int i = 0; i < n_inputs && rc == 0; i++) {
        qkv_tensor *x = inputs[i];
        for (size_t j = 0; analytic[i] && j < x->size && rc == 0; j++) {
            double v = (double)x->data[j], plus, minus;
            /* f failing only with gradients off is a failure of f, not an infinite error. */
            if (loss_at(a, f, inputs, user, x, j, v + h, &plus) < 0 ||
                loss_at(a, f, inputs, user, x, j, v - h, &minus) < 0) {
                rc = qkv__error_prefix("%s: f failed with gradients off (inputs[%d] value %zu "
                                       "moved)", fn, i, j);
                continue;
            }
            double num = (plus - minus) / (2 * h), an = (double)analytic[i][j];
            double err = fabs(an - num) / fmax(fmax(fabs(an), fabs(num)), 1e-3);
            if (!(err <= worst)) { /* also catches NaN */
                worst = isnan(err) ? INFINITY : err;
                worst_i = i, worst_j = j, worst_a = an, worst_n = num;
            }
        }
    }
    qkv_set_grad_enabled(was);
    if (rc < 0)
        worst = NAN;
    else if (worst > QKV_GRADCHECK_TOL)
        qkv_set_error("%s: inputs[%d] value %zu: analytic %.12g numeric %.12g (relative error "
                      "%.3g, tolerance %g)",
                      fn, worst_i, worst_j, worst_a, worst_n, worst, QKV_GRADCHECK_TOL);
    qkv_arena_free(&keep);
    qkv_arena_free(&a);
    return worst;
}
