/* Random contiguous batches from one split (see qkv/data.h). */
#include "qkv/data.h"

#include <string.h>

#include "tensor/check.h"

int qkv_batcher_init(qkv_batcher *s, const qkv_corpus *c, qkv_split split, int batch_size,
                     int block_size, uint64_t seed)
{
    const char *fn = "qkv_batcher_init";
    if (qkv__null(fn, "s", s) || qkv__null(fn, "c", c))
        return -1;
    if (split != QKV_SPLIT_TRAIN && split != QKV_SPLIT_VAL)
        return qkv_set_error("%s: split %d is neither QKV_SPLIT_TRAIN nor QKV_SPLIT_VAL", fn,
                             (int)split);
    if (batch_size < 1 || block_size < 1)
        return qkv_set_error("%s: batch size %d and block size %d must be >= 1", fn, batch_size,
                             block_size);
    if ((size_t)batch_size * (size_t)block_size > (size_t)INT32_MAX)
        return qkv_set_error("%s: a batch of %d windows of %d tokens is too large", fn, batch_size,
                             block_size);
    bool train = split == QKV_SPLIT_TRAIN;
    const int32_t *ids = train ? c->ids : c->ids + c->n_train;
    size_t len = train ? c->n_train : c->len - c->n_train;
    /* A window is block_size inputs plus the one target after the last. */
    if (len < (size_t)block_size + 1)
        return qkv_set_error(
            "qkv_batcher_init: the %s split has %zu tokens, fewer than block size + 1 = %d "
            "(the corpus has %zu tokens; use a longer text or a smaller block size)",
            train ? "train" : "val", len, block_size + 1, c->len);
    s->ids = ids;
    s->len = len;
    s->batch_size = batch_size;
    s->block_size = block_size;
    qkv_rng_seed(&s->rng, seed);
    return 0;
}

void qkv_batcher_next(qkv_batcher *s, int32_t *x, int32_t *y)
{
    const char *fn = "qkv_batcher_next";
    if (qkv__null(fn, "s", s) || qkv__null(fn, "x", x) || qkv__null(fn, "y", y))
        return;
    if (!s->ids || s->block_size < 1 || s->batch_size < 1 || s->len < (size_t)s->block_size + 1) {
        qkv_set_error("%s: s was not set up by qkv_batcher_init", fn);
        return;
    }
    size_t T = (size_t)s->block_size;
    for (int b = 0; b < s->batch_size; b++) {
        /* Starts in [0, len - T), as torch.randint(len(data) - block_size). */
        size_t i = (size_t)qkv_rng_below(&s->rng, s->len - T);
        memcpy(x + (size_t)b * T, s->ids + i, T * sizeof(int32_t));
        memcpy(y + (size_t)b * T, s->ids + i + 1, T * sizeof(int32_t));
    }
}
