/* exp, log, tanh, sigmoid, softplus, sqrt and abs (see qkv/ops.h): one value in, one value out,
 * with libm's functions (<tgmath.h> picks expf or exp by qkv_real), so each
 * is as exact as C's own. */
#include <tgmath.h>

#include "graph.h"

typedef enum { F_EXP, F_LOG, F_TANH, F_SIGMOID, F_SOFTPLUS, F_SQRT, F_ABS } func;

/* σ(x) = 1 / (1 + e^-x), written so that no e^ overflows: for x < 0 it is
 * e^x / (1 + e^x), which goes smoothly to 0. */
static inline qkv_real sigmoid(qkv_real x)
{
    qkv_real e = exp(-fabs(x));
    return x >= 0 ? 1 / (1 + e) : e / (1 + e);
}

/* f(x). softplus ln(1 + e^x) is max(x, 0) + ln(1 + e^-|x|): no e^ overflows,
 * and for large |x| it is x or e^x to the last bit. */
static inline qkv_real value(func f, qkv_real x)
{
    switch (f) {
    case F_EXP: return exp(x);
    case F_LOG: return log(x);
    case F_TANH: return tanh(x);
    case F_SIGMOID: return sigmoid(x);
    case F_SOFTPLUS: return (x > 0 ? x : 0) + log1p(exp(-fabs(x)));
    case F_SQRT: return sqrt(x);
    case F_ABS: return fabs(x);
    }
    return 0;
}

/* f'(x), from the result y = f(x) where that is cheaper: e^x' = y,
 * ln' x = 1/x, tanh' x = 1 - y², s' = s·(1 - s), softplus' = σ(x),
 * √' x = 1/(2y), |x|' = the sign of x, and 0 at 0 (the subgradient PyTorch takes). */
static inline qkv_real slope(func f, qkv_real x, qkv_real y)
{
    switch (f) {
    case F_EXP: return y;
    case F_LOG: return 1 / x;
    case F_TANH: return 1 - y * y;
    case F_SIGMOID: return y * (1 - y);
    case F_SOFTPLUS: return sigmoid(x);
    case F_SQRT: return 1 / (2 * y);
    case F_ABS: return x > 0 ? 1 : x < 0 ? -1 : 0;
    }
    return 0;
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
static void softplus_forward(qkv_real *y, const qkv_real *x, size_t n)
{
    forward(F_SOFTPLUS, y, x, n);
}
static void sqrt_forward(qkv_real *y, const qkv_real *x, size_t n) { forward(F_SQRT, y, x, n); }
static void abs_forward(qkv_real *y, const qkv_real *x, size_t n) { forward(F_ABS, y, x, n); }
static void exp_backward(qkv_node *n) { backward(F_EXP, n); }
static void log_backward(qkv_node *n) { backward(F_LOG, n); }
static void tanh_backward(qkv_node *n) { backward(F_TANH, n); }
static void sigmoid_backward(qkv_node *n) { backward(F_SIGMOID, n); }
static void softplus_backward(qkv_node *n) { backward(F_SOFTPLUS, n); }
static void sqrt_backward(qkv_node *n) { backward(F_SQRT, n); }
static void abs_backward(qkv_node *n) { backward(F_ABS, n); }

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

qkv_tensor *qkv_softplus(qkv_arena *a, qkv_tensor *x)
{
    return qkv__unary(a, x, "qkv_softplus", softplus_forward, softplus_backward);
}

qkv_tensor *qkv_sqrt(qkv_arena *a, qkv_tensor *x)
{
    return qkv__unary(a, x, "qkv_sqrt", sqrt_forward, sqrt_backward);
}

qkv_tensor *qkv_abs(qkv_arena *a, qkv_tensor *x)
{
    return qkv__unary(a, x, "qkv_abs", abs_forward, abs_backward);
}
