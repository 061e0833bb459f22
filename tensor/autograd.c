/* Graph recording and the backward pass (see qkv/tensor.h). */
#include <string.h>

#include "graph.h"
#include "profile.h"

static _Thread_local bool grad_off; /* "off" so that the zero default means enabled */

bool qkv_grad_enabled(void) { return !grad_off; }

bool qkv_set_grad_enabled(bool on)
{
    bool was = !grad_off;
    grad_off = !on;
    return was;
}

qkv_node *qkv__record(qkv_arena *a, qkv_tensor *out, const char *op, qkv__backward_fn backward,
                      int n_in, qkv_tensor *const *in)
{
    if (grad_off)
        return NULL;
    bool any = false;
    for (int i = 0; i < n_in; i++)
        any |= in[i]->requires_grad;
    if (!any)
        return NULL;
    qkv_node *n = qkv_arena_calloc(a, sizeof *n);
    qkv_tensor **copy = qkv_arena_alloc(a, (size_t)n_in * sizeof *copy);
    if (!n || !copy)
        return NULL; /* out of memory: the result stays a leaf; backward will miss it */
    memcpy(copy, in, (size_t)n_in * sizeof *copy);
    n->op = op;
    n->backward = backward;
    n->out = out;
    n->n_in = n_in;
    n->in = copy;
    out->node = n;
    out->requires_grad = true;
    if (qkv__profiling)
        qkv__profile_forward(op, in[0], out);
    return n;
}

void *qkv__set_ctx(qkv_arena *a, qkv_node *n, const void *ctx, size_t size)
{
    void *copy = qkv_arena_alloc(a, size);
    if (copy) {
        memcpy(copy, ctx, size);
        n->ctx = copy;
    }
    return copy;
}

/* Each sort stamps the nodes it visits with a fresh number, so no flag needs clearing. */
static _Thread_local uint32_t sort_stamp;

/* Double an arena array of len used elements (the old copy stays behind in the arena). */
static void *grow(qkv_arena *a, void *old, size_t len, size_t new_cap, size_t elem)
{
    void *p = qkv_arena_alloc(a, new_cap * elem);
    if (p && len)
        memcpy(p, old, len * elem);
    return p;
}

/* The nodes reachable from root in topological order (every node after the
 * nodes that produced its inputs), by an iterative depth-first search: an
 * explicit stack of (node, index of the next input to visit). */
static qkv_node **topo_sort(qkv_arena *a, qkv_node *root, size_t *count)
{
    uint32_t stamp = ++sort_stamp;
    size_t cap = 256, order_cap = 256, top = 0, n = 0;
    qkv_node **stack = qkv_arena_alloc(a, cap * sizeof *stack);
    int *next = qkv_arena_alloc(a, cap * sizeof *next);
    qkv_node **order = qkv_arena_alloc(a, order_cap * sizeof *order);
    if (!stack || !next || !order)
        return NULL;
    root->mark = stamp;
    stack[0] = root;
    next[top++] = 0;
    while (top) {
        qkv_node *nd = stack[top - 1];
        int i = next[top - 1]++;
        if (i == nd->n_in) { /* all inputs placed: place this node */
            top--;
            if (n == order_cap && !(order = grow(a, order, n, order_cap *= 2, sizeof *order)))
                return NULL;
            order[n++] = nd;
            continue;
        }
        qkv_node *child = nd->in[i]->node;
        if (!child || child->mark == stamp)
            continue;
        child->mark = stamp;
        if (top == cap) {
            stack = grow(a, stack, top, cap * 2, sizeof *stack);
            next = grow(a, next, top, cap * 2, sizeof *next);
            cap *= 2;
            if (!stack || !next)
                return NULL;
        }
        stack[top] = child;
        next[top++] = 0;
    }
    *count = n;
    return order;
}

/* Clear n gradient values. Clearing is a tenth of a step's time on one
 * thread, so large gradients are cleared by every thread. */
static void clear(qkv_real *g, size_t n)
{
    enum { CHUNK = 16384 };
#pragma omp parallel for schedule(static) if (n >= QKV__PAR_MIN)
    for (size_t lo = 0; lo < n; lo += CHUNK)
        memset(g + lo, 0, (n - lo < CHUNK ? n - lo : CHUNK) * sizeof *g);
}

/* Gradient buffers of intermediate tensors, reused within one backward pass.
 * The gradient of a tensor an op computed is complete once every consumer's
 * backward has run, and used up once its own op's backward has run; from then
 * on its memory can hold another tensor's gradient. Reusing it keeps the
 * backward pass's memory to the gradients alive at once (a layer's worth, not
 * the whole graph's), and those buffers stay warm in the cache. */
typedef struct pool_buffer {
    qkv_real *data;
    size_t cap;  /* its size, in values */
    bool in_use; /* lent out now */
} pool_buffer;

typedef struct grad_pool {
    pool_buffer *all; /* every buffer made so far in this pass */
    size_t n;         /* how many */
} grad_pool;

/* A buffer of size values, zeroed when asked: the smallest free one that
 * fits, else a new one from a. */
static qkv_real *pool_take(grad_pool *p, qkv_arena *a, size_t size, bool zeroed)
{
    pool_buffer *best = NULL;
    for (size_t i = 0; i < p->n; i++) {
        pool_buffer *b = &p->all[i];
        if (!b->in_use && b->cap >= size && (!best || b->cap < best->cap))
            best = b;
    }
    if (!best) {
        qkv_real *data = qkv_arena_alloc(a, size * sizeof *data);
        if (!data)
            return NULL;
        best = &p->all[p->n++];
        *best = (pool_buffer){data, size, false};
    }
    best->in_use = true;
    if (zeroed)
        clear(best->data, size);
    return best->data;
}

/* Hand back a buffer pool_take lent; it keeps its whole size for the next taker. */
static void pool_give(grad_pool *p, const qkv_real *data)
{
    for (size_t i = p->n; i-- > 0;)
        if (p->all[i].data == data) {
            p->all[i].in_use = false;
            return;
        }
}

/* Whether in[i] of nd is also another of its inputs (as in h·h): its buffer
 * then takes two contributions, and a backward that wrote them in another
 * order than the inputs' must not assign the second. */
static bool repeated_input(const qkv_node *nd, int i)
{
    for (int j = 0; j < nd->n_in; j++)
        if (j != i && nd->in[j] == nd->in[i])
            return true;
    return false;
}

void qkv_retain_grad(qkv_tensor *t)
{
    if (!qkv__null("qkv_retain_grad", "t", t))
        t->retain_grad = true;
}

/* qkv_backward and qkv_backward_retain_graph: fn names the caller; keep
 * leaves the graph open for another backward. */
static int backward(const char *fn, qkv_arena *a, qkv_tensor *loss, bool keep)
{
    if (qkv__check_inputs(fn, a, "loss", 1, &loss) < 0)
        return -1;
    if (loss->size != 1) {
        char s[64];
        return qkv_set_error("%s: the loss must hold one value, not shape %s", fn,
                             qkv_shape_str(loss, s, sizeof s));
    }
    if (!loss->requires_grad)
        return qkv_set_error(
            "%s: the loss does not depend on any tensor that requires grad "
            "(no parameters registered, or everything ran in no-grad mode)", fn);
    size_t n = 0;
    qkv_node **order = NULL;
    if (loss->node && !(order = topo_sort(a, loss->node, &n)))
        return qkv__fail_in(fn);
    /* Like PyTorch: a second pass through a graph would add its gradients to
     * the leaves again, silently doubling them; wanting that (gradient
     * accumulation over micro-batches) means a new graph per batch, or
     * keeping the graph on purpose. */
    for (size_t k = 0; k < n; k++)
        if (order[k]->consumed)
            return qkv_set_error(
                "%s: this graph was backpropagated through already (op %s): its gradients "
                "are in the leaves; build the graph again, or call qkv_backward_retain_graph "
                "the first time to go through it twice",
                fn, order[k]->op);
    /* At most one buffer per node output and per node scratch, and the loss's. */
    grad_pool pool = {qkv_arena_alloc(a, (2 * n + 1) * sizeof *pool.all), 0};
    if (!pool.all)
        return -1;
    /* Leaves accumulate over backward calls, but the gradient of a tensor an
     * op computed is scratch for this call: starting it afresh keeps a second
     * backward through the same graph from counting the first one twice. */
    for (size_t k = 0; k < n; k++)
        order[k]->out->grad = NULL;
    if (!loss->grad && !(loss->grad = pool_take(&pool, a, 1, true)))
        return -1;
    loss->grad[0] += 1;
    for (size_t k = n; k-- > 0;) {
        qkv_node *nd = order[k];
        double t0 = qkv__profiling ? qkv__profile_now() : 0; /* its inputs' clearing counts too */
        for (int i = 0; i < nd->n_in; i++) {
            qkv_tensor *in = nd->in[i];
            if (!in->requires_grad || in->grad)
                continue;
            /* A leaf's gradient outlives the pass (it accumulates over calls).
             * An op's result gets its buffer from the first backward that
             * reaches it: uncleared when that backward assigns it. */
            if (in->node) {
                bool assign = nd->assigns && i < 32 && !repeated_input(nd, i);
                in->grad = pool_take(&pool, a, in->size, !assign);
                nd->fresh |= assign ? 1u << i : 0;
            } else if ((in->grad = qkv_arena_alloc(a, in->size * sizeof *in->grad)))
                clear(in->grad, in->size);
            if (!in->grad)
                return -1;
        }
        if (nd->scratch_size &&
            !(nd->scratch = pool_take(&pool, a, nd->scratch_size, false)))
            return -1;
        nd->backward(nd);
        nd->fresh = 0;
        if (qkv__profiling)
            qkv__profile_backward(nd->op, nd->in[0], nd->out, qkv__profile_now() - t0);
        if (nd->scratch_size)
            pool_give(&pool, nd->scratch);
        nd->scratch = NULL;
        if (nd->out != loss && !nd->out->retain_grad) {
            pool_give(&pool, nd->out->grad);
            nd->out->grad = NULL;
        }
        nd->consumed = !keep;
    }
    return 0;
}

int qkv_backward(qkv_arena *a, qkv_tensor *loss) { return backward("qkv_backward", a, loss, false); }

int qkv_backward_retain_graph(qkv_arena *a, qkv_tensor *loss)
{
    return backward("qkv_backward_retain_graph", a, loss, true);
}
