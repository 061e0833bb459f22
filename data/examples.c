/* Labelled or paired examples in memory, in shuffled batches (see qkv/data.h). */
#include "qkv/data.h"

#include <string.h>

#include "tensor/check.h"

int qkv_examples_init(qkv_examples *e, const int32_t *inputs, const uint8_t *valid, int in_len,
                      const int32_t *targets, int out_len, int n, int batch_size, uint64_t seed)
{
    const char *fn = "qkv_examples_init";
    if (qkv__null(fn, "e", e) || qkv__null(fn, "inputs", inputs) ||
        qkv__null(fn, "targets", targets))
        return -1;
    if (in_len < 1 || out_len < 1 || n < 1 || batch_size < 1)
        return qkv_set_error("%s: in_len %d, out_len %d, n %d and batch_size %d must be >= 1", fn,
                             in_len, out_len, n, batch_size);
    if ((size_t)batch_size * (size_t)(in_len > out_len ? in_len : out_len) > (size_t)INT32_MAX)
        return qkv_set_error("%s: a batch of %d examples of %d and %d ids is too large", fn,
                             batch_size, in_len, out_len);
    *e = (qkv_examples){.inputs = inputs, .valid = valid, .targets = targets, .n = n,
                        .in_len = in_len, .out_len = out_len, .batch_size = batch_size,
                        .seed = seed, .order_epoch = -1};
    return 0;
}

/* e->order := epoch e->epoch's shuffle of 0..n-1 (Fisher-Yates). Seeded from
 * (seed, epoch) alone, so a resumed run needs only epoch and next. */
static void make_order(qkv_examples *e)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, e->seed ^ (0x9e3779b97f4a7c15ull * (uint64_t)(e->epoch + 1)));
    for (int i = 0; i < e->n; i++)
        e->order[i] = i;
    for (int i = e->n - 1; i > 0; i--) {
        int j = (int)qkv_rng_below(&rng, (uint64_t)i + 1), t = e->order[i];
        e->order[i] = e->order[j], e->order[j] = t;
    }
    e->order_epoch = e->epoch;
}

int qkv_examples_next(qkv_examples *e, int32_t *x, uint8_t *x_valid, int32_t *y)
{
    const char *fn = "qkv_examples_next";
    if (qkv__null(fn, "e", e) || qkv__null(fn, "x", x) || qkv__null(fn, "y", y))
        return -1;
    if (!e->inputs || !e->targets || e->n < 1 || e->batch_size < 1 || e->in_len < 1 ||
        e->out_len < 1 || e->next < 0 || e->next > e->n || e->epoch < 0)
        return qkv_set_error("%s: e was not set up by qkv_examples_init", fn);
    if (!e->order && !(e->order = qkv_alloc((size_t)e->n * sizeof *e->order)))
        return -1;
    size_t I = (size_t)e->in_len, O = (size_t)e->out_len;
    for (int b = 0; b < e->batch_size; b++) {
        if (e->next == e->n)
            e->epoch++, e->next = 0;
        if (e->order_epoch != e->epoch)
            make_order(e);
        size_t k = (size_t)e->order[e->next++];
        memcpy(x + b * I, e->inputs + k * I, I * sizeof *x);
        memcpy(y + b * O, e->targets + k * O, O * sizeof *y);
        if (x_valid) {
            if (e->valid)
                memcpy(x_valid + b * I, e->valid + k * I, I);
            else
                memset(x_valid + b * I, 1, I);
        }
    }
    return 0;
}

void qkv_examples_free(qkv_examples *e)
{
    if (!e)
        return;
    qkv_free(e->order);
    e->order = NULL;
    e->order_epoch = -1;
}
