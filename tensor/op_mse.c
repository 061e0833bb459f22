/* mse_loss: the mean squared error (see qkv/ops.h). */
#include "graph.h"

/* With d = pred - target and N values: dpred += dout · 2d/N, dtarget -= the same. */
static void mse_backward(qkv_node *n)
{
    qkv_tensor *p = n->in[0], *t = n->in[1];
    qkv_real k = n->out->grad[0] * 2 / (qkv_real)p->size;
    for (size_t i = 0; i < p->size; i++) {
        qkv_real d = p->data[i] - t->data[i];
        if (p->grad)
            p->grad[i] += k * d;
        if (t->grad)
            t->grad[i] -= k * d;
    }
}

qkv_tensor *qkv_mse_loss(qkv_arena *a, qkv_tensor *pred, qkv_tensor *target)
{
    const char *fn = "qkv_mse_loss";
    qkv_tensor *in[2] = {pred, target};
    if (qkv__check_inputs(fn, a, "pred target", 2, in) < 0)
        return NULL;
    if (!qkv_same_shape(pred, target))
        return qkv__shape_error(fn, "pred and target must have the same shape", pred, target);
    qkv_tensor *out = qkv_tensor_new(a, 1, (int[]){1});
    if (!out)
        return NULL;
    double s = 0;
    for (size_t i = 0; i < pred->size; i++) {
        double d = (double)pred->data[i] - target->data[i];
        s += d * d;
    }
    out->data[0] = (qkv_real)(s / (double)pred->size);
    qkv__record(a, out, fn, mse_backward, 2, in);
    return out;
}
