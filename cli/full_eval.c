/* The exact evaluation (see full_eval.h). */
#include "full_eval.h"

#include <math.h>
#include <stdio.h>

#include "cli/viz/viz_internal.h"
#include "runtime.h"

/* Windows full_eval_cost times (besides the first, which warms up). */
enum { COST_WINDOWS = 8 };

/* The split's first token and its length in tokens. */
static void split_range(const qkv_corpus *c, qkv_split split, size_t *start, size_t *len)
{
    *start = split == QKV_SPLIT_TRAIN ? 0 : c->n_train;
    *len = split == QKV_SPLIT_TRAIN ? c->n_train : c->len - c->n_train;
}

int64_t full_eval_windows(const qkv_gpt *m, const qkv_corpus *c, qkv_split split)
{
    size_t start, len, T = (size_t)m->cfg.block_size;
    split_range(c, split, &start, &len);
    size_t n = len > T ? (len - 1) / T : 0; /* the last target is the split's last token */
    return (int64_t)(n < FULL_EVAL_MAX_TOKENS / T ? n : FULL_EVAL_MAX_TOKENS / T);
}

int full_eval(const qkv_gpt *m, const qkv_corpus *c, qkv_split split, int64_t n, qkv_arena *arena,
              full_loss *out)
{
    if (n < 1)
        return qkv_set_error("the %s split is too short for one window of %d tokens",
                             split == QKV_SPLIT_TRAIN ? "train" : "val", m->cfg.block_size);
    size_t start, len;
    const int T = m->cfg.block_size;
    split_range(c, split, &start, &len);
    bool was = qkv_set_grad_enabled(false);
    qkv_ctx ctx = {.arena = arena, .train = false, .rng = NULL};
    /* Welford's running mean and sum of squared deviations: steady over 10^5 windows. */
    double mean = 0, m2 = 0;
    int64_t i = 0;
    for (; i < n; i++) {
        const int32_t *x = c->ids + start + (size_t)i * (size_t)T; /* the targets: x + 1 */
        qkv_tensor *loss = qkv_gpt_loss(m, &ctx, x, x + 1, 1, T);
        double l = loss ? loss->data[0] : NAN;
        qkv_arena_reset(arena);
        if (isnan(l)) {
            if (loss) /* computed, and NaN: the weights are not finite */
                qkv_set_error("the loss is NaN (the weights are not finite)");
            break;
        }
        double d = l - mean;
        mean += d / (double)(i + 1);
        m2 += d * (l - mean);
    }
    qkv_set_grad_enabled(was);
    if (i < n) {
        char where[64];
        snprintf(where, sizeof where, "exact evaluation of window %lld", (long long)i);
        return viz_error_prefix(where);
    }
    *out = (full_loss){.loss = mean, .se = n > 1 ? sqrt(m2 / (double)(n - 1) / (double)n) : NAN,
                       .windows = n, .tokens = n * T};
    return 0;
}

double full_eval_cost(const qkv_gpt *m, const qkv_corpus *c, qkv_split split, qkv_arena *arena)
{
    int64_t n = full_eval_windows(m, c, split);
    full_loss f;
    if (full_eval(m, c, split, 1, arena, &f) < 0)
        return NAN;
    int64_t k = n < COST_WINDOWS ? n : COST_WINDOWS;
    double t0 = cli_now();
    if (full_eval(m, c, split, k, arena, &f) < 0)
        return NAN;
    return (cli_now() - t0) * (double)n / (double)k;
}
