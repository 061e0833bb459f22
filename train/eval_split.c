/* The exact evaluation (see qkv/training.h): a model's mean loss over every
 * window of a split, not a sample of batches, with its standard error. */
#include <math.h>
#include <stdio.h>

#include "qkv/training.h"
#include "tensor/check.h"

static const char *split_name(qkv_split split)
{
    return split == QKV_SPLIT_TRAIN ? "train" : "val";
}

/* The split's first token and its length in tokens. */
static void split_range(const qkv_corpus *c, qkv_split split, size_t *start, size_t *len)
{
    *start = split == QKV_SPLIT_TRAIN ? 0 : c->n_train;
    *len = split == QKV_SPLIT_TRAIN ? c->n_train : c->len - c->n_train;
}

/* 0 when the arguments name windows of a split; else -1 naming fn. */
static int check_split(const char *fn, const qkv_corpus *c, qkv_split split, int T,
                       int64_t max_tokens)
{
    if (qkv__null(fn, "c", c))
        return -1;
    if (split != QKV_SPLIT_TRAIN && split != QKV_SPLIT_VAL)
        return qkv_set_error("%s: split %d is not QKV_SPLIT_TRAIN or QKV_SPLIT_VAL", fn,
                             (int)split);
    if (T < 1)
        return qkv_set_error("%s: T %d is not a window length (at least 1)", fn, T);
    if (max_tokens < 0)
        return qkv_set_error("%s: max_tokens %lld is negative (0: the whole split)", fn,
                             (long long)max_tokens);
    return 0;
}

/* The windows, the arguments checked. */
static int64_t windows(const qkv_corpus *c, qkv_split split, int T, int64_t max_tokens)
{
    size_t start, len;
    split_range(c, split, &start, &len);
    int64_t n = len > (size_t)T ? (int64_t)((len - 1) / (size_t)T) : 0; /* the last target is the
                                                                           split's last token */
    return max_tokens > 0 && n > max_tokens / T ? max_tokens / T : n;
}

int64_t qkv_split_windows(const qkv_corpus *c, qkv_split split, int T, int64_t max_tokens)
{
    if (check_split("qkv_split_windows", c, split, T, max_tokens) < 0)
        return -1;
    return windows(c, split, T, max_tokens);
}

/* The loss of n windows from start, their Welford mean and spread into
 * *out; -1 with a message naming the window that failed. */
static int eval_windows(qkv_window_loss_fn loss, void *ud, const int32_t *ids, int T, int64_t n,
                        qkv_arena *arena, qkv_split_loss *out)
{
    qkv_ctx ctx = {.arena = arena, .train = false, .rng = NULL};
    /* Welford's running mean and sum of squared deviations: steady over 10^5 windows. */
    double mean = 0, m2 = 0;
    for (int64_t i = 0; i < n; i++) {
        const int32_t *x = ids + (size_t)i * (size_t)T; /* the targets: x + 1 */
        qkv_tensor *l = loss(ud, &ctx, x, x + 1, T);
        double v = l ? l->data[0] : NAN;
        qkv_arena_reset(arena);
        if (isnan(v)) {
            if (l) /* computed, and NaN: the weights are not finite */
                qkv_set_error("the loss is NaN (the weights are not finite)");
            else if (!qkv_last_error()[0])
                qkv_set_error("the window's loss returned NULL and left no message");
            return qkv__error_prefix("window %lld", (long long)i);
        }
        double d = v - mean;
        mean += d / (double)(i + 1);
        m2 += d * (v - mean);
    }
    *out = (qkv_split_loss){.loss = mean,
                            .se = n > 1 ? sqrt(m2 / (double)(n - 1) / (double)n) : NAN,
                            .windows = n,
                            .tokens = n * T};
    return 0;
}

int qkv_eval_split(qkv_window_loss_fn loss, void *ud, const qkv_corpus *c, qkv_split split, int T,
                   int64_t max_tokens, qkv_arena *arena, qkv_split_loss *out)
{
    const char *fn = "qkv_eval_split";
    if (qkv__null(fn, "loss", loss) || qkv__null(fn, "out", out) ||
        check_split(fn, c, split, T, max_tokens) < 0)
        return -1;
    int64_t n = windows(c, split, T, max_tokens);
    if (n < 1)
        return qkv_set_error("%s: the %s split (%zu tokens) is too short for one window of %d "
                             "tokens and its targets%s",
                             fn, split_name(split),
                             split == QKV_SPLIT_TRAIN ? c->n_train : c->len - c->n_train, T,
                             max_tokens > 0 && max_tokens < T ? ", or max_tokens for one" : "");
    qkv_arena *own = arena ? NULL : qkv_arena_new((size_t)1 << 20);
    if (!arena && !own)
        return qkv__fail_in(fn);
    size_t start, len;
    split_range(c, split, &start, &len);
    qkv_clear_error(); /* so that a window failing without a message is told apart */
    bool was = qkv_set_grad_enabled(false);
    int rc = eval_windows(loss, ud, c->ids + start, T, n, arena ? arena : own, out);
    qkv_set_grad_enabled(was);
    qkv_arena_free(&own);
    return rc < 0 ? qkv__fail_in(fn) : 0;
}
