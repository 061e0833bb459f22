/* qkv/custom.h — your own op, with its own backward (like PyTorch's
 * torch.autograd.Function): a forward that fills the result from the inputs,
 * and a backward that adds each input's gradient from the result's. The node
 * it records is like any built-in op's: qkv_backward goes through it, no-grad
 * mode records nothing, and it lives in the arena until the next reset.
 *
 *     static int twice_forward(qkv_tensor *out, qkv_tensor *const *in, int n, void *user)
 *     {
 *         (void)n, (void)user;
 *         for (size_t i = 0; i < out->size; i++) out->data[i] = 2 * in[0]->data[i];
 *         return 0;
 *     }
 *     static void twice_backward(const qkv_tensor *out, const qkv_real *grad_out,
 *                                qkv_tensor *const *in, qkv_real *const *grad_in, int n, void *user)
 *     {
 *         (void)in, (void)n, (void)user;
 *         for (size_t i = 0; i < out->size; i++) grad_in[0][i] += 2 * grad_out[i];
 *     }
 *     static const qkv_custom_op twice = {"twice", twice_forward, twice_backward};
 *
 *     qkv_arena *a = qkv_arena_new(1 << 16);
 *     qkv_tensor *x = qkv_ones(a, QKV_SHAPE(3));
 *     qkv_set_requires_grad(x, true);
 *     qkv_tensor *y = qkv_custom(a, &twice, &x, 1, x->ndim, x->shape, NULL);
 *     qkv_backward(a, qkv_sum(a, y));                  // x->grad = {2, 2, 2}
 *     qkv_arena_free(&a);
 *
 * qkv_gradcheck (qkv/gradcheck.h) checks a backward against the forward.
 */
#ifndef QKV_CUSTOM_H
#define QKV_CUSTOM_H

#include "qkv/tensor.h"

QKV_BEGIN_DECLS

/* The most inputs one custom op takes. */
#define QKV_CUSTOM_MAX_INPUTS 16

typedef struct qkv_custom_op {
    /* Its name, in messages and the profile; must outlive the graph (a literal). */
    const char *name;
    /* Fill out->data (out->size values, uninitialised) from the inputs' data.
     * 0 on success; -1 after qkv_set_error on failure (qkv_custom returns NULL). */
    int (*forward)(qkv_tensor *out, qkv_tensor *const *inputs, int n_inputs, void *user);
    /* Add (+=, never =: the buffer may hold other ops' shares already)
     * d(loss)/d(inputs[i]) into grad_inputs[i] (inputs[i]->size values) from
     * grad_out = d(loss)/d(out) (out->size values). grad_inputs[i] is NULL
     * for an input that needs no gradient. out and the inputs still hold the
     * forward's values. */
    void (*backward)(const qkv_tensor *out, const qkv_real *grad_out, qkv_tensor *const *inputs,
                     qkv_real *const *grad_inputs, int n_inputs, void *user);
} qkv_custom_op;

/* Run op on n_inputs tensors (1..QKV_CUSTOM_MAX_INPUTS) into a new tensor of
 * the given shape from a, and record it for backward when grad mode is on and
 * an input requires grad. op is copied; user is handed to both callbacks as
 * is and must stay valid until the backward. NULL with a message on a bad
 * argument or a failed forward. */
qkv_tensor *qkv_custom(qkv_arena *a, const qkv_custom_op *op, qkv_tensor *const *inputs,
                       int n_inputs, int ndim, const int *shape, void *user);

QKV_END_DECLS
#endif
