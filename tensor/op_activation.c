/* relu, the MLP's activations (gelu, relu², ...) and dropout (see qkv/ops.h). */
#include "activation.h"
#include "graph.h"
#include "kernels/cpu.h"
#include "kernels/hot.h"
#include "kernels/vecmath.h"

/* ---- relu: one value in, one value out ---- */

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

static void relu_backward(qkv_node *n)
{
    qkv_tensor *x = n->in[0];
    relu_backward_kernel(x->grad, n->out->grad, x->data, x->size);
}

qkv_tensor *qkv__unary(qkv_arena *a, qkv_tensor *x, const char *op, qkv__unary_forward_fn forward,
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
    return qkv__unary(a, x, "qkv_relu", relu_forward, relu_backward);
}

/* ---- the MLP's activations (qkv/options.h's QKV_ACTIVATIONS), which a product can fuse ---- */

static const qkv_real GELU_K = (qkv_real)0.7978845608028654; /* sqrt(2/pi) */
static const qkv_real GELU_C = (qkv_real)0.044715;

/* Values per task of the activation loops: big enough to amortise a task,
 * small enough to share out. */
enum { ACT_CHUNK = 4096 };

/* tanh(u) on the given path: the AVX2 and AVX-512 copies take the FMA form
 * (vecmath.h), about half the instructions, so GELU costs their training
 * steps half as much; it is within 3e-7 of the portable path's form (fmaf is
 * a library call there: compiled without FMA). */
static inline __attribute__((always_inline)) qkv_real tanh_on(qkv__cpu_path path, qkv_real u)
{
    return path == QKV__CPU_AVX2 || path == QKV__CPU_AVX512 ? qkv__tanh_fma(u) : qkv__tanh(u);
}

/* tanh(k·(v + c·v³)), GELU's inner tanh. */
static inline __attribute__((always_inline)) qkv_real gelu_tanh(qkv__cpu_path path, qkv_real v)
{
    return tanh_on(path, GELU_K * (v + GELU_C * v * v * v));
}

/* SiLU's σ(v) as 0.5·(1 + t), t = tanh(v/2): the tanh GELU vectorizes with,
 * no division; t is what the backward needs too. */
static inline __attribute__((always_inline)) qkv_real silu_tanh(qkv__cpu_path path, qkv_real v)
{
    return tanh_on(path, (qkv_real)0.5 * v);
}

/* act(v): 0.5·v·(1 + tanh(k·(v + c·v³))), max(v, 0)² (the select before
 * the product, so that no product is conditional and the loop vectorizes),
 * or v·σ(v) = 0.5·v·(1 + tanh(v/2)). Always inlined with a constant act: the
 * switch folds to one case. */
static inline __attribute__((always_inline)) qkv_real activate(qkv__cpu_path path,
                                                               qkv_activation act, qkv_real v)
{
    switch (act) {
    case QKV_ACTIVATION_GELU:
        break;
    case QKV_ACTIVATION_RELU2: {
        qkv_real r = v > 0 ? v : 0;
        return r * r;
    }
    case QKV_ACTIVATION_SILU:
        return (qkv_real)0.5 * v * (1 + silu_tanh(path, v));
    }
    return (qkv_real)0.5 * v * (1 + gelu_tanh(path, v));
}

/* gelu'(v) with t = tanh(u), u = k·(v + c·v³):
 * gelu'(v) = 0.5·(1 + t) + 0.5·v·(1 - t²)·k·(1 + 3c·v²). */
static inline __attribute__((always_inline)) qkv_real gelu_slope(qkv__cpu_path path, qkv_real v)
{
    qkv_real t = gelu_tanh(path, v);
    qkv_real du = GELU_K * (1 + 3 * GELU_C * v * v);
    return (qkv_real)0.5 * (1 + t) + (qkv_real)0.5 * v * (1 - t * t) * du;
}

/* dy · act'(v). For relu², 2·v·dy where v > 0 and exactly 0 elsewhere (smooth
 * at 0, where both sides' slope is 0), whatever dy is: the product is taken
 * first and then selected, so the loop vectorizes. For SiLU, with σ =
 * 0.5·(1 + t) and σ' = σ·(1 − σ) = 0.25·(1 − t²), t = tanh(v/2):
 * silu'(v) = σ + v·σ' = 0.5·(1 + t) + 0.25·v·(1 − t²). */
static inline __attribute__((always_inline)) qkv_real pass_back(qkv__cpu_path path,
                                                                qkv_activation act, qkv_real v,
                                                                qkv_real dy)
{
    switch (act) {
    case QKV_ACTIVATION_GELU:
        break;
    case QKV_ACTIVATION_RELU2: {
        qkv_real g = 2 * v * dy;
        return v > 0 ? g : 0;
    }
    case QKV_ACTIVATION_SILU: {
        qkv_real t = silu_tanh(path, v);
        return dy * ((qkv_real)0.5 * (1 + t) + (qkv_real)0.25 * v * (1 - t * t));
    }
    }
    return dy * gelu_slope(path, v);
}

/* y = act(x) for n values; always inlined with a constant act, so that each
 * activation's loop holds its own arithmetic alone. */
static inline __attribute__((always_inline)) void forward_values(qkv__cpu_path path,
                                                                 qkv_activation act,
                                                                 qkv_real *y, const qkv_real *x,
                                                                 size_t n)
{
#pragma omp simd
    for (size_t i = 0; i < n; i++)
        y[i] = activate(path, act, x[i]);
}

/* dx += dy · act'(x), or dx = dy · act'(x) when assigning; inlined like forward_values. */
static inline __attribute__((always_inline)) void backward_values(qkv__cpu_path path,
                                                                  qkv_activation act,
                                                                  qkv_real *dx,
                                                                  const qkv_real *dy,
                                                                  const qkv_real *x, size_t n,
                                                                  bool assign)
{
    if (assign) {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            dx[i] = pass_back(path, act, x[i], dy[i]);
    } else {
#pragma omp simd
        for (size_t i = 0; i < n; i++)
            dx[i] += pass_back(path, act, x[i], dy[i]);
    }
}

/* y = act(x) for n values, in the active path's vectors (kernels/cpu.h). */
QKV__KERNEL_BODY void forward_chunk_body(qkv__cpu_path path, qkv_activation act, qkv_real *y,
                                         const qkv_real *x, size_t n)
{
    switch (act) { /* a loop of its own for each activation */
#define FORWARD(constant, word, help)                                                              \
    case constant:                                                                                 \
        forward_values(path, constant, y, x, n);                                                   \
        break;
        QKV_ACTIVATIONS(FORWARD)
#undef FORWARD
    }
}
QKV__KERNEL_BY_PATH(forward_chunk, (qkv_activation act, qkv_real *y, const qkv_real *x, size_t n),
            (act, y, x, n))

/* dx (+)= dy · act'(x) for n values, in the active path's vectors. */
QKV__KERNEL_BODY void backward_chunk_body(qkv__cpu_path path, qkv_activation act, qkv_real *dx,
                                          const qkv_real *dy, const qkv_real *x, size_t n,
                                          bool assign)
{
    switch (act) {
#define BACKWARD(constant, word, help)                                                             \
    case constant:                                                                                 \
        backward_values(path, constant, dx, dy, x, n, assign);                                     \
        break;
        QKV_ACTIVATIONS(BACKWARD)
#undef BACKWARD
    }
}
QKV__KERNEL_BY_PATH(backward_chunk,
            (qkv_activation act, qkv_real *dx, const qkv_real *dy, const qkv_real *x, size_t n,
             bool assign),
            (act, dx, dy, x, n, assign))

/* The number of values in the chunk that starts at lo of n. */
static size_t chunk_at(size_t lo, size_t n) { return n - lo < ACT_CHUNK ? n - lo : ACT_CHUNK; }

/* y = act(x) for n values, chunks shared out among the threads. */
static void forward_all(qkv_activation act, qkv_real *y, const qkv_real *x, size_t n)
{
#pragma omp parallel for schedule(static) if (n >= QKV__PAR_MIN)
    for (size_t lo = 0; lo < n; lo += ACT_CHUNK)
        forward_chunk(act, y + lo, x + lo, chunk_at(lo, n));
}

/* The backward of y = act(x): x's gradient assigned when fresh, else added to. */
static void backward_all(qkv_activation act, qkv_node *nd)
{
    qkv_tensor *x = nd->in[0];
    qkv_real *dx = x->grad;
    const qkv_real *dy = nd->out->grad;
    size_t n = x->size;
    bool assign = qkv__fresh(nd, 0);
#pragma omp parallel for schedule(static) if (n >= QKV__PAR_MIN)
    for (size_t lo = 0; lo < n; lo += ACT_CHUNK)
        backward_chunk(act, dx + lo, dy + lo, x->data + lo, chunk_at(lo, n), assign);
}

/* Each activation's forward and backward as the graph calls them:
 * gelu_forward, gelu_backward, relu2_forward, ... */
#define STEPS(constant, word, help)                                                                \
    static void word##_forward(qkv_real *y, const qkv_real *x, size_t n)                           \
    {                                                                                              \
        forward_all(constant, y, x, n);                                                            \
    }                                                                                              \
    static void word##_backward(qkv_node *n) { backward_all(constant, n); }
QKV_ACTIVATIONS(STEPS)
#undef STEPS

/* What the graph records for each activation: the op qkv_<word>. */
static const struct {
    const char *op;
    qkv__unary_forward_fn forward;
    qkv__backward_fn backward;
} acts[] = {
#define ACT(constant, word, help) [constant] = {"qkv_" #word, word##_forward, word##_backward},
    QKV_ACTIVATIONS(ACT)
#undef ACT
};

/* Mark y's node (if any) as one whose backward honours `fresh`; returns y. */
static qkv_tensor *assigning(qkv_tensor *y)
{
    if (y && y->node)
        y->node->assigns = true;
    return y;
}

void qkv__activation_values(qkv_activation act, qkv_real *y, const qkv_real *x, size_t n)
{
    forward_chunk(act, y, x, n);
}

qkv_tensor *qkv__activation_computed(qkv_arena *a, qkv_activation act, qkv_tensor *x,
                                     qkv_tensor *y)
{
    qkv__record(a, y, acts[act].op, acts[act].backward, 1, &x);
    return assigning(y);
}

/* act(x) as an op of its own. */
static qkv_tensor *activation(qkv_arena *a, qkv_tensor *x, qkv_activation act)
{
    return assigning(qkv__unary(a, x, acts[act].op, acts[act].forward, acts[act].backward));
}

qkv_tensor *qkv_relu2(qkv_arena *a, qkv_tensor *x) { return activation(a, x, QKV_ACTIVATION_RELU2); }

qkv_tensor *qkv_gelu(qkv_arena *a, qkv_tensor *x) { return activation(a, x, QKV_ACTIVATION_GELU); }

qkv_tensor *qkv_silu(qkv_arena *a, qkv_tensor *x) { return activation(a, x, QKV_ACTIVATION_SILU); }

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

/* ---- the kernels on their own, for qkv bench --ops and tests (kernels/hot.h) ---- */

static void hot_gelu(const qkv__hot_data *d)
{
    forward_chunk(QKV_ACTIVATION_GELU, d->b, d->a, d->n);
}
static void hot_relu2(const qkv__hot_data *d)
{
    forward_chunk(QKV_ACTIVATION_RELU2, d->b, d->a, d->n);
}
static void hot_silu(const qkv__hot_data *d)
{
    forward_chunk(QKV_ACTIVATION_SILU, d->b, d->a, d->n);
}
static void hot_gelu_back(const qkv__hot_data *d)
{
    backward_chunk(QKV_ACTIVATION_GELU, d->c, d->b, d->a, d->n, true);
}
static void hot_relu2_back(const qkv__hot_data *d)
{
    backward_chunk(QKV_ACTIVATION_RELU2, d->c, d->b, d->a, d->n, false);
}
static void hot_silu_back(const qkv__hot_data *d)
{
    backward_chunk(QKV_ACTIVATION_SILU, d->c, d->b, d->a, d->n, false);
}

const qkv__hot_kernel qkv__hot_activation[] = {
    {"gelu forward", hot_gelu, qkv__hot_values, QKV__HOT_PORTS},
    {"gelu backward", hot_gelu_back, qkv__hot_values, QKV__HOT_PORTS},
    /* One load and one store per value, like mul: on a shared AMD Zen 4 core
     * AVX2 and SSE2 both ran at its store rate in half the runs (8 values/ns). */
    {"relu2 forward", hot_relu2, qkv__hot_values, QKV__HOT_STORES},
    {"relu2 backward (+=)", hot_relu2_back, qkv__hot_values, QKV__HOT_STORES},
    {"silu forward", hot_silu, qkv__hot_values, QKV__HOT_PORTS},
    {"silu backward (+=)", hot_silu_back, qkv__hot_values, QKV__HOT_PORTS},
    {0},
};
