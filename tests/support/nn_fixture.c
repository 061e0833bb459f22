/* The nn suites' fixture (see nn_fixture.h). */
#include "nn_fixture.h"

#include <check.h>
#include <math.h>
#include <string.h>

#include "testing.h"

void fx_open(fixture *f, uint64_t seed)
{
    f->p = qkv_params_new();
    qkv_rng_seed(&f->rng, seed);
    f->ctx = (qkv_ctx){.arena = qkv_arena_new(1 << 20), .train = false, .rng = &f->rng};
    ck_assert(f->p && f->ctx.arena);
}

void fx_close(fixture *f)
{
    qkv_arena_free(&f->ctx.arena);
    qkv_params_free(&f->p);
}

/* Allocate the parameters, then give every one N(0, std²) values, so that no
 * weight is special (LayerNorm 1, bias 0) and attention is far from uniform. */
void fx_alloc_random(fixture *f, double std)
{
    ck_assert_msg(qkv_params_alloc(f->p, &f->rng) == 0, "%s", qkv_last_error());
    for (size_t i = 0; i < f->p->total; i++)
        f->p->data[i] = (qkv_real)(std * qkv_rng_normal(&f->rng));
}

qkv_tensor *randn3(fixture *f, int B, int T, int C)
{
    qkv_tensor *x = qkv_randn(f->ctx.arena, QKV_SHAPE(B, T, C), 1, &f->rng);
    ck_assert_qkv(x);
    return x;
}

qkv_tensor *copy_of(fixture *f, const qkv_tensor *t)
{
    qkv_tensor *c = qkv_from_array(f->ctx.arena, t->ndim, t->shape, t->data);
    ck_assert_qkv(c);
    return c;
}

/* Rows [t0, t0+n) of x (B,T,C) as a new (B,n,C) tensor. */
qkv_tensor *rows_of(fixture *f, const qkv_tensor *x, int t0, int n)
{
    int B = x->shape[0], T = x->shape[1], C = x->shape[2];
    qkv_tensor *y = qkv_tensor_new(f->ctx.arena, QKV_SHAPE(B, n, C));
    ck_assert_qkv(y);
    for (int b = 0; b < B; b++)
        memcpy(y->data + (size_t)b * n * C, x->data + ((size_t)b * T + t0) * C,
               (size_t)n * C * sizeof(qkv_real));
    return y;
}

/* The same values at position t of (B,T,C) tensors x and y (bit for bit), for every b. */
bool same_position(const qkv_tensor *x, const qkv_tensor *y, int t)
{
    int B = x->shape[0], T = x->shape[1], C = x->shape[2];
    for (int b = 0; b < B; b++)
        if (memcmp(x->data + ((size_t)b * T + t) * C, y->data + ((size_t)b * T + t) * C,
                   (size_t)C * sizeof(qkv_real)) != 0)
            return false;
    return true;
}

double max_abs_diff(const qkv_real *x, const qkv_real *y, size_t n)
{
    double worst = 0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, fabs((double)x[i] - (double)y[i]));
    return worst;
}

void set_identity(qkv_real *w, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            w[i * n + j] = i == j;
}
