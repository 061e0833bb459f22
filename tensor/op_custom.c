/* Ops defined by the user's callbacks (see qkv/custom.h). */
#include <stdio.h>
#include <string.h>

#include "graph.h"
#include "qkv/custom.h"

/* What the node keeps: a copy of the op (the caller's struct may be a
 * temporary) and the user's pointer. */
typedef struct custom_ctx {
    qkv_custom_op op;
    void *user;
} custom_ctx;

/* Hand the callback the result's gradient and a gradient buffer per input
 * that wants one (NULL for the others). */
static void custom_backward(qkv_node *n)
{
    const custom_ctx *c = n->ctx;
    qkv_real *grad_in[QKV_CUSTOM_MAX_INPUTS];
    for (int i = 0; i < n->n_in; i++)
        grad_in[i] = n->in[i]->requires_grad ? n->in[i]->grad : NULL;
    c->op.backward(n->out, n->out->grad, n->in, grad_in, n->n_in, c->user);
}

/* Check op: its name and both callbacks. */
static int check_op(const char *fn, const qkv_custom_op *op)
{
    if (qkv__null(fn, "op", op) || qkv__null(fn, "op->name", op->name) ||
        qkv__null(fn, "op->forward", op->forward) || qkv__null(fn, "op->backward", op->backward))
        return -1;
    return 0;
}

qkv_tensor *qkv_custom(qkv_arena *a, const qkv_custom_op *op, qkv_tensor *const *inputs,
                       int n_inputs, int ndim, const int *shape, void *user)
{
    const char *fn = "qkv_custom";
    if (qkv__null(fn, "arena", a) || check_op(fn, op) < 0 || qkv__null(fn, "inputs", inputs))
        return NULL;
    if (n_inputs < 1 || n_inputs > QKV_CUSTOM_MAX_INPUTS) {
        qkv_set_error("%s: op %s: n_inputs is %d; a custom op takes 1 to %d inputs", fn, op->name,
                      n_inputs, QKV_CUSTOM_MAX_INPUTS);
        return NULL;
    }
    for (int i = 0; i < n_inputs; i++) {
        char arg[32];
        snprintf(arg, sizeof arg, "inputs[%d]", i);
        if (qkv__check_input(fn, arg, inputs[i]) < 0)
            return NULL;
    }
    qkv_tensor *out = qkv_tensor_new(a, ndim, shape);
    if (!out) {
        qkv__fail_in(fn);
        return NULL;
    }
    if (op->forward(out, inputs, n_inputs, user) != 0) {
        char cause[256];
        snprintf(cause, sizeof cause, "%s", qkv_last_error());
        qkv_set_error("%s: op %s: its forward failed: %s", fn, op->name,
                      cause[0] ? cause : "(it set no message)");
        return NULL;
    }
    qkv_node *n = qkv__record(a, out, op->name, custom_backward, n_inputs, inputs);
    if (n && !qkv__set_ctx(a, n, &(custom_ctx){*op, user}, sizeof(custom_ctx))) {
        qkv__fail_in(fn);
        return NULL;
    }
    return out;
}
