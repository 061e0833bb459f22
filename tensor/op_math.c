/* exp, log, tanh and sigmoid (see qkv/ops.h): one value in, one value out,
 * with libm's functions (<tgmath.h> picks expf or exp by qkv_real), so each
 * is as exact as C's own. */
#include <tgmath.h>

#include "graph.h"

typedef enum { F_EXP, F_LOG, F_TANH, F_SIGMOID } func;

/* f(x). The sigmoid is written so that no e^ overflows: for x < 0 it is
 * e^x / (1 + e^x), which goes smoothly to 0. */
static inline qkv_real value(func f, qkv_real x)
{
    if (f == F_EXP)
        return exp(x);
    if (f == F_LOG)
        return log(x);
    if (f == F_TANH)
        return tanh(x);
    qkv_real e = exp(-fabs(x));
    return x >= 0 ? 1 / (1 + e) : e / (1 + e);
}

/* f'(x), from the result y = f(x) where that is cheaper: e^x' = y,
 * ln' x = 1/x, tanh' x = 1 - y², s' = s·(1 - s). */
static inline qkv_real slope(func f, qkv_real x, qkv_real y)
{
    return f == F_EXP ? y : f == F_LOG ? 1 / x : f == F_TANH ? 1 - y * y : y * (1 - y);
}

/* y = f(x) for n values. */
static inline void forward(func f, qkv_real *y, const qkv_real *x, size_t n)
{
#pragma omp parallel for schedule(static) if (n >= QKV__PAR_MIN)
    for (size_t i = 0; i < n; i++)
        y[i] = value(f, x[i]);
}

/* dx += dy · f'(x). */
static inline void backward(func f, qkv_node *n)
{
    const qkv_real *x = n->in[0]->data, *y = n->out->data, *dy = n->out->grad;
    qkv_real *dx = n->in[0]->grad;
#pragma omp parallel for schedule(static) if (n->out->size >= QKV__PAR_MIN)
    for (size_t i = 0; i < n->out->size; i++)
        dx[i] += dy[i] * slope(f, x[i], y[i]);
}

static void exp_forward(qkv_real *y, const qkv_real *x, size_t n) { forward(F_EXP, y, x, n); }
static void log_forward(qkv_real *y, const qkv_real *x, size_t n) { forward(F_LOG, y, x, n); }
static void tanh_forward(qkv_real *y, const qkv_real *x, size_t n) { forward(F_TANH, y, x, n); }
static void sigmoid_forward(qkv_real *y, const qkv_real *x, size_t n) { forward(F_SIGMOID, y, x, n); }
static void exp_backward(qkv_node *n) { backward(F_EXP, n); }
static void log_backward(qkv_node *n) { backward(F_LOG, n); }
static void tanh_backward(qkv_node *n) { backward(F_TANH, n); }
static void sigmoid_backward(qkv_node *n) { backward(F_SIGMOID, n); }

qkv_tensor *qkv_exp(qkv_arena *a, qkv_tensor *x)
{
    return qkv__unary(a, x, "qkv_exp", exp_forward, exp_backward);
}

qkv_tensor *qkv_log(qkv_arena *a, qkv_tensor *x)
{
    return qkv__unary(a, x, "qkv_log", log_forward, log_backward);
}

qkv_tensor *qkv_tanh(qkv_arena *a, qkv_tensor *x)
{
    return qkv__unary(a, x, "qkv_tanh", tanh_forward, tanh_backward);
}

qkv_tensor *qkv_sigmoid(qkv_arena *a, qkv_tensor *x)
{
    return qkv__unary(a, x, "qkv_sigmoid", sigmoid_forward, sigmoid_backward);
}
