/* Random contiguous batches from one split (see qkv/data.h). */
#include "qkv/data.h"

#include <string.h>

int qkv_sampler_init(qkv_sampler *s, const qkv_corpus *c, qkv_split split, int batch_size,
                     int block_size, uint64_t seed)
{
    if (!s || !c)
        return qkv_set_error("qkv_sampler_init: %s is NULL", !s ? "s" : "c");
    if (split != QKV_SPLIT_TRAIN && split != QKV_SPLIT_VAL)
        return qkv_set_error("qkv_sampler_init: split %d is neither QKV_SPLIT_TRAIN nor "
                             "QKV_SPLIT_VAL", (int)split);
    if (batch_size < 1 || block_size < 1)
        return qkv_set_error("sampler: batch size %d and block size %d must be >= 1", batch_size,
                             block_size);
    bool train = split == QKV_SPLIT_TRAIN;
    const int32_t *ids = train ? c->ids : c->ids + c->n_train;
    size_t len = train ? c->n_train : c->len - c->n_train;
    /* A window is block_size inputs plus the one target after the last. */
    if (len < (size_t)block_size + 1)
        return qkv_set_error(
            "sampler: the %s split has %zu tokens, fewer than block size + 1 = %d "
            "(the corpus has %zu tokens; use a longer text or a smaller block size)",
            train ? "train" : "val", len, block_size + 1, c->len);
    s->ids = ids;
    s->len = len;
    s->batch_size = batch_size;
    s->block_size = block_size;
    qkv_rng_seed(&s->rng, seed);
    return 0;
}

void qkv_sampler_next(qkv_sampler *s, int32_t *x, int32_t *y)
{
    size_t T = (size_t)s->block_size;
    for (int b = 0; b < s->batch_size; b++) {
        /* Starts in [0, len - T), as torch.randint(len(data) - block_size). */
        size_t i = (size_t)qkv_rng_below(&s->rng, s->len - T);
        memcpy(x + (size_t)b * T, s->ids + i, T * sizeof(int32_t));
        memcpy(y + (size_t)b * T, s->ids + i + 1, T * sizeof(int32_t));
    }
}
