/* The tensor core's memory (float build): the arena, the allocation hook, the
 * rng, tensor creation, parameters, and a steady training step that
 * allocates nothing. Autograd's bookkeeping is in test_autograd.c. */
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

static Suite *tensor_memory_suite(void)
{
    Suite *s = suite_create("tensor_memory");
    TCase *tc = tcase_create("memory");
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
    tcase_add_test(tc, test_params);
    tcase_add_test(tc, test_steady_step_allocates_nothing);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(tensor_memory_suite)
