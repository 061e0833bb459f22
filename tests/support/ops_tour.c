/* The op tour (see ops_tour.h). */
#include "ops_tour.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { MAX_INPUTS = 16 };

typedef struct tour {
    qkv_arena *a;
    qkv_rng rng; /* every input and loss weight, drawn in a fixed order */
    tour_report_fn report;
    void *ud;
    qkv_tensor *inputs[MAX_INPUTS];
    const char *names[MAX_INPUTS];
    int n_inputs;
    qkv_tensor *loss; /* Σ over the checked results of Σ(result ⊙ R) */
    bool failed;      /* some op returned NULL */
} tour;

/* N(0, 1) values rounded to float: the same numbers in both builds. */
static qkv_tensor *float_randn(tour *t, int ndim, const int *shape)
{
    qkv_tensor *x = qkv_randn(t->a, ndim, shape, 1, &t->rng);
    if (x)
        for (size_t i = 0; i < x->size; i++)
            x->data[i] = (qkv_real)(float)x->data[i];
    return x;
}

/* A random input that wants a gradient; its gradient is reported at the end. */
static qkv_tensor *input(tour *t, const char *name, int ndim, const int *shape)
{
    qkv_tensor *x = float_randn(t, ndim, shape);
    if (!x || t->n_inputs == MAX_INPUTS) {
        t->failed = true;
        return NULL;
    }
    qkv_set_requires_grad(x, true);
    t->inputs[t->n_inputs] = x;
    t->names[t->n_inputs++] = name;
    return x;
}

/* Report an op's result and add Σ(result ⊙ R) to the loss with R fixed and
 * random, so every value of every result reaches the gradients, each with its
 * own weight (a plain sum would hide, e.g., a softmax, whose rows sum to 1). */
static qkv_tensor *check(tour *t, const char *name, qkv_tensor *y)
{
    if (!y) {
        t->failed = true;
        return NULL;
    }
    t->report(t->ud, name, y->data, y->size);
    qkv_tensor *term = qkv_sum(t->a, qkv_mul(t->a, y, float_randn(t, y->ndim, y->shape)));
    t->loss = t->loss ? qkv_add(t->a, t->loss, term) : term;
    return y;
}

int ops_tour(int passes, tour_report_fn report, void *ud)
{
    enum { B = 2, T = 4, C = 8, H = 2, D = C / H, V = 10 };
    static const int32_t ids[B * T] = {1, 7, 7, 0, 9, 3, 1, 1};      /* repeats on purpose */
    static const int32_t targets[B * T] = {3, 0, -1, 9, 9, 2, 5, -1}; /* -1: ignored */
    static const uint8_t key_valid[B * T] = {1, 1, 1, 1, 1, 1, 0, 0};
    const qkv_mask mask = {true, key_valid};
    tour t = {.a = qkv_arena_new(1 << 20), .report = report, .ud = ud};
    if (!t.a)
        return -1;
    qkv_rng_seed(&t.rng, 2024);
    qkv_rng drop_rng;
    qkv_rng_seed(&drop_rng, 7);

    qkv_tensor *x = input(&t, "x", QKV_SHAPE(B, T, C));
    qkv_tensor *table = input(&t, "table", QKV_SHAPE(V, C));
    qkv_tensor *bias = input(&t, "bias", QKV_SHAPE(C));
    qkv_tensor *w = input(&t, "w", QKV_SHAPE(C, C));
    qkv_tensor *w_tn = input(&t, "w_tn", QKV_SHAPE(T, 6));
    qkv_tensor *w_tt = input(&t, "w_tt", QKV_SHAPE(6, T));
    qkv_tensor *m1 = input(&t, "m1", QKV_SHAPE(4, 3));
    qkv_tensor *m2 = input(&t, "m2", QKV_SHAPE(5, 4));
    qkv_tensor *ln_w = input(&t, "ln_w", QKV_SHAPE(2 * C));
    qkv_tensor *ln_b = input(&t, "ln_b", QKV_SHAPE(2 * C));
    qkv_tensor *head = input(&t, "head", QKV_SHAPE(V, 2 * C));

    /* Elementwise and reductions. */
    qkv_tensor *e = check(&t, "embedding", qkv_embedding(t.a, table, ids, QKV_SHAPE(B, T)));
    qkv_tensor *h = check(&t, "add", qkv_add(t.a, x, e));
    h = check(&t, "sub", qkv_sub(t.a, h, bias));
    h = check(&t, "mul", qkv_mul(t.a, h, x));
    h = check(&t, "scale", qkv_scale(t.a, h, 0.5));
    check(&t, "sum", qkv_sum(t.a, h));
    check(&t, "mean", qkv_mean(t.a, h));

    /* matmul: every transpose form, with a shared 2-D weight and batched. */
    qkv_tensor *nn = check(&t, "matmul nn shared", qkv_matmul(t.a, h, w, false, false));
    qkv_tensor *nt = check(&t, "matmul nt shared", qkv_matmul(t.a, h, w, false, true));
    check(&t, "matmul tn shared", qkv_matmul(t.a, h, w_tn, true, false));
    check(&t, "matmul tt shared", qkv_matmul(t.a, h, w_tt, true, true));
    check(&t, "matmul nn batched", qkv_matmul(t.a, x, qkv_transpose(t.a, h), false, false));
    check(&t, "matmul nt batched", qkv_matmul(t.a, x, h, false, true));
    check(&t, "matmul tn batched", qkv_matmul(t.a, x, h, true, false));
    check(&t, "matmul tt 2-d", qkv_matmul(t.a, m1, m2, true, true));

    /* Activations and shapes: split gelu's output into heads, as attention does. */
    qkv_tensor *r = check(&t, "relu", qkv_relu(t.a, nn));
    qkv_tensor *g = check(&t, "gelu", qkv_gelu(t.a, nt));
    qkv_tensor *q = check(&t, "reshape", qkv_reshape(t.a, g, QKV_SHAPE(B, T, H, D)));
    q = check(&t, "permute", qkv_permute(t.a, q, (const int[]){0, 2, 1, 3}));
    qkv_tensor *qt = check(&t, "transpose", qkv_transpose(t.a, q));
    qkv_tensor *cat = check(&t, "concat", qkv_concat(t.a, 2, (qkv_tensor *[]){r, g}));
    check(&t, "slice", qkv_slice(t.a, cat, 3, 7));
    check(&t, "dropout", qkv_dropout(t.a, cat, 0.25, &drop_rng, true));

    /* The fused row-wise ops and attention. */
    qkv_tensor *ln = check(&t, "layernorm", qkv_layernorm(t.a, cat, ln_w, ln_b, 1e-5));
    check(&t, "softmax", qkv_softmax(t.a, ln));
    qkv_tensor *scores = check(&t, "matmul nn 4-d", qkv_matmul(t.a, q, qt, false, false));
    check(&t, "softmax_masked", qkv_softmax_masked(t.a, scores, &mask, 0.5));
    qkv_tensor *k = qkv_permute(t.a, qkv_reshape(t.a, r, QKV_SHAPE(B, T, H, D)),
                                (const int[]){0, 2, 1, 3});
    qkv_tensor *v = qkv_permute(t.a, qkv_reshape(t.a, h, QKV_SHAPE(B, T, H, D)),
                                (const int[]){0, 2, 1, 3});
    qkv_tensor *weights = NULL;
    check(&t, "attention", qkv_attention(t.a, q, k, v, &mask, 0, NULL, &weights));
    if (weights) /* for inspection only: no gradient flows through it */
        report(ud, "attention weights", weights->data, weights->size);

    /* The Linear as one node, and the modern options' ops (--activation
     * relu2 or silu, --norm rmsnorm, --positions rope), feeding multi-head
     * attention with the heads side by side. */
    qkv_tensor *lin = check(&t, "affine", qkv_affine(t.a, h, w, bias));
    check(&t, "relu2", qkv_relu2(t.a, lin));
    check(&t, "silu", qkv_silu(t.a, lin));
    qkv_tensor *rms = check(&t, "rmsnorm", qkv_rmsnorm(t.a, lin, bias, 1e-5));
    qkv_tensor *rq = check(&t, "rope", qkv_rope(t.a, rms, H, 1));
    qkv_tensor *rk = qkv_rope(t.a, x, H, 0);
    qkv_tensor *heads_weights = NULL;
    check(&t, "attention_heads",
          qkv_attention_heads(t.a, rq, rk, e, H, &mask, 0, NULL, &heads_weights));
    if (heads_weights)
        report(ud, "attention_heads weights", heads_weights->data, heads_weights->size);
    /* The weights of chosen query rows alone, for inspection (no graph node). */
    qkv_tensor *rows = qkv_attention_weights(t.a, rq, rk, H, &mask, 1, 2);
    if (rows)
        report(ud, "attention_weights, rows 1 and 2", rows->data, rows->size);
    t.failed |= !rows;
    qkv_tensor *logits = qkv_matmul(t.a, ln, head, false, true);
    check(&t, "cross_entropy", qkv_cross_entropy(t.a, logits, targets, -1));

    /* The ops a model of one's own reaches for: both operands broadcast, div and
     * the elementwise functions, reductions over one axis, the masked mean
     * (mean-pooling the valid tokens), shapes on any axis. */
    qkv_tensor *col = input(&t, "col", QKV_SHAPE(B, T, 1));
    qkv_tensor *row = input(&t, "row", QKV_SHAPE(T, C));
    qkv_tensor *bc = check(&t, "add both broadcast", qkv_add(t.a, col, row)); /* (B,T,C) */
    qkv_tensor *sg = check(&t, "sigmoid", qkv_sigmoid(t.a, bc));
    qkv_tensor *th = check(&t, "tanh", qkv_tanh(t.a, h));
    qkv_tensor *dv = check(&t, "div", qkv_div(t.a, row, sg)); /* x stretched over B */
    qkv_tensor *ex = check(&t, "exp", qkv_exp(t.a, th));
    qkv_tensor *lg = check(&t, "log", qkv_log(t.a, sg));
    check(&t, "sum_axis", qkv_sum_axis(t.a, dv, 1, false));
    check(&t, "mean_axis", qkv_mean_axis(t.a, ex, -1, true));
    qkv_tensor *mx = check(&t, "max_axis", qkv_max_axis(t.a, lg, 0, false));
    int32_t *best = qkv_argmax(t.a, lg, 0);
    if (best && mx) { /* an index has no gradient: reported, not weighted into the loss */
        qkv_real v[T * C];
        for (int i = 0; i < T * C; i++)
            v[i] = (qkv_real)best[i];
        report(ud, "argmax", v, T * C);
    } else
        t.failed = true;
    check(&t, "masked_mean", qkv_masked_mean(t.a, h, 1, key_valid)); /* (B,C) */
    qkv_tensor *cat2 = check(&t, "concat_axis", qkv_concat_axis(t.a, 2, (qkv_tensor *[]){h, dv}, 1));
    qkv_tensor *sl = check(&t, "slice_axis", qkv_slice_axis(t.a, cat2, 1, 2, 3)); /* (B,3,C) */
    check(&t, "transpose_axes", qkv_transpose_axes(t.a, sl, 0, 2));                /* (C,3,B) */

    /* The 1.2 ops: pointwise math and clamp on a fresh input (no value near a
     * kink or a bound after float rounding), selection, scans, losses. */
    qkv_tensor *u = input(&t, "u", QKV_SHAPE(B, T, C));
    qkv_tensor *sp = check(&t, "softplus", qkv_softplus(t.a, u));
    check(&t, "sqrt", qkv_sqrt(t.a, sp));
    qkv_tensor *au = check(&t, "abs", qkv_abs(t.a, u));
    check(&t, "pow", qkv_pow(t.a, sp, 1.5));
    check(&t, "clamp", qkv_clamp(t.a, u, -0.5, 0.5));
    static const uint8_t picks[B * T * C] = {1, 0, 0, 1, 1, 0, 1, 0, 0, 1, 1, 1, 0, 0, 1, 0,
                                             1, 1, 0, 0, 0, 1, 0, 1, 1, 0, 1, 1, 0, 1, 0, 0,
                                             0, 0, 1, 1, 1, 0, 0, 1, 0, 1, 0, 1, 1, 1, 0, 0,
                                             1, 0, 1, 0, 0, 0, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1};
    check(&t, "where", qkv_where(t.a, picks, u, h));
    check(&t, "min_axis", qkv_min_axis(t.a, u, 1, true));
    check(&t, "var_axis", qkv_var_axis(t.a, u, -1, false, 1));
    check(&t, "cumsum", qkv_cumsum(t.a, au, 1));
    check(&t, "index_select", qkv_index_select(t.a, u, 2, 4, (const int32_t[]){7, 0, 7, 3}));
    check(&t, "gather", qkv_gather(t.a, u, 2, 1, (const int32_t[]){3, 0, 7, 7, 1, 5, 2, 6}));
    check(&t, "topk", qkv_topk(t.a, u, 3, NULL));
    check(&t, "sort", qkv_sort(t.a, u, false, NULL));
    check(&t, "log_softmax", qkv_log_softmax(t.a, u));
    check(&t, "mse_loss", qkv_mse_loss(t.a, u, x));

    int rc = t.failed ? -1 : 0;
    for (int pass = 0; rc == 0 && pass < passes; pass++)
        rc = pass + 1 < passes ? qkv_backward_retain_graph(t.a, t.loss) : qkv_backward(t.a, t.loss);
    for (int i = 0; rc == 0 && i < t.n_inputs; i++) {
        char name[64];
        snprintf(name, sizeof name, "grad %s", t.names[i]);
        report(ud, name, t.inputs[i]->grad, t.inputs[i]->size);
    }
    qkv_arena_free(&t.a);
    return rc;
}

static void keep_block(void *ud, const char *name, const qkv_real *values, size_t n)
{
    tour_blocks *bs = ud;
    if (bs->count == TOUR_MAX_BLOCKS) {
        bs->overflow = true;
        return;
    }
    tour_block *b = &bs->items[bs->count++];
    snprintf(b->name, sizeof b->name, "%s", name);
    b->n = n;
    b->values = malloc(n * sizeof *values);
    if (b->values)
        memcpy(b->values, values, n * sizeof *values);
}

int ops_tour_keep(int passes, tour_blocks *out)
{
    *out = (tour_blocks){.count = 0};
    if (ops_tour(passes, keep_block, out) < 0)
        return -1;
    for (int i = 0; i < out->count; i++)
        if (!out->items[i].values)
            return qkv_set_error("ops_tour_keep: out of memory");
    if (out->overflow)
        return qkv_set_error("ops_tour_keep: more than %d blocks", TOUR_MAX_BLOCKS);
    return 0;
}

void tour_blocks_free(tour_blocks *b)
{
    for (int i = 0; i < b->count; i++)
        free(b->items[i].values);
    b->count = 0;
}
