/* Shape ops and embedding (double build): forward values against direct
 * index arithmetic, gradients against finite differences, and the errors. */
#include <omp.h>

#include "error_text.h"
#include "gradcheck.h"
#include "testing.h"

static qkv_tensor *param(qkv_arena *a, qkv_rng *rng, int ndim, const int *shape)
{
    qkv_tensor *t = qkv_randn(a, ndim, shape, 1, rng);
    qkv_set_requires_grad(t, true);
    return t;
}


/* The flat index of multi-index idx in a contiguous tensor of the given shape. */
static size_t flat(int ndim, const int *shape, const int *idx)
{
    size_t f = 0;
    for (int d = 0; d < ndim; d++)
        f = f * (size_t)shape[d] + (size_t)idx[d];
    return f;
}

/* Step idx to the next multi-index in row-major order. */
static void next_index(int ndim, const int *shape, int *idx)
{
    for (int d = ndim - 1; d >= 0; d--) {
        if (++idx[d] < shape[d])
            return;
        idx[d] = 0;
    }
}


/* ---- the functions under test, for gradcheck ---- */

typedef struct {
    int ndim, shape[QKV_MAX_DIMS];
} shape_arg;

static qkv_tensor *f_reshape(qkv_arena *a, qkv_tensor **in, void *ud)
{
    shape_arg *s = ud;
    return qkv_reshape(a, in[0], s->ndim, s->shape);
}

static qkv_tensor *f_transpose(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    return qkv_transpose(a, in[0]);
}

static qkv_tensor *f_permute(qkv_arena *a, qkv_tensor **in, void *ud)
{
    return qkv_permute(a, in[0], ud);
}

typedef struct {
    int n; /* number of inputs to join */
} concat_arg;

static qkv_tensor *f_concat(qkv_arena *a, qkv_tensor **in, void *ud)
{
    return qkv_concat(a, ((concat_arg *)ud)->n, in);
}

typedef struct {
    int start, len;
} slice_arg;

static qkv_tensor *f_slice(qkv_arena *a, qkv_tensor **in, void *ud)
{
    slice_arg *s = ud;
    return qkv_slice(a, in[0], s->start, s->len);
}

typedef struct {
    const int32_t *ids;
    int ndim, shape[3];
} emb_arg;

static qkv_tensor *f_embedding(qkv_arena *a, qkv_tensor **in, void *ud)
{
    emb_arg *e = ud;
    return qkv_embedding(a, in[0], e->ids, e->ndim, e->shape);
}

/* x (R, C) used five times: concat(x, slice(x), transpose(transpose(x))) · reshape(x) pieces. */
static qkv_tensor *f_reuse(qkv_arena *a, qkv_tensor **in, void *ud)
{
    (void)ud;
    qkv_tensor *x = in[0];
    int R = x->shape[0], C = x->shape[1];
    qkv_tensor *parts[3] = {x, qkv_slice(a, x, C - 1, 1), qkv_transpose(a, qkv_transpose(a, x))};
    qkv_tensor *joined = qkv_concat(a, 3, parts);
    qkv_tensor *flat_x = qkv_reshape(a, x, QKV_SHAPE(R * C));
    qkv_tensor *sq = qkv_reshape(a, qkv_mul(a, flat_x, flat_x), QKV_SHAPE(R, C));
    return qkv_concat(a, 2, (qkv_tensor *[]){joined, sq});
}

/* ---- reshape ---- */

START_TEST(test_reshape_shares_values)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 10);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = param(a, &rng, QKV_SHAPE(2, 3, 4));
    qkv_tensor *y = qkv_reshape(a, x, QKV_SHAPE(6, 4));
    ck_assert_qkv(y);
    ck_assert_ptr_eq(y->data, x->data);
    ck_assert_int_eq(y->ndim, 2);
    ck_assert_int_eq(y->shape[0], 6);
    ck_assert_int_eq(y->shape[1], 4);
    ck_assert_uint_eq(y->size, 24);
    ck_assert_ptr_null(y->grad);
    ck_assert_ptr_nonnull(y->node);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_reshape_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 11);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int trial = 0; trial < 4; trial++) {
        int shape[3];
        qkv_test_random_shape(&rng, 3, 4, shape);
        qkv_tensor *x = param(a, &rng, 3, shape);
        /* Alternate between flattening to one dim and to (d0·d1, d2, 1). */
        shape_arg s = trial % 2 ? (shape_arg){1, {(int)x->size}}
                                : (shape_arg){3, {shape[0] * shape[1], shape[2], 1}};
        double err = gradcheck(f_reshape, 1, &x, &s);
        ck_assert_msg(err <= GRADCHECK_TOL, "trial %d: error %g", trial, err);
    }
    qkv_arena_free(&a);
}
END_TEST

/* ---- permute and transpose ---- */

/* y must be x with dims reordered by perm: y[i_0..] = x[j] where j[perm[k]] = i_k. */
static void assert_permuted(const qkv_tensor *y, const qkv_tensor *x, const int *perm)
{
    int idx[QKV_MAX_DIMS] = {0}, src[QKV_MAX_DIMS];
    for (int k = 0; k < x->ndim; k++)
        ck_assert_int_eq(y->shape[k], x->shape[perm[k]]);
    for (size_t i = 0; i < y->size; i++) {
        for (int k = 0; k < y->ndim; k++)
            src[perm[k]] = idx[k];
        ck_assert_msg(y->data[i] == x->data[flat(x->ndim, x->shape, src)], "value %zu", i);
        next_index(y->ndim, y->shape, idx);
    }
}

START_TEST(test_permute_values_and_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 12);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int ndim = 1; ndim <= QKV_MAX_DIMS; ndim++)
        for (int trial = 0; trial < 3; trial++) {
            int shape[QKV_MAX_DIMS], perm[QKV_MAX_DIMS];
            qkv_test_random_shape(&rng, ndim, 4, shape);
            qkv_test_random_perm(&rng, ndim, perm);
            qkv_tensor *x = param(a, &rng, ndim, shape);
            qkv_tensor *y = qkv_permute(a, x, perm);
            ck_assert_qkv(y);
            assert_permuted(y, x, perm);
            double err = gradcheck(f_permute, 1, &x, perm);
            ck_assert_msg(err <= GRADCHECK_TOL, "ndim %d trial %d: error %g", ndim, trial, err);
        }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_split_heads)
{
    /* (B,T,H·D) -> reshape (B,T,H,D) -> permute {0,2,1,3} -> (B,H,T,D): head h of
     * token t is columns [h·D, (h+1)·D) of that token's row. */
    enum { B = 2, T = 3, H = 2, D = 4 };
    qkv_rng rng;
    qkv_rng_seed(&rng, 13);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = param(a, &rng, QKV_SHAPE(B, T, H * D));
    qkv_tensor *heads = qkv_permute(a, qkv_reshape(a, x, QKV_SHAPE(B, T, H, D)),
                                    (const int[]){0, 2, 1, 3});
    ck_assert_qkv(heads);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int t = 0; t < T; t++)
                for (int d = 0; d < D; d++)
                    ck_assert(heads->data[((b * H + h) * T + t) * D + d] ==
                              x->data[(b * T + t) * H * D + h * D + d]);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_transpose_values_and_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 14);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int ndim = 2; ndim <= QKV_MAX_DIMS; ndim++) {
        int shape[QKV_MAX_DIMS], perm[QKV_MAX_DIMS] = {0, 1, 2, 3};
        qkv_test_random_shape(&rng, ndim, 5, shape);
        perm[ndim - 2] = ndim - 1;
        perm[ndim - 1] = ndim - 2;
        qkv_tensor *x = param(a, &rng, ndim, shape);
        qkv_tensor *y = qkv_transpose(a, x);
        ck_assert_qkv(y);
        assert_permuted(y, x, perm);
        double err = gradcheck(f_transpose, 1, &x, NULL);
        ck_assert_msg(err <= GRADCHECK_TOL, "ndim %d: error %g", ndim, err);
    }
    qkv_arena_free(&a);
}
END_TEST

/* ---- concat and slice ---- */

START_TEST(test_concat_values_and_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 15);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int trial = 0; trial < 6; trial++) {
        int ndim = 1 + trial % 3, n = 1 + (int)qkv_rng_below(&rng, 3), shape[3];
        qkv_test_random_shape(&rng, ndim, 4, shape);
        qkv_tensor *in[3];
        int total = 0;
        for (int i = 0; i < n; i++) {
            shape[ndim - 1] = 1 + (int)qkv_rng_below(&rng, 4);
            total += shape[ndim - 1];
            in[i] = param(a, &rng, ndim, shape);
        }
        qkv_tensor *y = qkv_concat(a, n, in);
        ck_assert_qkv(y);
        ck_assert_int_eq(y->shape[ndim - 1], total);
        size_t rows = y->size / (size_t)total;
        for (size_t r = 0; r < rows; r++)
            for (int i = 0, off = 0; i < n; off += in[i]->shape[ndim - 1], i++)
                for (int j = 0; j < in[i]->shape[ndim - 1]; j++)
                    ck_assert(y->data[r * (size_t)total + (size_t)(off + j)] ==
                              in[i]->data[r * (size_t)in[i]->shape[ndim - 1] + (size_t)j]);
        concat_arg c = {n};
        double err = gradcheck(f_concat, n, in, &c);
        ck_assert_msg(err <= GRADCHECK_TOL, "trial %d: error %g", trial, err);
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_slice_values_and_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 16);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int trial = 0; trial < 6; trial++) {
        int ndim = 1 + trial % 3, shape[3];
        qkv_test_random_shape(&rng, ndim, 5, shape);
        int C = shape[ndim - 1];
        slice_arg s;
        s.start = (int)qkv_rng_below(&rng, (uint64_t)C);
        s.len = 1 + (int)qkv_rng_below(&rng, (uint64_t)(C - s.start));
        qkv_tensor *x = param(a, &rng, ndim, shape);
        qkv_tensor *y = qkv_slice(a, x, s.start, s.len);
        ck_assert_qkv(y);
        for (size_t i = 0; i < y->size; i++)
            ck_assert(y->data[i] == x->data[i / (size_t)s.len * (size_t)C + (size_t)s.start +
                                            i % (size_t)s.len]);
        double err = gradcheck(f_slice, 1, &x, &s);
        ck_assert_msg(err <= GRADCHECK_TOL, "trial %d: error %g", trial, err);
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_reused_tensor_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 17);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = param(a, &rng, QKV_SHAPE(3, 4));
    double err = gradcheck(f_reuse, 1, &x, NULL);
    ck_assert_msg(err <= GRADCHECK_TOL, "error %g", err);
    qkv_arena_free(&a);
}
END_TEST

/* ---- embedding ---- */

START_TEST(test_embedding_values_and_grad)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 18);
    qkv_arena *a = qkv_arena_new(1 << 16);
    for (int trial = 0; trial < 4; trial++) {
        /* More ids than rows, so ids repeat; C up to 40 spans several column blocks. */
        int V = 1 + (int)qkv_rng_below(&rng, 4), C = 1 + (int)qkv_rng_below(&rng, 40);
        emb_arg e = {NULL, 1 + trial % 3, {0}};
        qkv_test_random_shape(&rng, e.ndim, 4, e.shape);
        e.shape[0] += 4;
        int32_t ids[8 * 4 * 4];
        size_t n = 1;
        for (int d = 0; d < e.ndim; d++)
            n *= (size_t)e.shape[d];
        for (size_t i = 0; i < n; i++)
            ids[i] = (int32_t)qkv_rng_below(&rng, (uint64_t)V);
        e.ids = ids;
        qkv_tensor *table = param(a, &rng, QKV_SHAPE(V, C));
        qkv_tensor *y = qkv_embedding(a, table, ids, e.ndim, e.shape);
        ck_assert_qkv(y);
        ck_assert_int_eq(y->ndim, e.ndim + 1);
        ck_assert_int_eq(y->shape[e.ndim], C);
        for (size_t i = 0; i < n; i++)
            for (int j = 0; j < C; j++)
                ck_assert(y->data[i * (size_t)C + (size_t)j] ==
                          table->data[(size_t)ids[i] * (size_t)C + (size_t)j]);
        double err = gradcheck(f_embedding, 1, &table, &e);
        ck_assert_msg(err <= GRADCHECK_TOL, "trial %d (V %d, C %d): error %g", trial, V, C, err);
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_embedding_repeated_ids_accumulate)
{
    /* ids {2, 0, 2, 2} with loss = sum: row 2 of the gradient is 3, row 0 is 1, row 1 is 0.
     * The ids are overwritten after the call: the op must have kept its own copy. */
    enum { V = 3, C = 20 };
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *table = qkv_zeros(a, QKV_SHAPE(V, C));
    qkv_set_requires_grad(table, true);
    int32_t ids[4] = {2, 0, 2, 2};
    qkv_tensor *loss = qkv_sum(a, qkv_embedding(a, table, ids, QKV_SHAPE(2, 2)));
    ck_assert_qkv(loss);
    ids[0] = ids[1] = ids[2] = ids[3] = 1;
    ck_assert_int_eq(qkv_backward(a, loss), 0);
    for (int j = 0; j < C; j++) {
        ck_assert(table->grad[0 * C + j] == 1);
        ck_assert(table->grad[1 * C + j] == 0);
        ck_assert(table->grad[2 * C + j] == 3);
    }
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_embedding_backward_same_at_any_thread_count)
{
    enum { V = 5, C = 50, N = 64 };
    qkv_rng rng;
    qkv_rng_seed(&rng, 19);
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *table = param(a, &rng, QKV_SHAPE(V, C));
    int32_t ids[N];
    for (int i = 0; i < N; i++)
        ids[i] = (int32_t)qkv_rng_below(&rng, V);
    qkv_tensor *w = qkv_randn(a, QKV_SHAPE(N, C), 1, &rng);
    qkv_real grads[2][V * C];
    int threads[2] = {1, 2};
    int saved = omp_get_max_threads();
    for (int k = 0; k < 2; k++) {
        omp_set_num_threads(threads[k]);
        table->grad = NULL;
        qkv_tensor *loss = qkv_sum(a, qkv_mul(a, qkv_embedding(a, table, ids, QKV_SHAPE(N)), w));
        ck_assert_int_eq(qkv_backward(a, loss), 0);
        memcpy(grads[k], table->grad, sizeof grads[k]);
    }
    omp_set_num_threads(saved);
    ck_assert(memcmp(grads[0], grads[1], sizeof grads[0]) == 0);
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_embedding_errors)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *table = qkv_zeros(a, QKV_SHAPE(7, 3));
    ck_assert_ptr_null(qkv_embedding(a, table, (const int32_t[]){0, 1, 9, 2}, QKV_SHAPE(4)));
    ck_assert_error("embedding", "id 9", "position 2", "7");
    ck_assert_ptr_null(qkv_embedding(a, table, (const int32_t[]){-1}, QKV_SHAPE(1)));
    ck_assert_error("embedding", "id -1", "position 0", "7");
    ck_assert_ptr_null(qkv_embedding(a, qkv_zeros(a, QKV_SHAPE(7)), (const int32_t[]){0}, QKV_SHAPE(1)));
    ck_assert_error("embedding", "(7)", "2-D");
    ck_assert_ptr_null(qkv_embedding(a, table, (const int32_t[]){0}, QKV_SHAPE(1, 1, 1, 1)));
    ck_assert_error("embedding", "1 to 3 dims");
    ck_assert_ptr_null(qkv_embedding(a, table, (const int32_t[]){0}, QKV_SHAPE(2, 0)));
    ck_assert_error("embedding", "extent 0 in dim 1");
    ck_assert_ptr_null(qkv_embedding(a, table, NULL, QKV_SHAPE(1)));
    ck_assert_error("embedding", "ids is NULL");
    qkv_arena_free(&a);
}
END_TEST

START_TEST(test_shape_op_errors)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_tensor *x = qkv_zeros(a, QKV_SHAPE(2, 3, 4));
    ck_assert_ptr_null(qkv_reshape(a, x, QKV_SHAPE(5, 5)));
    ck_assert_error("reshape", "(2,3,4)", "(5,5)");
    ck_assert_ptr_null(qkv_reshape(a, x, QKV_SHAPE(24, 0)));
    ck_assert_error("reshape", "(24,0)");
    ck_assert_ptr_null(qkv_reshape(a, x, 5, (const int[]){1, 1, 2, 3, 4}));
    ck_assert_error("reshape", "not 5");
    ck_assert_ptr_null(qkv_permute(a, x, (const int[]){0, 2, 2}));
    ck_assert_error("permute", "{0,2,2}", "(2,3,4)");
    ck_assert_ptr_null(qkv_permute(a, x, (const int[]){0, 1, 3}));
    ck_assert_error("permute", "{0,1,3}");
    ck_assert_ptr_null(qkv_transpose(a, qkv_zeros(a, QKV_SHAPE(5))));
    ck_assert_error("transpose", "(5)");
    qkv_tensor *bad = qkv_zeros(a, QKV_SHAPE(2, 4, 4));
    ck_assert_ptr_null(qkv_concat(a, 2, (qkv_tensor *[]){x, bad}));
    ck_assert_error("concat", "(2,3,4)", "(2,4,4)");
    ck_assert_ptr_null(qkv_concat(a, 2, (qkv_tensor *[]){x, qkv_zeros(a, QKV_SHAPE(6, 4))}));
    ck_assert_error("concat", "(2,3,4)", "(6,4)");
    ck_assert_ptr_null(qkv_concat(a, 0, NULL));
    ck_assert_error("concat", "at least one");
    ck_assert_ptr_null(qkv_slice(a, x, 2, 3));
    ck_assert_error("slice", "[2, 5)", "(2,3,4)");
    ck_assert_ptr_null(qkv_slice(a, x, -1, 2));
    ck_assert_error("slice", "[-1, 1)");
    ck_assert_ptr_null(qkv_slice(a, x, 1, 0));
    ck_assert_error("slice", "[1, 1)");
    qkv_arena_free(&a);
}
END_TEST

static Suite *shape_suite(void)
{
    Suite *s = suite_create("grad_shape");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30); /* slow under the sanitizers on a busy machine */
    tcase_add_test(tc, test_reshape_shares_values);
    tcase_add_test(tc, test_reshape_grad);
    tcase_add_test(tc, test_permute_values_and_grad);
    tcase_add_test(tc, test_split_heads);
    tcase_add_test(tc, test_transpose_values_and_grad);
    tcase_add_test(tc, test_concat_values_and_grad);
    tcase_add_test(tc, test_slice_values_and_grad);
    tcase_add_test(tc, test_reused_tensor_grad);
    tcase_add_test(tc, test_embedding_values_and_grad);
    tcase_add_test(tc, test_embedding_repeated_ids_accumulate);
    tcase_add_test(tc, test_embedding_backward_same_at_any_thread_count);
    tcase_add_test(tc, test_embedding_errors);
    tcase_add_test(tc, test_shape_op_errors);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(shape_suite)
