/* relu, relu², gelu and dropout (see qkv/ops.h). */
#include "graph.h"
#include "kernels/vecmath.h"

/* ---- relu and gelu: one value in, one value out ---- */

/* y = max(x, 0) for n values. */
static void relu_forward(qkv_real *y, const qkv_real *x, size_t n)
{
#pragma omp parallel for schedule(static) if (n >= QKV__PAR_MIN)
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0 ? x[i] : 0;
}

/* dx += dy where x > 0: the kink at exactly 0 passes no gradient. */
static void relu_backward_kernel(qkv_real *dx, const qkv_real *dy, const qkv_real *x, size_t n)
{
#pragma omp parallel for schedule(static) if (n >= QKV__PAR_MIN)
    for (size_t i = 0; i < n; i++)
        dx[i] += x[i] > 0 ? dy[i] : 0;
}

/* y = max(x, 0)² for n values. */
static void relu2_forward(qkv_real *y, const qkv_real *x, size_t n)
{
#pragma omp parallel for simd schedule(static) if (n >= QKV__PAR_MIN)
    for (size_t i = 0; i < n; i++)
        y[i] = x[i] > 0 ? x[i] * x[i] : 0;
}

/* dx += dy · 2·max(x, 0): smooth at 0, where both sides' slope is 0. */
static void relu2_backward_kernel(qkv_real *dx, const qkv_real *dy, const qkv_real *x, size_t n)
{
#pragma omp parallel for simd schedule(static) if (n >= QKV__PAR_MIN)
    for (size_t i = 0; i < n; i++)
        dx[i] += x[i] > 0 ? 2 * x[i] * dy[i] : 0;
}

static const qkv_real GELU_K = (qkv_real)0.7978845608028654; /* sqrt(2/pi) */
static const qkv_real GELU_C = (qkv_real)0.044715;

/* Values per task of the GELU loops: big enough to amortise a task, small
 * enough to share out. */
enum { GELU_CHUNK = 4096 };

/* y = 0.5·x·(1 + tanh(k·(x + c·x³))) for n values. */
QKV__CLONES static void gelu_forward_chunk(qkv_real *y, const qkv_real *x, size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++) {
        qkv_real v = x[i];
        y[i] = (qkv_real)0.5 * v * (1 + qkv__tanh(GELU_K * (v + GELU_C * v * v * v)));
    }
}

/* gelu'(v) with t = tanh(u), u = k·(v + c·v³):
 * gelu'(v) = 0.5·(1 + t) + 0.5·v·(1 - t²)·k·(1 + 3c·v²). */
static inline qkv_real gelu_slope(qkv_real v)
{
    qkv_real t = qkv__tanh(GELU_K * (v + GELU_C * v * v * v));
    qkv_real du = GELU_K * (1 + 3 * GELU_C * v * v);
    return (qkv_real)0.5 * (1 + t) + (qkv_real)0.5 * v * (1 - t * t) * du;
}

/* dx += dy · gelu'(x), or dx = dy · gelu'(x) when assigning. */
QKV__CLONES static void gelu_backward_chunk(qkv_real *dx, const qkv_real *dy, const qkv_real *x,
                                            size_t n, bool assign)
{
    if (assign) {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            dx[i] = dy[i] * gelu_slope(x[i]);
    } else {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            dx[i] += dy[i] * gelu_slope(x[i]);
    }
}

static void gelu_forward(qkv_real *y, const qkv_real *x, size_t n)
{
#pragma omp parallel for schedule(static) if (n >= QKV__PAR_MIN)
    for (size_t lo = 0; lo < n; lo += GELU_CHUNK)
        gelu_forward_chunk(y + lo, x + lo, n - lo < GELU_CHUNK ? n - lo : GELU_CHUNK);
}

static void gelu_backward_kernel(qkv_real *dx, const qkv_real *dy, const qkv_real *x, size_t n,
                                 bool assign)
{
#pragma omp parallel for schedule(static) if (n >= QKV__PAR_MIN)
    for (size_t lo = 0; lo < n; lo += GELU_CHUNK)
        gelu_backward_chunk(dx + lo, dy + lo, x + lo, n - lo < GELU_CHUNK ? n - lo : GELU_CHUNK,
                            assign);
}

static void relu_backward(qkv_node *n)
{
    qkv_tensor *x = n->in[0];
    relu_backward_kernel(x->grad, n->out->grad, x->data, x->size);
}

static void relu2_backward(qkv_node *n)
{
    qkv_tensor *x = n->in[0];
    relu2_backward_kernel(x->grad, n->out->grad, x->data, x->size);
}

static void gelu_backward(qkv_node *n)
{
    qkv_tensor *x = n->in[0];
    gelu_backward_kernel(x->grad, n->out->grad, x->data, x->size, qkv__fresh(n, 0));
}

typedef void (*unary_forward_fn)(qkv_real *y, const qkv_real *x, size_t n);

/* The op around a one-in, one-out kernel pair. */
static qkv_tensor *unary(qkv_arena *a, qkv_tensor *x, const char *op, unary_forward_fn forward,
                         qkv__backward_fn backward)
{
    if (qkv__check_inputs(op, a, "x", 1, &x) < 0)
        return NULL;
    qkv_tensor *y = qkv__like(a, x);
    if (!y)
        return NULL;
    forward(y->data, x->data, x->size);
    qkv__record(a, y, op, backward, 1, &x);
    return y;
}

qkv_tensor *qkv_relu(qkv_arena *a, qkv_tensor *x)
{
    return unary(a, x, "qkv_relu", relu_forward, relu_backward);
}

qkv_tensor *qkv_relu2(qkv_arena *a, qkv_tensor *x)
{
    return unary(a, x, "qkv_relu2", relu2_forward, relu2_backward);
}

void qkv__gelu_values(qkv_real *y, const qkv_real *x, size_t n) { gelu_forward_chunk(y, x, n); }

qkv_tensor *qkv__gelu_computed(qkv_arena *a, qkv_tensor *x, qkv_tensor *y)
{
    qkv_node *n = qkv__record(a, y, "qkv_gelu", gelu_backward, 1, &x);
    if (n)
        n->assigns = true;
    return y;
}

qkv_tensor *qkv_gelu(qkv_arena *a, qkv_tensor *x)
{
    qkv_tensor *y = unary(a, x, "qkv_gelu", gelu_forward, gelu_backward);
    if (y && y->node)
        y->node->assigns = true;
    return y;
}

/* ---- dropout ---- */

typedef struct drop_ctx {
    const uint8_t *keep; /* 1 where the value survived */
    qkv_real scale;      /* 1 / (1 - p) */
} drop_ctx;

void qkv__dropout_apply(qkv_real *y, const qkv_real *x, const uint8_t *keep, qkv_real scale,
                        size_t n, bool accumulate)
{
#pragma omp parallel for schedule(static) if (n >= QKV__PAR_MIN)
    for (size_t i = 0; i < n; i++) {
        qkv_real v = keep[i] ? x[i] * scale : 0;
        y[i] = accumulate ? y[i] + v : v;
    }
}

void qkv__dropout_mask(uint8_t *keep, size_t n, qkv_real p, qkv_rng *rng)
{
    /* Drawn in order on one thread: the same mask at every thread count. */
    for (size_t i = 0; i < n; i++)
        keep[i] = qkv__rng_uniform(rng) >= p;
}

static void dropout_backward(qkv_node *n)
{
    const drop_ctx *c = n->ctx;
    qkv_tensor *x = n->in[0];
    qkv__dropout_apply(x->grad, n->out->grad, c->keep, c->scale, x->size, true);
}

qkv_tensor *qkv_dropout(qkv_arena *a, qkv_tensor *x, qkv_real p, qkv_rng *rng, bool train)
{
    if (qkv__check_inputs("qkv_dropout", a, "x", 1, &x) < 0)
        return NULL;
    if (!(p >= 0 && p < 1)) { /* also rejects NaN */
        qkv_set_error("qkv_dropout: p must be in [0, 1), not %g", (double)p);
        return NULL;
    }
    if (!train || p == 0)
        return x;
    if (!rng) {
        qkv_set_error("qkv_dropout: training with p = %g needs an rng", (double)p);
        return NULL;
    }
    qkv_tensor *y = qkv__like(a, x);
    uint8_t *keep = qkv_arena_alloc(a, x->size);
    if (!y || !keep)
        return NULL;
    qkv__dropout_mask(keep, x->size, p, rng);
    drop_ctx c = {keep, 1 / (1 - p)};
    qkv__dropout_apply(y->data, x->data, keep, c.scale, x->size, false);
    qkv_node *n = qkv__record(a, y, "qkv_dropout", dropout_backward, 1, &x);
    if (n && !qkv__set_ctx(a, n, &c, sizeof c))
        return NULL;
    return y;
}
