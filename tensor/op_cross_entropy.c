/* Cross-entropy from logits, one fused node: log-softmax and the negative
 * log-likelihood of the target together (see qkv/ops.h). */
#include <string.h>
#include <tgmath.h>

#include "graph.h"

/* What backward needs. */
typedef struct ce_ctx {
    const int32_t *targets; /* (N) target id of each row (an arena copy) */
    const qkv_real *lse;    /* (N) log Σ_j exp(logits_j) of each row */
    int32_t ignore_index;   /* rows with this target do not count */
    size_t count;           /* how many rows count */
} ce_ctx;

/* For each counted row: lse = log Σ_j exp(x_j) and loss = lse − x_target,
 * i.e. −log softmax(x)_target. Ignored rows get loss 0. */
static void cross_entropy_forward(double *losses, qkv_real *lse, const qkv_real *logits,
                                  const int32_t *targets, int32_t ignore_index, size_t N, int V)
{
    // logits is (N,V); losses, lse and targets (N)
#pragma omp parallel for schedule(static) if (N * (size_t)V >= QKV__PAR_MIN)
    for (size_t i = 0; i < N; i++) {
        const qkv_real *x = logits + i * V;
        if (targets[i] == ignore_index) {
            losses[i] = 0;
            lse[i] = 0;
            continue;
        }
        /* Subtract the row max so no exp() overflows; sum in double. */
        qkv_real max = x[0];
        for (int j = 1; j < V; j++)
            max = x[j] > max ? x[j] : max;
        double sum = 0;
        for (int j = 0; j < V; j++)
            sum += exp(x[j] - max);
        double l = max + log(sum);
        lse[i] = (qkv_real)l;
        losses[i] = l - x[targets[i]];
    }
}

/* dlogits += scale · (softmax(x) − onehot(target)) for each counted row. */
static void cross_entropy_backward_rows(qkv_real *dlogits, const qkv_real *logits,
                                        const qkv_real *lse, const int32_t *targets,
                                        int32_t ignore_index, qkv_real scale, size_t N, int V)
{
    // dlogits and logits are (N,V); lse and targets (N)
#pragma omp parallel for schedule(static) if (N * (size_t)V >= QKV__PAR_MIN)
    for (size_t i = 0; i < N; i++) {
        if (targets[i] == ignore_index)
            continue;
        const qkv_real *x = logits + i * V;
        qkv_real *dx = dlogits + i * V;
        for (int j = 0; j < V; j++) {
            qkv_real p = exp(x[j] - lse[i]);
            dx[j] += scale * (p - (j == targets[i]));
        }
    }
}

static void cross_entropy_backward(qkv_node *n)
{
    ce_ctx *c = n->ctx;
    qkv_tensor *x = n->in[0];
    if (!x->grad || c->count == 0)
        return;
    /* The loss is a mean over the counted rows. */
    qkv_real scale = n->out->grad[0] / (qkv_real)c->count;
    cross_entropy_backward_rows(x->grad, x->data, c->lse, c->targets, c->ignore_index, scale,
                                qkv__rows(x), qkv__cols(x));
}

qkv_tensor *qkv_cross_entropy(qkv_arena *a, qkv_tensor *logits, const int32_t *targets,
                              int32_t ignore_index)
{
    if (qkv__check_inputs("qkv_cross_entropy", a, "logits", 1, &logits) < 0)
        return NULL;
    if (qkv__null("qkv_cross_entropy", "targets", targets))
        return NULL;
    size_t N = qkv__rows(logits), count = 0;
    int V = qkv__cols(logits);
    for (size_t i = 0; i < N; i++) {
        if (targets[i] == ignore_index)
            continue;
        if (targets[i] < 0 || targets[i] >= V) {
            qkv_set_error(
                "qkv_cross_entropy: target %d at row %zu is outside [0, %d), the %d classes "
                "of the logits (ignore_index is %d)",
                (int)targets[i], i, V, V, (int)ignore_index);
            return NULL;
        }
        count++;
    }
    qkv_tensor *out = qkv_tensor_new(a, QKV_SHAPE(1));
    qkv_real *lse = qkv_arena_alloc(a, N * sizeof *lse);
    double *losses = qkv_arena_alloc(a, N * sizeof *losses);
    if (!out || !lse || !losses)
        return NULL;
    cross_entropy_forward(losses, lse, logits->data, targets, ignore_index, N, V);
    /* Sum the per-row losses in row order: the same total at any thread count. */
    double total = 0;
    for (size_t i = 0; i < N; i++)
        total += losses[i];
    out->data[0] = count ? (qkv_real)(total / (double)count) : 0;

    qkv_node *n = qkv__record(a, out, "cross_entropy", cross_entropy_backward, 1, &logits);
    if (n) {
        int32_t *kept = qkv_arena_alloc(a, N * sizeof *kept);
        if (!kept)
            return NULL;
        memcpy(kept, targets, N * sizeof *kept);
        if (!qkv__set_ctx(a, n, &(ce_ctx){kept, lse, ignore_index, count}, sizeof(ce_ctx)))
            return NULL;
    }
    return out;
}
