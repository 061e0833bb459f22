/* Internal: graph nodes and the helpers every op uses to create its output
 * and record how to backpropagate through it. Not installed. */
#ifndef QKV_GRAPH_H
#define QKV_GRAPH_H

#include "check.h"
#include "qkv/ops.h" /* so every op's definition meets its public declaration */
#include "qkv/tensor.h"

/* Loops over fewer values than this run on one thread: waking the thread
 * team costs more than the work, and a busy machine makes waiting threads
 * spin. Every op's parallel loop carries `if (work >= QKV__PAR_MIN)`. */
#define QKV__PAR_MIN 32768

/* Adds the gradient of node->out into the grad of each input that has one. */
typedef void (*qkv__backward_fn)(qkv_node *node);

struct qkv_node {
    const char *op;           /* op name, for error messages */
    qkv__backward_fn backward; /* reads out->grad, adds into in[i]->grad where non-NULL */
    qkv_tensor *out;          /* the tensor this op produced */
    int n_in;                 /* number of inputs */
    qkv_tensor **in;          /* the inputs, in op order */
    void *ctx;                /* what backward needs beyond in/out (arena memory) */
    size_t scratch_size;      /* values of scratch memory backward needs, or 0 */
    qkv_real *scratch;        /* that memory (uninitialised), lent only while backward runs */
    uint32_t mark;            /* visit stamp of the last topological sort */
    bool consumed;            /* a backward went through it without keeping the graph:
                               * another one is refused (qkv_backward) */
    bool assigns;             /* backward honours `fresh` (set by the op that records it) */
    uint32_t fresh;           /* while backward runs: bit i set when in[i]->grad is new and
                               * uninitialised, to be assigned (=), not added to (+=): the
                               * first contribution needs no cleared buffer to add into */
};

/* Whether node n's backward must assign in[i]'s gradient rather than add to it. */
static inline bool qkv__fresh(const qkv_node *n, int i) { return n->fresh >> i & 1; }

/* How many times a has been reset: what tensors from a are stamped with (arena.c). */
uint64_t qkv__arena_generation(const qkv_arena *a);

/* A new tensor for an op's result, shaped like t. */
qkv_tensor *qkv__like(qkv_arena *a, const qkv_tensor *t);

/* If grad mode is on and any input requires grad, mark out as requiring grad
 * and attach a node; returns the node (NULL when nothing is recorded) so the
 * op can set node->ctx. Inputs are copied. */
qkv_node *qkv__record(qkv_arena *a, qkv_tensor *out, const char *op, qkv__backward_fn backward,
                      int n_in, qkv_tensor *const *in);

/* Copy size bytes of what n's backward needs (ctx) into a and hang the copy
 * on n; returns the copy, or NULL when out of memory. */
void *qkv__set_ctx(qkv_arena *a, qkv_node *n, const void *ctx, size_t size);

/* y = f(x) over n values: the forward kernel of a one-in, one-out op. */
typedef void (*qkv__unary_forward_fn)(qkv_real *y, const qkv_real *x, size_t n);

/* The op around a one-in, one-out kernel pair: checks x, makes y like it,
 * runs forward and records backward (op_activation.c). */
qkv_tensor *qkv__unary(qkv_arena *a, qkv_tensor *x, const char *op, qkv__unary_forward_fn forward,
                       qkv__backward_fn backward);

/* Set a shape error naming the op and both shapes; returns NULL for the caller to pass on. */
qkv_tensor *qkv__shape_error(const char *op, const char *what, const qkv_tensor *a,
                             const qkv_tensor *b);

/* dst (cols) += the column sums of src (rows, cols), the same at any thread count. */
void qkv__add_column_sums(qkv_real *dst, const qkv_real *src, size_t rows, size_t cols);

/* y (+)= x · scale where keep, 0 elsewhere, for n values: dropout's forward,
 * and (accumulating) its backward, the same masked scaling. y may be x when
 * not accumulating (op_activation.c). */
void qkv__dropout_apply(qkv_real *y, const qkv_real *x, const uint8_t *keep, qkv_real scale,
                        size_t n, bool accumulate);

/* qkv_rng_uniform and qkv_rng_normal without the NULL check, for loops that
 * checked r once before drawing per value (rng.c). */
double qkv__rng_uniform(qkv_rng *r);
double qkv__rng_normal(qkv_rng *r);

/* keep[i] = 1 with probability 1 - p, drawn in order from rng (op_activation.c). */
void qkv__dropout_mask(uint8_t *keep, size_t n, qkv_real p, qkv_rng *rng);

/* Number of rows when t is viewed as (rows, last dim). */
static inline size_t qkv__rows(const qkv_tensor *t) { return t->size / (size_t)t->shape[t->ndim - 1]; }

/* Extent of the last dimension. */
static inline int qkv__cols(const qkv_tensor *t) { return t->shape[t->ndim - 1]; }

/* Whether t is a parameter (qkv_params_add's, or a view of one): named and in
 * no arena, so its values change only between steps, never between the
 * tokens of a generation (kernels/gemm_bf16_held.h). */
static inline bool qkv__is_param(const qkv_tensor *t) { return !t->arena && t->name; }

#endif
