/* qkv/tensor.h — tensors and reverse-mode autograd.
 *
 * A tensor is a contiguous row-major block of qkv_real with up to four
 * dimensions. Ops (qkv/ops.h) compute their result at once and, when grad
 * mode is on and an input wants a gradient, record a graph node; then
 * qkv_backward walks the graph from a scalar and accumulates (+=) into the
 * gradient of every tensor that wants one, once per graph.
 *
 *     qkv_arena *a = qkv_arena_new(1 << 16);
 *     qkv_real values[] = {1, 2, 3, 4};
 *     qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(2, 2), values);
 *     qkv_set_requires_grad(x, true);
 *     qkv_tensor *loss = qkv_sum(a, qkv_mul(a, x, x));   // sum of squares
 *     qkv_backward_retain_graph(a, loss);                // x->grad = 2x = {2,4,6,8}
 *     qkv_backward(a, loss);                             // adds again: 4x; the graph is used up
 *     qkv_backward(a, loss);                             // -1: "backpropagated through already"
 *     qkv_arena_free(&a);
 */
#ifndef QKV_TENSOR_H
#define QKV_TENSOR_H

#include "qkv/arena.h"
#include "qkv/base.h"
#include "qkv/rng.h"

#include <stdio.h>

#ifdef __cplusplus
#include <climits>
#include <cstddef>
#include <type_traits>

/* QKV_SHAPE's C++ half (templates cannot have C linkage, so outside the
 * extern "C" block). C++ has no compound literals: the extents go into a
 * temporary array that lives until the end of the call, each one evaluated
 * once, and their count is taken where nothing is evaluated (sizeof). */
namespace qkv_detail {
/* Integers and enum constants (enum { T = 8 }), nothing else (no 2.5). */
template <class... T> struct all_integral : std::true_type {};
template <class T, class... R>
struct all_integral<T, R...>
    : std::integral_constant<bool, (std::is_integral<T>::value || std::is_enum<T>::value) &&
                                       all_integral<R...>::value> {};

/* An extent of any integer type as an int; beyond INT_MAX or below 0 it
 * becomes -1, which the shape check refuses with a message, rather than
 * wrapping to a valid-looking extent. (x < 1 rather than x < 0: no
 * "always false" warning for an unsigned x.) */
template <class T> constexpr int extent(T x)
{
    return x < 1 ? (x == 0 ? 0 : -1)
                 : static_cast<unsigned long long>(x) > static_cast<unsigned long long>(INT_MAX)
                       ? -1
                       : static_cast<int>(x);
}

template <std::size_t N> struct shape_values {
    int v[N];
    const int *data() const { return v; }
};

template <class... T> shape_values<sizeof...(T)> shape(T... x)
{
    static_assert(all_integral<T...>::value, "QKV_SHAPE takes integer extents");
    return shape_values<sizeof...(T)>{{extent(x)...}};
}

/* Only its type is used, in sizeof: the number of extents. */
template <class... T> char (&count(T...))[sizeof...(T)];
} // namespace qkv_detail
#endif

QKV_BEGIN_DECLS

#define QKV_MAX_DIMS 4

/* A shape written inline: qkv_zeros(a, QKV_SHAPE(2, 3)) passes ndim = 2 and
 * {2, 3}. The extents may be variables (QKV_SHAPE(B, T)); the array lives
 * until the end of the call. In C++ each extent is evaluated once and may be
 * of any integer type (size_t, long, int: no narrowing warning). */
#ifdef __cplusplus
#define QKV_SHAPE(...) \
    static_cast<int>(sizeof(qkv_detail::count(__VA_ARGS__))), qkv_detail::shape(__VA_ARGS__).data()
#else
#define QKV_SHAPE(...) \
    (int)(sizeof((int[]){__VA_ARGS__}) / sizeof(int)), (const int[]) { __VA_ARGS__ }
#endif

typedef struct qkv_node qkv_node;

typedef struct qkv_tensor {
    qkv_real *data;             /* size values, row-major, contiguous */
    qkv_real *grad;             /* d(loss)/d(data), same shape; NULL until backward needs it */
    int ndim;                   /* 1..QKV_MAX_DIMS (a scalar is shape (1)) */
    int shape[QKV_MAX_DIMS];    /* extent of each dimension, outermost first */
    size_t size;                /* number of values: the product of the shape */
    bool requires_grad;         /* backward computes a gradient for this tensor */
    bool retain_grad;           /* an op's result that keeps its grad after backward */
    qkv_node *node;             /* the op that produced it; NULL for leaves */
    const char *name;           /* parameter name, or NULL */
    const qkv_arena *arena;     /* the arena it lives in; NULL for parameters */
    uint64_t generation;        /* that arena's reset count when it was made: after a
                                 * reset an op refuses it with a message instead of
                                 * reading memory that now holds something else */
} qkv_tensor;

/* ---- creation (from an arena; valid until the arena is reset) ----
 *
 * A tensor used after its arena's reset is refused by every op ("input x is
 * from before its arena's reset") as long as its own bytes have not been
 * handed out again: a tensor made after the reset in the very same place is
 * indistinguishable from the old one, so the check catches the mistake, it
 * does not make it safe. */

/* A tensor of the given shape with uninitialised values; NULL on a bad shape or no memory. */
qkv_tensor *qkv_tensor_new(qkv_arena *a, int ndim, const int *shape);

/* A tensor of the given shape filled with 0. */
qkv_tensor *qkv_zeros(qkv_arena *a, int ndim, const int *shape);

/* A tensor of the given shape filled with 1. */
qkv_tensor *qkv_ones(qkv_arena *a, int ndim, const int *shape);

/* A tensor of the given shape holding a copy of values (size values, row-major). */
qkv_tensor *qkv_from_array(qkv_arena *a, int ndim, const int *shape, const qkv_real *values);

/* A tensor of N(0, std²) values drawn in order from rng. */
qkv_tensor *qkv_randn(qkv_arena *a, int ndim, const int *shape, qkv_real std, qkv_rng *rng);

/* A tensor of uniform values in [lo, hi) drawn in order from rng. */
qkv_tensor *qkv_rand_uniform(qkv_arena *a, int ndim, const int *shape, qkv_real lo, qkv_real hi,
                             qkv_rng *rng);

/* Mark a leaf tensor as wanting (or not) a gradient from qkv_backward. */
void qkv_set_requires_grad(qkv_tensor *t, bool on);

/* ---- shapes ---- */

/* True when a and b have the same ndim and extents (false when either is NULL). */
bool qkv_same_shape(const qkv_tensor *a, const qkv_tensor *b);

/* Write the shape as "(2,3,4)" into buf (at least 64 bytes); returns buf
 * ("(NULL)" for a NULL t), or NULL when buf is NULL or len is 0. */
char *qkv_shape_str(const qkv_tensor *t, char *buf, size_t len);

/* ---- autograd ---- */

/* True while ops record graph nodes (the default). */
bool qkv_grad_enabled(void);

/* Turn recording on or off for this thread (off = no-grad mode, for
 * evaluation and sampling); returns the previous setting so it can be restored. */
bool qkv_set_grad_enabled(bool on);

/* Backpropagate from a one-value tensor: seed d(loss)/d(loss) = 1, visit the
 * nodes in reverse topological order and add each input's gradient into its
 * grad (allocated zeroed from a when missing). Leaves (parameters, inputs)
 * keep their gradients and accumulate over calls: backward through a new
 * graph per micro-batch sums their gradients (gradient accumulation). The
 * gradients of tensors an op computed are scratch, reused during the pass and
 * NULL afterwards, except for the loss and tensors marked with qkv_retain_grad.
 * The pass uses the graph up, as in PyTorch: a second backward through any of
 * its nodes is refused with a message (it would add the same gradients to
 * the leaves again) unless the first went through qkv_backward_retain_graph.
 * 0 on success, -1 on error. */
int qkv_backward(qkv_arena *a, qkv_tensor *loss);

/* qkv_backward that leaves the graph usable for another backward (PyTorch's
 * retain_graph=True): the next pass through it adds its gradients again. */
int qkv_backward_retain_graph(qkv_arena *a, qkv_tensor *loss);

/* Keep the gradient of t, the result of an op, after the next backward (to look at it). */
void qkv_retain_grad(qkv_tensor *t);

/* ---- inspection ---- */

/* One line about t to f: its name (name, else t's parameter name, else
 * "tensor"), shape, its first and last values (all of them up to 8), and
 * the min, max, mean and standard deviation of its finite values, with how
 * many are NaN or infinite when any are:
 *   "h (2,3): [0.5, -1.25, 3, 0, 2, 1] min -1.25 max 3 mean 0.875 std 1.3"
 * 0, or -1 with a message on a NULL or unallocated t, a NULL f or a failed write. */
int qkv_tensor_print(const qkv_tensor *t, const char *name, FILE *f);

/* The value of t at index (ndim entries, each 0..extent-1 or counted from the
 * end, -1 the last: qkv_tensor_get(t, QKV_SHAPE(1, -1), &v) reads row 1's last
 * value) into *value. 0, or -1 with a message naming the bad argument. */
int qkv_tensor_get(const qkv_tensor *t, int ndim, const int *index, qkv_real *value);

QKV_END_DECLS
#endif
