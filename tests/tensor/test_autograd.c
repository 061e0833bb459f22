/* Autograd's bookkeeping (float build): no-grad mode records nothing,
 * gradients accumulate over backward passes and over every use of a
 * tensor, a fused op equals its two ops, intermediate gradients are
 * recycled, and errors (backward misuse, shapes, NULL inputs) keep their
 * cause. The tensor's memory is in test_tensor_memory.c. */
#include <omp.h>
#include <stdlib.h>

#include "tensor/kernels/gemm_kernel.h"
#include "tensor/op_affine.h"

#include "error_text.h"
#include "ops_tour.h"
#include "testing.h"

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

static Suite *autograd_suite(void)
{
    Suite *s = suite_create("autograd");
    TCase *tc = tcase_create("autograd");
    tcase_set_timeout(tc, 30); /* slow under the sanitizers on a busy machine */
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
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(autograd_suite)
