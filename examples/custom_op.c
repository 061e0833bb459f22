/* An op of your own with its own backward, checked against its forward,
 * built against an installed qkv:
 *
 *     cc custom_op.c $(pkg-config --cflags --libs qkv) -lm -o custom_op
 *
 * swish(x) = x·σ(x), σ(x) = 1 / (1 + e^-x), as a qkv_custom_op: the forward
 * fills the result, the backward adds swish'(x) = σ(x)·(1 + x·(1 - σ(x)))
 * times the result's gradient into the input's. qkv_gradcheck compares that
 * backward with finite differences of the forward, then the op trains a
 * weight like any built-in op would. */
#include <math.h>
#include <qkv/qkv.h>
#include <stdio.h>

static double sigmoid(double x) { return 1 / (1 + exp(-x)); }

static int swish_forward(qkv_tensor *out, qkv_tensor *const *in, int n_inputs, void *user)
{
    (void)n_inputs, (void)user;
    for (size_t i = 0; i < out->size; i++) {
        double x = in[0]->data[i];
        out->data[i] = (qkv_real)(x * sigmoid(x));
    }
    return 0;
}

static void swish_backward(const qkv_tensor *out, const qkv_real *grad_out, qkv_tensor *const *in,
                           qkv_real *const *grad_in, int n_inputs, void *user)
{
    (void)n_inputs, (void)user;
    if (!grad_in[0]) /* the input wants no gradient */
        return;
    for (size_t i = 0; i < out->size; i++) {
        double x = in[0]->data[i], s = sigmoid(x);
        grad_in[0][i] += (qkv_real)(grad_out[i] * s * (1 + x * (1 - s))); /* add, never assign */
    }
}

static const qkv_custom_op swish_op = {"swish", swish_forward, swish_backward};

/* swish(x), shaped like x. */
static qkv_tensor *swish(qkv_arena *a, qkv_tensor *x)
{
    return x ? qkv_custom(a, &swish_op, &x, 1, x->ndim, x->shape, NULL) : NULL;
}

/* What qkv_gradcheck differentiates: here swish of the one input. */
static qkv_tensor *swish_of_input(qkv_arena *a, qkv_tensor **inputs, void *user)
{
    (void)user;
    return swish(a, inputs[0]);
}

int main(void)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(3, 4), 1, &rng);
    if (!x) {
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
        return 1;
    }
    qkv_set_requires_grad(x, true);
    double err = qkv_gradcheck(swish_of_input, &x, 1, NULL);
    printf("gradcheck of swish: worst relative error %.2g (tolerance %g)\n", err, QKV_GRADCHECK_TOL);
    if (!(err <= QKV_GRADCHECK_TOL)) {
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
        return 1;
    }

    /* Train w so that Σ swish(w ⊙ x) reaches 3: the custom node is part of
     * the graph qkv_backward walks. Each step builds its graph in the step
     * arena and resets it; w and the data live in a, which is never reset
     * (a tensor from before a reset would be refused). */
    qkv_arena *step = qkv_arena_new(1 << 16);
    qkv_tensor *w = qkv_ones(a, QKV_SHAPE(4));
    qkv_tensor *data = qkv_from_array(a, QKV_SHAPE(4), (qkv_real[]){0.5f, -1, 2, 1});
    qkv_tensor *target = qkv_from_array(a, QKV_SHAPE(1), (qkv_real[]){3});
    qkv_set_requires_grad(w, true);
    for (int it = 0; it <= 40; it++) {
        qkv_arena_reset(step);
        w->grad = NULL; /* a fresh gradient, from the step arena */
        qkv_tensor *y = qkv_sum(step, swish(step, qkv_mul(step, data, w)));
        qkv_tensor *d = qkv_sub(step, y, target), *loss = qkv_mul(step, d, d);
        if (!loss || qkv_backward(step, loss) < 0) {
            fprintf(stderr, "qkv: %s\n", qkv_last_error());
            return 1;
        }
        if (it % 10 == 0)
            printf("step %2d: Σ swish(w ⊙ x) %.4f, loss %.6f\n", it, (double)y->data[0],
                   (double)loss->data[0]);
        for (int i = 0; i < 4; i++)
            w->data[i] -= (qkv_real)0.02 * w->grad[i];
    }
    qkv_arena_free(&step);
    qkv_arena_free(&a);
    return 0;
}
