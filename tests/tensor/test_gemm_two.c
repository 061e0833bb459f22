/* qkv__gemm_two (a Linear's dx and dW in one parallel region) against two
 * qkv__gemm calls: the same bits, on every path this CPU runs, at 1 and 2
 * threads, for products of equal and of unequal size, with beta 0 and 1. */
#include <omp.h>
#include <stdlib.h>

#include "tensor/kernels/cpu.h"
#include "tensor/kernels/gemm.h"
#include "testing.h"

/* A buffer of n values in [-1, 1). */
static qkv_real *filled(qkv_rng *rng, size_t n)
{
    qkv_real *x = malloc(n * sizeof *x);
    ck_assert(x);
    for (size_t i = 0; i < n; i++)
        x[i] = (qkv_real)(2 * qkv_rng_uniform(rng) - 1);
    return x;
}

/* A copy of the n values of x. */
static qkv_real *copy_of(const qkv_real *x, size_t n)
{
    qkv_real *y = malloc(n * sizeof *y);
    ck_assert(y);
    memcpy(y, x, n * sizeof *y);
    return y;
}

/* The backward of a Linear with M rows, in inputs and out outputs, once by
 * qkv__gemm_two and once by two qkv__gemm calls: dx (M×in) and dW (out×in). */
static void check_linear_backward(int M, int in, int out, qkv_real beta_dx, int threads)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, (uint64_t)(M * 1000003 + in * 1009 + out));
    qkv_real *dy = filled(&rng, (size_t)M * out), *w = filled(&rng, (size_t)out * in);
    qkv_real *x = filled(&rng, (size_t)M * in);
    qkv_real *dx = filled(&rng, (size_t)M * in), *dw = filled(&rng, (size_t)out * in);
    qkv_real *dx_want = copy_of(dx, (size_t)M * in), *dw_want = copy_of(dw, (size_t)out * in);
    omp_set_num_threads(threads);
    qkv__gemm(1, false, false, M, in, out, 1, dy, out, 0, w, in, 0, beta_dx, dx_want, in, 0);
    qkv__gemm(1, true, false, out, in, M, 1, dy, out, 0, x, in, 0, 1, dw_want, in, 0);
    qkv__gemm_product p_dx = {false, false, M, in, out, 1, dy, out, w, in, beta_dx, dx, in};
    qkv__gemm_product p_dw = {true, false, out, in, M, 1, dy, out, x, in, 1, dw, in};
    qkv__gemm_two(&p_dx, &p_dw);
    ck_assert_msg(memcmp(dx, dx_want, (size_t)M * in * sizeof *dx) == 0,
                  "dx differs: M %d in %d out %d, %d threads", M, in, out, threads);
    ck_assert_msg(memcmp(dw, dw_want, (size_t)out * in * sizeof *dw) == 0,
                  "dW differs: M %d in %d out %d, %d threads", M, in, out, threads);
    free(dy), free(w), free(x), free(dx), free(dw), free(dx_want), free(dw_want);
}

START_TEST(test_same_as_two_gemms)
{
    /* baby's Linears, edge sizes, a product too small for threads, unequal flops */
    static const int shapes[][3] = {{768, 128, 128}, {768, 128, 512}, {100, 37, 65},
                                    {5, 3, 7},       {300, 20, 700},  {1, 64, 64}};
    for (int path = 0; path < QKV__CPU_N_PATHS; path++) {
        if (qkv_cpu_use(path) != 0)
            continue;
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (int threads = 1; threads <= 2; threads++)
                for (int beta = 0; beta <= 1; beta++)
                    check_linear_backward(shapes[s][0], shapes[s][1], shapes[s][2], (qkv_real)beta,
                                          threads);
    }
    qkv_cpu_use(QKV_CPU_DEFAULT);
}
END_TEST

static Suite *gemm_two_suite(void)
{
    Suite *s = suite_create("gemm_two");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_same_as_two_gemms);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(gemm_two_suite)
