/* Every hot kernel in one list (hot.h), and each run on its own through the
 * public API (qkv/profile.h). */
#include "hot.h"

#include "qkv/profile.h"
#include "qkv/rng.h"
#include "tensor/check.h"

const qkv__hot_kernel *const *qkv__hot_kernels(int *n)
{
    static const qkv__hot_kernel *all[64];
    static int count;
    if (!count) {
        const qkv__hot_kernel *families[] = {qkv__hot_gemm,        qkv__hot_activation,
                                             qkv__hot_layernorm,   qkv__hot_rmsnorm,
                                             qkv__hot_softmax,     qkv__hot_elementwise,
                                             qkv__hot_affine,      qkv__hot_adamw};
        for (size_t f = 0; f < sizeof families / sizeof *families; f++)
            for (const qkv__hot_kernel *k = families[f]; k->name && count < 64; k++)
                all[count++] = k;
    }
    *n = count;
    return all;
}

int qkv_kernel_count(void)
{
    int n;
    qkv__hot_kernels(&n);
    return n;
}

/* Kernel k, or NULL with a message naming fn when there is no such kernel. */
static const qkv__hot_kernel *kernel(const char *fn, int k)
{
    int n;
    const qkv__hot_kernel *const *all = qkv__hot_kernels(&n);
    if (k >= 0 && k < n)
        return all[k];
    qkv_set_error("%s: kernel %d does not exist (0 to %d)", fn, k, n - 1);
    return NULL;
}

const char *qkv_kernel_name(int k)
{
    const qkv__hot_kernel *hk = kernel("qkv_kernel_name", k);
    return hk ? hk->name : NULL;
}

const char *qkv_kernel_limit(int k)
{
    const qkv__hot_kernel *hk = kernel("qkv_kernel_limit", k);
    return !hk ? NULL : hk->limit ? hk->limit : "width";
}

struct qkv_kernel_space {
    qkv__hot_data d;
    qkv_real *mem;
};

enum {
    SIDE_VALUES = 64 * 64,  /* the 64x64 product's matrices (hot.c) */
    MOST_VALUES = 1 << 24,  /* a bound that keeps five buffers' bytes far from overflow */
};

qkv_kernel_space *qkv_kernel_space_new(size_t n, int cols, uint64_t seed)
{
    const char *fn = "qkv_kernel_space_new";
    if (n < 1 || n > MOST_VALUES || cols < 1 || n % (size_t)cols != 0) {
        qkv_set_error("%s: n %zu must be 1 to %d values in whole rows of cols %d", fn, n,
                      MOST_VALUES, cols);
        return NULL;
    }
    size_t each = n > SIDE_VALUES ? n : SIDE_VALUES;
    qkv_kernel_space *s = qkv_calloc(sizeof *s);
    qkv_real *mem = s ? qkv_alloc(5 * each * sizeof *mem) : NULL;
    if (!mem) {
        qkv_free(s);
        qkv__fail_in(fn);
        return NULL;
    }
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    for (size_t i = 0; i < 5 * each; i++) /* e, the last buffer, holds the positive inputs */
        mem[i] = (qkv_real)(i < 4 * each ? 2 * qkv_rng_uniform(&rng) - 1
                                         : 0.1 + 0.9 * qkv_rng_uniform(&rng));
    s->mem = mem;
    s->d = (qkv__hot_data){mem, mem + each, mem + 2 * each, mem + 3 * each, mem + 4 * each, n, cols};
    return s;
}

void qkv_kernel_space_free(qkv_kernel_space *s)
{
    if (!s)
        return;
    qkv_free(s->mem);
    qkv_free(s);
}

double qkv_kernel_run(qkv_kernel_space *s, int k, int reps)
{
    const char *fn = "qkv_kernel_run";
    const qkv__hot_kernel *hk = kernel(fn, k);
    if (!hk || qkv__null(fn, "s", s))
        return -1;
    if (reps < 1)
        return qkv_set_error("%s: reps %d must be >= 1", fn, reps);
    for (int r = 0; r < reps; r++)
        hk->run(&s->d);
    return (double)hk->work(&s->d) * reps;
}
