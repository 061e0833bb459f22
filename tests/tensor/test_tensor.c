/* The tensor core (float build): arena, allocation hook, rng, tensor
 * creation, autograd bookkeeping, error reporting and parameters. */
#include <omp.h>
#include <stdlib.h>

#include "tensor/kernels/gemm_kernel.h"
#include "tensor/op_affine.h"

#include "error_text.h"
#include "ops_tour.h"
#include "testing.h"

static bool aligned(const void *p) { return (uintptr_t)p % QKV_ALIGN == 0; }

/* ---- arena ---- */

START_TEST(test_arena_alignment)
{
    qkv_arena *a = qkv_arena_new(1 << 12);
    size_t sizes[] = {1, 3, 64, 65, 100, 0, 7}, used = 0;
    unsigned char *prev = NULL;
    size_t prev_size = 0;
    for (int i = 0; i < 7; i++) {
        unsigned char *p = qkv_arena_alloc(a, sizes[i]);
        ck_assert_ptr_nonnull(p);
        ck_assert_msg(aligned(p), "allocation %d not aligned", i);
        ck_assert(!prev || p >= prev + prev_size); /* no overlap */
        memset(p, 0xab, sizes[i]);
        prev = p, prev_size = sizes[i];
        used += (sizes[i] + QKV_ALIGN - 1) / QKV_ALIGN * QKV_ALIGN;
    }
    ck_assert_uint_eq(qkv_arena_used(a), used);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_arena_reset_reuses_memory)
{
    qkv_arena *a = qkv_arena_new(1 << 12);
    unsigned char *first = qkv_arena_alloc(a, 100);
    memset(first, 0xff, 100);
    qkv_arena_alloc(a, 200);
    qkv_arena_reset(a);
    ck_assert_uint_eq(qkv_arena_used(a), 0);
    unsigned char *again = qkv_arena_calloc(a, 100);
    ck_assert_ptr_eq(again, first);
    for (int i = 0; i < 100; i++)
        ck_assert_int_eq(again[i], 0); /* calloc zeroes reused memory */
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_arena_growth_then_merge)
{
    qkv_arena *a = qkv_arena_new(4096);
    ck_assert_uint_eq(qkv_arena_capacity(a), 4096);
    uint64_t before = qkv_alloc_count();
    unsigned char *p[4];
    for (int i = 0; i < 4; i++) { /* 12 KiB: twice beyond the first block */
        p[i] = qkv_arena_alloc(a, 3000);
        ck_assert_ptr_nonnull(p[i]);
        ck_assert(aligned(p[i]));
        memset(p[i], i, 3000);
    }
    for (int i = 0; i < 4; i++) /* growing never moves earlier allocations */
        ck_assert_int_eq(p[i][2999], i);
    size_t grown = qkv_arena_capacity(a);
    ck_assert_uint_gt(grown, 4096);
    ck_assert_uint_gt(qkv_alloc_count(), before);
    qkv_arena_reset(a); /* merges the blocks into one of the whole capacity */
    ck_assert_uint_eq(qkv_arena_capacity(a), grown);
    before = qkv_alloc_count();
    unsigned char *q = qkv_arena_alloc(a, 3000);
    for (int i = 1; i < 4; i++) /* the same requests now fit one block, back to back */
        ck_assert_ptr_eq(qkv_arena_alloc(a, 3000), q + (size_t)i * 3008);
    ck_assert_uint_eq(qkv_alloc_count(), before);
    ck_assert_uint_eq(qkv_arena_capacity(a), grown);
    /* A request larger than the whole arena still succeeds. */
    unsigned char *big = qkv_arena_alloc(a, 10 * grown);
    ck_assert_ptr_nonnull(big);
    memset(big, 1, 10 * grown);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_arena_absurd_request_fails)
{
    qkv_arena *a = qkv_arena_new(4096);
    qkv_clear_error();
    ck_assert_ptr_null(qkv_arena_alloc(a, SIZE_MAX - 10));
    ck_assert_error("too large");
    qkv_arena_free(&a);
}
END_TEST

/* ---- allocation hook ---- */

static int hook_allocs, hook_frees;
static void *counting_alloc(size_t n)
{
    hook_allocs++;
    return malloc(n);
}
static void counting_free(void *p)
{
    hook_frees++;
    free(p);
}

START_TEST(test_alloc_aligned_counted_and_hooked)
{
    uint64_t before = qkv_alloc_count();
    void *p = qkv_alloc(1), *q = qkv_calloc(1000);
    ck_assert(aligned(p) && aligned(q));
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(((unsigned char *)q)[i], 0);
    ck_assert_uint_eq(qkv_alloc_count(), before + 2);
    qkv_free(p);
    qkv_free(q);
    qkv_free(NULL);
    qkv_set_allocator(counting_alloc, counting_free);
    qkv_arena *a = qkv_arena_new(100);
    qkv_arena_free(&a);
    qkv_set_allocator(NULL, NULL);
    ck_assert_int_eq(hook_allocs, 2); /* the arena and its first block */
    ck_assert_int_eq(hook_frees, 2);
    /* Only a release hook: the default allocation is handed to it as it is. */
    qkv_set_allocator(NULL, counting_free);
    qkv_free(qkv_alloc(10));
    qkv_set_allocator(NULL, NULL);
    ck_assert_int_eq(hook_frees, 3);
}
END_TEST

/* ---- rng ---- */

START_TEST(test_rng_known_values)
{
    /* splitmix64-seeded xoshiro256**, from an independent Python transcription
     * of the reference algorithms: a change of generator would break every
     * saved run, so it must not go unnoticed. */
    static const uint64_t seed42[4] = {0x15780b2e0c2ec716ULL, 0x6104d9866d113a7eULL,
                                       0xae17533239e499a1ULL, 0xecb8ad4703b360a1ULL};
    static const uint64_t seed0[2] = {0x99ec5f36cb75f2b4ULL, 0xbf6e1f784956452aULL};
    qkv_rng r;
    qkv_rng_seed(&r, 42);
    for (int i = 0; i < 4; i++)
        ck_assert_msg(qkv_rng_u64(&r) == seed42[i], "seed 42 value %d", i);
    qkv_rng_seed(&r, 0);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(qkv_rng_u64(&r) == seed0[i], "seed 0 value %d", i);
}
END_TEST

START_TEST(test_rng_same_seed_same_sequence)
{
    qkv_rng a, b, c;
    qkv_rng_seed(&a, 1234);
    qkv_rng_seed(&b, 1234);
    qkv_rng_seed(&c, 1235);
    int differ = 0;
    for (int i = 0; i < 1000; i++) {
        uint64_t x = qkv_rng_u64(&a);
        ck_assert(x == qkv_rng_u64(&b));
        differ += x != qkv_rng_u64(&c);
    }
    ck_assert_int_eq(differ, 1000);
    /* The state is plain data: a copy continues identically (checkpoint resume). */
    qkv_rng saved = a;
    double u = qkv_rng_uniform(&a), n = qkv_rng_normal(&a);
    ck_assert(u == qkv_rng_uniform(&saved) && n == qkv_rng_normal(&saved));
}
END_TEST

START_TEST(test_rng_distributions)
{
    /* 20000 draws: means within 5 standard errors of the true values. */
    enum { N = 20000 };
    qkv_rng r;
    qkv_rng_seed(&r, 5);
    double su = 0, sn = 0, sn2 = 0;
    int counts[7] = {0};
    for (int i = 0; i < N; i++) {
        double u = qkv_rng_uniform(&r);
        ck_assert(u >= 0 && u < 1);
        su += u;
        double n = qkv_rng_normal(&r);
        ck_assert(isfinite(n));
        sn += n, sn2 += n * n;
        uint64_t k = qkv_rng_below(&r, 7);
        ck_assert_uint_lt(k, 7);
        counts[k]++;
    }
    ck_assert_double_eq_tol(su / N, 0.5, 5 * sqrt(1.0 / 12 / N));
    ck_assert_double_eq_tol(sn / N, 0, 5 * sqrt(1.0 / N));
    ck_assert_double_eq_tol(sn2 / N, 1, 5 * sqrt(2.0 / N));
    for (int k = 0; k < 7; k++)
        ck_assert_double_eq_tol(counts[k], N / 7.0, 5 * sqrt(N / 7.0));
    ck_assert_uint_eq(qkv_rng_below(&r, 1), 0);
}
END_TEST

/* ---- tensors ---- */

static void check_shape_args(int ndim, const int *shape)
{
    ck_assert_int_eq(ndim, 3);
    ck_assert(shape[0] == 2 && shape[1] == 3 && shape[2] == 4);
}

START_TEST(test_shape_macro)
{
    check_shape_args(QKV_SHAPE(2, 3, 4));
    qkv_arena *a = qkv_arena_new(4096);
    qkv_tensor *t = qkv_zeros(a, QKV_SHAPE(7));
    ck_assert(t->ndim == 1 && t->shape[0] == 7 && t->size == 7);
    qkv_arena_free(&a);
}
END_TEST

/* A fresh tensor is a leaf with no gradient. */
static void assert_fresh(const qkv_tensor *t, int ndim, const int *shape, size_t size)
{
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t->ndim, ndim);
    for (int i = 0; i < ndim; i++)
        ck_assert_int_eq(t->shape[i], shape[i]);
    ck_assert_uint_eq(t->size, size);
    ck_assert(aligned(t->data));
    ck_assert(!t->requires_grad && !t->grad && !t->node && !t->name);
}

START_TEST(test_creation)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *z = qkv_zeros(a, QKV_SHAPE(2, 3)), *o = qkv_ones(a, QKV_SHAPE(4, 1, 2));
    assert_fresh(z, QKV_SHAPE(2, 3), 6);
    assert_fresh(o, QKV_SHAPE(4, 1, 2), 8);
    for (int i = 0; i < 6; i++)
        ck_assert(z->data[i] == 0);
    for (int i = 0; i < 8; i++)
        ck_assert(o->data[i] == 1);
    qkv_real v[6] = {1, -2, 3.5f, 4, 5, 6};
    qkv_tensor *f = qkv_from_array(a, QKV_SHAPE(3, 2), v);
    assert_fresh(f, QKV_SHAPE(3, 2), 6);
    qkv_test_assert_close(f, v, 0);
    qkv_tensor *n = qkv_tensor_new(a, QKV_SHAPE(2, 2, 2, 2));
    assert_fresh(n, QKV_SHAPE(2, 2, 2, 2), 16);

    qkv_rng r1, r2;
    qkv_rng_seed(&r1, 3);
    qkv_rng_seed(&r2, 3);
    qkv_tensor *g = qkv_randn(a, QKV_SHAPE(50), 0.5f, &r1);
    assert_fresh(g, QKV_SHAPE(50), 50);
    for (int i = 0; i < 50; i++) /* drawn in order, scaled by std */
        ck_assert(g->data[i] == (qkv_real)(0.5f * qkv_rng_normal(&r2)));
    qkv_tensor *u = qkv_rand_uniform(a, QKV_SHAPE(1000), -2, 3, &r1);
    assert_fresh(u, QKV_SHAPE(1000), 1000);
    qkv_real lo = 3, hi = -2;
    for (int i = 0; i < 1000; i++)
        lo = fminf(lo, u->data[i]), hi = fmaxf(hi, u->data[i]);
    ck_assert(lo >= -2 && lo < -1.9f && hi < 3 && hi > 2.9f);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_creation_rejects_bad_shapes)
{
    qkv_arena *a = qkv_arena_new(4096);
    ck_assert_ptr_null(qkv_zeros(a, 0, (const int[]){1}));
    ck_assert_error("1 to 4 dimensions", "not 0");
    ck_assert_ptr_null(qkv_zeros(a, QKV_SHAPE(1, 1, 1, 1, 1)));
    ck_assert_error("not 5");
    ck_assert_ptr_null(qkv_ones(a, QKV_SHAPE(2, 0)));
    ck_assert_error("dimension 1", "is 0");
    ck_assert_ptr_null(qkv_tensor_new(a, QKV_SHAPE(-3)));
    ck_assert_error("dimension 0", "is -3");
    ck_assert_ptr_null(qkv_tensor_new(a, QKV_SHAPE(1 << 30, 1 << 30, 1 << 30, 1 << 30)));
    ck_assert_error("too large");
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_shape_str_and_same_shape)
{
    qkv_arena *a = qkv_arena_new(4096);
    qkv_tensor *x = qkv_zeros(a, QKV_SHAPE(2, 30, 4)), *y = qkv_zeros(a, QKV_SHAPE(2, 30, 4));
    qkv_tensor *z = qkv_zeros(a, QKV_SHAPE(2, 30)), *w = qkv_zeros(a, QKV_SHAPE(2, 30, 5));
    char s[64];
    ck_assert_str_eq(qkv_shape_str(x, s, sizeof s), "(2,30,4)");
    ck_assert_str_eq(qkv_shape_str(qkv_zeros(a, QKV_SHAPE(1)), s, sizeof s), "(1)");
    ck_assert_str_eq(qkv_shape_str(x, s, 5), "(2,3"); /* truncated, still terminated */
    ck_assert(qkv_same_shape(x, y) && !qkv_same_shape(x, z) && !qkv_same_shape(x, w));
    qkv_arena_free(&a);
}
END_TEST

/* ---- autograd ---- */

/* A 2x2 leaf {1, 2, 3, 4} that wants a gradient. */
static qkv_tensor *leaf(qkv_arena *a)
{
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(2, 2), (qkv_real[]){1, 2, 3, 4});
    qkv_set_requires_grad(x, true);
    return x;
}

START_TEST(test_no_grad_mode_records_nothing)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = leaf(a);
    ck_assert(qkv_grad_enabled());
    ck_assert(qkv_set_grad_enabled(false) == true);
    ck_assert(!qkv_grad_enabled());
    qkv_tensor *ys[] = {qkv_mul(a, x, x), qkv_gelu(a, x), qkv_matmul(a, x, x, false, true),
                        qkv_reshape(a, x, QKV_SHAPE(4)), qkv_transpose(a, x), qkv_sum(a, x),
                        qkv_embedding(a, x, (const int32_t[]){1}, QKV_SHAPE(1))};
    for (size_t i = 0; i < sizeof ys / sizeof *ys; i++) {
        ck_assert_qkv(ys[i]);
        ck_assert_msg(!ys[i]->node && !ys[i]->requires_grad, "op %zu recorded a node", i);
    }
    ck_assert_int_eq(qkv_backward(a, ys[5]), -1);
    ck_assert_error("backward", "does not depend", "no-grad");
    ck_assert(qkv_set_grad_enabled(true) == false);
    ck_assert_ptr_nonnull(qkv_mul(a, x, x)->node);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_grads_accumulate_over_two_backwards)
{
    /* loss = Σ x², dloss/dx = 2x; two backward calls must give exactly 4x,
     * whether through two graphs or twice through one kept for it. */
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int same_graph = 0; same_graph < 2; same_graph++) {
        qkv_tensor *x = leaf(a);
        qkv_tensor *loss = qkv_sum(a, qkv_mul(a, x, x));
        ck_assert_int_eq(same_graph ? qkv_backward_retain_graph(a, loss) : qkv_backward(a, loss), 0);
        if (!same_graph)
            loss = qkv_sum(a, qkv_mul(a, x, x));
        ck_assert_int_eq(qkv_backward(a, loss), 0);
        qkv_test_assert_close(x, (qkv_real[]){1, 2, 3, 4}, 0);
        for (int i = 0; i < 4; i++)
            ck_assert_msg(x->grad[i] == 4 * x->data[i], "same graph %d: grad %d is %g",
                          same_graph, i, (double)x->grad[i]);
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_every_backward_accumulates)
{
    /* Two backward passes through the op tour (a graph using every op) must
     * give twice one pass's gradient at every input: a backward that assigned
     * (=) instead of adding (+=) into an input's gradient would drop the first
     * pass, or the share of the other ops that use the same input. Float
     * rounding differs between 2·(a + b) and a + b + a + b, hence 1e-5 of the
     * block's largest value. */
    tour_blocks one, two;
    ck_assert_msg(ops_tour_keep(1, &one) == 0 && ops_tour_keep(2, &two) == 0, "tour: %s",
                  qkv_last_error());
    ck_assert_int_eq(one.count, two.count);
    int grads = 0;
    for (int k = 0; k < one.count; k++) {
        const tour_block *b1 = &one.items[k], *b2 = &two.items[k];
        ck_assert_str_eq(b1->name, b2->name);
        bool is_grad = strncmp(b1->name, "grad ", 5) == 0;
        grads += is_grad;
        double scale = 0;
        for (size_t i = 0; i < b1->n; i++)
            scale = fmax(scale, fabs(2.0 * b1->values[i]));
        for (size_t i = 0; i < b1->n; i++) {
            double want = is_grad ? 2.0 * b1->values[i] : b1->values[i];
            ck_assert_msg(fabs(b2->values[i] - want) <= 1e-5 * scale, "%s value %zu: %g, want %g",
                          b1->name, i, (double)b2->values[i], want);
        }
    }
    ck_assert_int_gt(grads, 5);
    tour_blocks_free(&one);
    tour_blocks_free(&two);
}
END_TEST

START_TEST(test_tensor_used_twice_gets_both_contributions)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = leaf(a);
    /* d/dx Σ (x·x + x) = 2x + 1; d/dx Σ (x + x) = 2 (both operands of one op). */
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_add(a, qkv_mul(a, x, x), x))), 0);
    for (int i = 0; i < 4; i++)
        ck_assert(x->grad[i] == 2 * x->data[i] + 1);
    x->grad = NULL;
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_add(a, x, x))), 0);
    for (int i = 0; i < 4; i++)
        ck_assert(x->grad[i] == 2);
    /* The same for a computed tensor h = 2x, whose gradient buffer the first
     * backward to reach it fills (=) rather than adds to: d/dx Σ h·h = 8x,
     * d/dx Σ (h·h + h) = 8x + 2. */
    for (int plus_h = 0; plus_h < 2; plus_h++) {
        x->grad = NULL;
        qkv_tensor *h = qkv_add(a, x, x), *hh = qkv_mul(a, h, h);
        ck_assert_int_eq(qkv_backward(a, qkv_sum(a, plus_h ? qkv_add(a, hh, h) : hh)), 0);
        for (int i = 0; i < 4; i++)
            ck_assert_msg(x->grad[i] == 8 * x->data[i] + 2 * plus_h, "h·h%s: grad %g at %d",
                          plus_h ? " + h" : "", (double)x->grad[i], i);
    }
    qkv_arena_free(&a);
}
END_TEST

/* act(a, x) as the op of its own that the fused product stands for. */
static qkv_tensor *unfused_act(qkv_arena *a, qkv_activation act, qkv_tensor *x)
{
    switch (act) { /* every value named: one without its op here is a -Wswitch warning */
    case QKV_ACTIVATION_GELU:
        break;
    case QKV_ACTIVATION_RELU2:
        return qkv_relu2(a, x);
    case QKV_ACTIVATION_SILU:
        return qkv_silu(a, x);
    }
    return qkv_gelu(a, x);
}

/* The fused Linear + act of an M×K x and an N×K w (and an N bias when asked)
 * gives the same bits as the two ops, its values and every gradient. */
static void check_affine_act(qkv_activation act, int M, int N, int K, bool bias, qkv_rng *rng,
                             const char *where)
{
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(M, K), 1, rng);
    qkv_tensor *w = qkv_randn(a, QKV_SHAPE(N, K), 0.2, rng);
    qkv_tensor *b = bias ? qkv_randn(a, QKV_SHAPE(N), 0.5, rng) : NULL;
    qkv_tensor *ts[3] = {x, w, b}, *r[2];
    qkv_real *grads[2][3];
    for (int fused = 0; fused < 2; fused++) {
        for (int i = 0; i < 3; i++)
            if (ts[i]) {
                qkv_set_requires_grad(ts[i], true);
                ts[i]->grad = NULL;
            }
        r[fused] = fused ? qkv__affine_act(a, x, w, b, act) : unfused_act(a, act, qkv_affine(a, x, w, b));
        ck_assert_ptr_nonnull(r[fused]);
        ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, r[fused], r[fused]))), 0);
        for (int i = 0; i < 3; i++)
            grads[fused][i] = ts[i] ? ts[i]->grad : NULL;
    }
    ck_assert_msg(memcmp(r[0]->data, r[1]->data, r[0]->size * sizeof(qkv_real)) == 0,
                  "%s: values differ", where);
    for (int i = 0; i < 3; i++)
        if (ts[i])
            ck_assert_msg(memcmp(grads[0][i], grads[1][i], ts[i]->size * sizeof(qkv_real)) == 0,
                          "%s: gradient %d differs", where, i);
    qkv_arena_free(&a);
}

START_TEST(test_affine_act_is_the_two_ops)
{
    /* The MLP's fused Linear + GELU or ReLU², against the two ops: with and
     * without a bias, for few rows (the dot-product path), a K deeper than one
     * cache block, at 1 and 2 threads, on every GEMM kernel this CPU runs (each
     * hands the epilogue blocks of its own shape). */
    static const int shapes[][3] = {{3, 40, 24}, {70, 150, 45}, {200, 96, 700}};
#define NAME(constant, word, help) [constant] = #word,
    static const char *const names[] = {QKV_ACTIVATIONS(NAME)};
#undef NAME
    qkv_rng rng;
    qkv_rng_seed(&rng, 3);
    for (int path = 0; path < QKV__CPU_N_PATHS; path++)
        if (qkv_cpu_use(path) == 0)
            for (int act = 0; act < QKV_N_ACTIVATIONS; act++)
                for (int s = 0; s < 3; s++)
                    for (int bias = 0; bias < 2; bias++)
                        for (int threads = 1; threads <= 2; threads++) {
                            omp_set_num_threads(threads);
                            char where[96];
                            snprintf(where, sizeof where, "%s, %s, shape %d, bias %d, threads %d",
                                     qkv__gemm_active_path()->name, names[act], s, bias, threads);
                            check_affine_act((qkv_activation)act, shapes[s][0], shapes[s][1],
                                             shapes[s][2], bias, &rng, where);
                        }
    qkv_cpu_use(QKV_CPU_DEFAULT);
}
END_TEST

START_TEST(test_intermediate_grads_are_recycled)
{
    /* A chain of 40 doublings: backward holds the gradients of a link or two
     * at a time, not of all forty, and keeps only those asked for. */
    enum { N = 1000, LINKS = 40 };
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_tensor *x = qkv_ones(a, QKV_SHAPE(N)), *chain[LINKS];
    qkv_set_requires_grad(x, true);
    qkv_tensor *y = x;
    for (int k = 0; k < LINKS; k++)
        y = chain[k] = qkv_scale(a, y, 2);
    qkv_retain_grad(chain[19]);
    qkv_tensor *loss = qkv_sum(a, y);
    size_t before = qkv_arena_used(a);
    ck_assert_int_eq(qkv_backward(a, loss), 0);
    size_t grad_bytes = qkv_arena_used(a) - before;
    ck_assert_msg(grad_bytes < 6 * N * sizeof(qkv_real), "backward took %zu bytes", grad_bytes);
    for (int k = 0; k < LINKS; k++)
        if (k != 19)
            ck_assert_ptr_null(chain[k]->grad);
    ck_assert(loss->grad[0] == 1);
    for (int i = 0; i < N; i++) /* d loss/d chain[19] = 2^20 (twenty doublings follow it) */
        ck_assert(chain[19]->grad[i] == 1 << 20 && x->grad[i] == (qkv_real)(1LL << 40));
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_inputs_without_requires_grad_get_no_grad)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = leaf(a);
    qkv_tensor *c = qkv_from_array(a, QKV_SHAPE(2, 2), (qkv_real[]){5, 6, 7, 8});
    qkv_tensor *w = qkv_ones(a, QKV_SHAPE(2, 2));
    qkv_tensor *loss = qkv_sum(a, qkv_matmul(a, qkv_mul(a, x, c), w, false, false));
    ck_assert_int_eq(qkv_backward(a, loss), 0);
    ck_assert_ptr_null(c->grad);
    ck_assert_ptr_null(w->grad);
    ck_assert(!c->requires_grad && !w->requires_grad);
    /* d/dx Σ (x⊙c)·1 = 2c (each product appears in two output columns). */
    for (int i = 0; i < 4; i++)
        ck_assert(x->grad[i] == 2 * c->data[i]);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_backward_errors)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = leaf(a);
    ck_assert_int_eq(qkv_backward(a, qkv_mul(a, x, x)), -1);
    ck_assert_error("backward", "one value", "(2,2)");
    qkv_tensor *c = qkv_ones(a, QKV_SHAPE(3));
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_scale(a, c, 2))), -1);
    ck_assert_error("backward", "does not depend on any tensor that requires grad");
    qkv_set_error("sentinel");
    ck_assert_int_eq(qkv_backward(a, NULL), -1);
    ck_assert_str_eq(qkv_last_error(), "qkv_backward: input loss is NULL: an earlier call failed: sentinel");
    /* A leaf scalar that wants a gradient is its own loss: gradient 1. */
    qkv_tensor *s = qkv_ones(a, QKV_SHAPE(1));
    qkv_set_requires_grad(s, true);
    ck_assert_int_eq(qkv_backward(a, s), 0);
    ck_assert(s->grad[0] == 1);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_shape_errors_name_both_shapes)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_zeros(a, QKV_SHAPE(2, 3)), *y = qkv_zeros(a, QKV_SHAPE(4));
    ck_assert_ptr_null(qkv_add(a, x, y));
    ck_assert_error("add", "(2,3)", "(4)");
    ck_assert_ptr_null(qkv_sub(a, x, y));
    ck_assert_error("sub", "(2,3)", "(4)");
    ck_assert_ptr_null(qkv_mul(a, y, x));
    ck_assert_error("mul", "(4)", "(2,3)");
    ck_assert_ptr_null(qkv_matmul(a, x, qkv_zeros(a, QKV_SHAPE(4, 5)), false, false));
    ck_assert_error("matmul", "inner", "(2,3)", "(4,5)");
    ck_assert_ptr_null(qkv_matmul(a, qkv_zeros(a, QKV_SHAPE(2, 2, 3)),
                                  qkv_zeros(a, QKV_SHAPE(3, 3, 5)), false, false));
    ck_assert_error("matmul", "batch", "(2,2,3)", "(3,3,5)");
    ck_assert_ptr_null(qkv_concat(a, 2, (qkv_tensor *[]){x, qkv_zeros(a, QKV_SHAPE(3, 3))}));
    ck_assert_error("concat", "(2,3)", "(3,3)");
    qkv_arena_free(&a);
}
END_TEST

/* Every op given a NULL input fails naming itself and the input, and keeps
 * the first failure's message as the cause (once, through the whole chain). */
START_TEST(test_ops_given_null_keep_the_cause)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_ones(a, QKV_SHAPE(2, 2)), *n = NULL;
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    qkv_set_error("sentinel");
    qkv_tensor *results[] = {
        qkv_add(a, n, x), qkv_add(a, x, n), qkv_sub(a, n, x), qkv_sub(a, x, n),
        qkv_mul(a, n, x), qkv_mul(a, x, n), qkv_scale(a, n, 2), qkv_sum(a, n), qkv_mean(a, n),
        qkv_matmul(a, n, x, false, false), qkv_matmul(a, x, n, true, true), qkv_relu(a, n),
        qkv_gelu(a, n), qkv_dropout(a, n, 0.5f, &rng, true), qkv_reshape(a, n, QKV_SHAPE(4)),
        qkv_transpose(a, n), qkv_permute(a, n, (const int[]){1, 0}),
        qkv_concat(a, 2, (qkv_tensor *[]){x, n}), qkv_slice(a, n, 0, 1),
        qkv_embedding(a, n, (const int32_t[]){0}, QKV_SHAPE(1)),
    };
    for (size_t i = 0; i < sizeof results / sizeof *results; i++)
        ck_assert_msg(!results[i], "op %zu returned a tensor", i);
    ck_assert_str_eq(qkv_last_error(), "qkv_embedding: input table is NULL: an earlier call failed: sentinel");
    qkv_arena_free(&a);
}
END_TEST

/* ---- parameters ---- */

START_TEST(test_params)
{
    qkv_params *p = qkv_params_new();
    qkv_tensor *w = qkv_params_add(p, "fc.weight", QKV_SHAPE(3, 5), QKV_INIT_NORMAL, 0.02f);
    qkv_tensor *b = qkv_params_add(p, "fc.bias", QKV_SHAPE(5), QKV_INIT_ZEROS, 0);
    qkv_tensor *g = qkv_params_add(p, "ln.weight", QKV_SHAPE(5), QKV_INIT_ONES, 0);
    ck_assert(w && b && g);
    ck_assert(!w->data && !w->grad && w->requires_grad && !w->node);
    ck_assert_str_eq(w->name, "fc.weight");
    ck_assert_int_eq(p->count, 3);

    ck_assert_ptr_null(qkv_params_add(p, "fc.bias", QKV_SHAPE(5), QKV_INIT_ZEROS, 0));
    ck_assert_error("fc.bias", "twice");
    char long_name[QKV_PARAM_NAME_MAX + 1];
    memset(long_name, 'x', QKV_PARAM_NAME_MAX);
    long_name[QKV_PARAM_NAME_MAX] = '\0';
    ck_assert_ptr_null(qkv_params_add(p, long_name, QKV_SHAPE(1), QKV_INIT_ZEROS, 0));
    ck_assert_error("longer than");
    ck_assert_ptr_null(qkv_params_add(p, "bad", QKV_SHAPE(2, 0), QKV_INIT_ZEROS, 0));
    ck_assert_error("bad", "extent 0");
    ck_assert_ptr_null(qkv_params_add(p, "huge", QKV_SHAPE(1 << 30, 1 << 30, 1 << 30), QKV_INIT_ZEROS, 0));
    ck_assert_error("huge", "too large");
    ck_assert_int_eq(p->count, 3);

    qkv_rng rng, expect;
    qkv_rng_seed(&rng, 8);
    qkv_rng_seed(&expect, 8);
    ck_assert_int_eq(qkv_params_alloc(p, &rng), 0);
    for (int i = 0; i < 15; i++) /* drawn in declaration order, scaled by std */
        ck_assert(w->data[i] == (qkv_real)(0.02f * qkv_rng_normal(&expect)));
    for (int i = 0; i < 5; i++)
        ck_assert(b->data[i] == 0 && g->data[i] == 1);
    for (size_t i = 0; i < p->total; i++)
        ck_assert(p->grad[i] == 0);
    for (int i = 0; i < p->count; i++) { /* inside the flat buffers, each on a cache line */
        qkv_param *it = &p->items[i];
        ck_assert_ptr_eq(it->t->data, p->data + it->offset);
        ck_assert_ptr_eq(it->t->grad, p->grad + it->offset);
        ck_assert(aligned(it->t->data) && aligned(it->t->grad));
        ck_assert_uint_le(it->offset + it->t->size, p->total);
    }
    ck_assert_ptr_eq(qkv_params_find(p, "fc.bias")->t, b);
    ck_assert_ptr_null(qkv_params_find(p, "fc"));

    ck_assert_ptr_null(qkv_params_add(p, "late", QKV_SHAPE(1), QKV_INIT_ZEROS, 0));
    ck_assert_error("late", "after qkv_params_alloc");
    ck_assert_int_eq(qkv_params_alloc(p, &rng), -1);
    ck_assert_error("twice");

    /* Gradients flow into the flat buffer; zero_grad clears all of it. */
    qkv_arena *a = qkv_arena_new(1 << 16);
    ck_assert_int_eq(qkv_backward(a, qkv_sum(a, qkv_mul(a, qkv_add(a, w, b), w))), 0);
    ck_assert(b->grad[0] != 0 && g->grad[0] == 0);
    qkv_params_zero_grad(p);
    for (size_t i = 0; i < p->total; i++)
        ck_assert(p->grad[i] == 0);
    qkv_arena_free(&a);
    qkv_params_free(&p);
}
END_TEST

/* ---- a steady training step allocates nothing ---- */

typedef struct model {
    qkv_params *p;
    qkv_tensor *emb, *w, *b;
} model;

/* One forward + backward + update + reset, through many ops. */
static void step(model *m, qkv_arena *a, qkv_rng *rng)
{
    enum { B = 2, T = 5, C = 8, V = 11 };
    int32_t ids[B * T];
    for (int i = 0; i < B * T; i++)
        ids[i] = (int32_t)qkv_rng_below(rng, V);
    qkv_tensor *x = qkv_embedding(a, m->emb, ids, QKV_SHAPE(B, T));
    qkv_tensor *h = qkv_gelu(a, qkv_add(a, qkv_matmul(a, x, m->w, false, true), m->b));
    h = qkv_dropout(a, qkv_relu(a, h), 0.1f, rng, true);
    qkv_tensor *heads = qkv_permute(a, qkv_reshape(a, h, QKV_SHAPE(B, T, 2, C / 2)),
                                    (const int[]){0, 2, 1, 3});
    qkv_tensor *parts[2] = {qkv_slice(a, heads, 0, 1), qkv_transpose(a, heads)};
    qkv_tensor *y = qkv_concat(a, 2, (qkv_tensor *[]){qkv_reshape(a, parts[0], QKV_SHAPE(B * T * 2)),
                                                     qkv_reshape(a, parts[1], QKV_SHAPE(B * T * 2 * C / 2))});
    qkv_tensor *loss = qkv_mean(a, qkv_mul(a, y, y));
    ck_assert_qkv(loss);
    ck_assert_int_eq(qkv_backward(a, loss), 0);
    for (size_t i = 0; i < m->p->total; i++)
        m->p->data[i] -= 0.01f * m->p->grad[i];
    qkv_params_zero_grad(m->p);
    qkv_arena_reset(a);
}

START_TEST(test_steady_step_allocates_nothing)
{
    model m = {qkv_params_new(), NULL, NULL, NULL};
    m.emb = qkv_params_add(m.p, "emb", QKV_SHAPE(11, 8), QKV_INIT_NORMAL, 0.5f);
    m.w = qkv_params_add(m.p, "w", QKV_SHAPE(8, 8), QKV_INIT_NORMAL, 0.5f);
    m.b = qkv_params_add(m.p, "b", QKV_SHAPE(8), QKV_INIT_ZEROS, 0);
    qkv_rng rng;
    qkv_rng_seed(&rng, 9);
    ck_assert_int_eq(qkv_params_alloc(m.p, &rng), 0);
    qkv_arena *a = qkv_arena_new(4096); /* small: the first step must grow it */
    step(&m, a, &rng);
    size_t capacity = qkv_arena_capacity(a);
    ck_assert_uint_gt(capacity, 4096);
    uint64_t before = qkv_alloc_count();
    for (int i = 0; i < 5; i++)
        step(&m, a, &rng);
    ck_assert_uint_eq(qkv_alloc_count(), before);
    ck_assert_uint_eq(qkv_arena_capacity(a), capacity);
    qkv_arena_free(&a);
    qkv_params_free(&m.p);
}
END_TEST

static Suite *tensor_suite(void)
{
    Suite *s = suite_create("tensor");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30); /* slow under the sanitizers on a busy machine */
    tcase_add_test(tc, test_arena_alignment);
    tcase_add_test(tc, test_arena_reset_reuses_memory);
    tcase_add_test(tc, test_arena_growth_then_merge);
    tcase_add_test(tc, test_arena_absurd_request_fails);
    tcase_add_test(tc, test_alloc_aligned_counted_and_hooked);
    tcase_add_test(tc, test_rng_known_values);
    tcase_add_test(tc, test_rng_same_seed_same_sequence);
    tcase_add_test(tc, test_rng_distributions);
    tcase_add_test(tc, test_shape_macro);
    tcase_add_test(tc, test_creation);
    tcase_add_test(tc, test_creation_rejects_bad_shapes);
    tcase_add_test(tc, test_shape_str_and_same_shape);
    tcase_add_test(tc, test_no_grad_mode_records_nothing);
    tcase_add_test(tc, test_grads_accumulate_over_two_backwards);
    tcase_add_test(tc, test_every_backward_accumulates);
    tcase_add_test(tc, test_tensor_used_twice_gets_both_contributions);
    tcase_add_test(tc, test_affine_act_is_the_two_ops);
    tcase_add_test(tc, test_intermediate_grads_are_recycled);
    tcase_add_test(tc, test_inputs_without_requires_grad_get_no_grad);
    tcase_add_test(tc, test_backward_errors);
    tcase_add_test(tc, test_shape_errors_name_both_shapes);
    tcase_add_test(tc, test_ops_given_null_keep_the_cause);
    tcase_add_test(tc, test_params);
    tcase_add_test(tc, test_steady_step_allocates_nothing);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(tensor_suite)
