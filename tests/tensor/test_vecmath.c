/* The vectorizable exp and tanhs of the float build against libm in double. */
#include "tensor/kernels/vecmath.h"
#include "testing.h"

START_TEST(test_exp_matches_libm)
{
    double worst = 0;
    for (double x = -87; x <= 88; x += 0.000731) {
        double want = exp((double)(float)x), got = qkv__exp((float)x);
        worst = fmax(worst, fabs(got - want) / want);
    }
    ck_assert_msg(worst < 4e-7, "exp: worst relative error %g", worst);
    ck_assert(isfinite(qkv__exp(1000.0f)) && qkv__exp(-1000.0f) >= 0);
    ck_assert(isnan(qkv__exp(NAN)) && isnan(qkv__tanh(NAN))); /* NaN stays NaN */
}
END_TEST

START_TEST(test_tanh_matches_libm)
{
    double worst = 0;
    for (double x = -20; x <= 20; x += 0.0001137) {
        double want = tanh((double)(float)x), got = qkv__tanh((float)x);
        worst = fmax(worst, fabs(got - want));
    }
    ck_assert_msg(worst < 2.5e-7, "tanh: worst absolute error %g", worst);
    ck_assert(qkv__tanh(50.0f) == 1.0f && qkv__tanh(-50.0f) == -1.0f && qkv__tanh(0.0f) == 0.0f);
}
END_TEST

START_TEST(test_tanh_fma_matches_libm)
{
    /* The FMA form (the AVX2 path's GELU): here fmaf is libm's, the same
     * values as the instruction's. Exactly ±1 past its clamp, so GELU's
     * slope has 1 - t² = 0 exactly there, as with qkv__tanh. */
    double worst = 0;
    for (double x = -20; x <= 20; x += 0.0001137) {
        double want = tanh((double)(float)x), got = qkv__tanh_fma((float)x);
        worst = fmax(worst, fabs(got - want));
    }
    ck_assert_msg(worst < 3e-7, "tanh_fma: worst absolute error %g", worst);
    ck_assert(qkv__tanh_fma(8.0f) == 1.0f && qkv__tanh_fma(-50.0f) == -1.0f);
    ck_assert(qkv__tanh_fma(0.0f) == 0.0f && isnan(qkv__tanh_fma(NAN)));
}
END_TEST

static Suite *vecmath_suite(void)
{
    Suite *s = suite_create("vecmath");
    TCase *tc = tcase_create("vecmath");
    tcase_add_test(tc, test_exp_matches_libm);
    tcase_add_test(tc, test_tanh_matches_libm);
    tcase_add_test(tc, test_tanh_fma_matches_libm);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(vecmath_suite)
