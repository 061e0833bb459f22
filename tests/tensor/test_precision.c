/* The float build agrees with the double build on every op: the op tour
 * (tests/support/ops_tour.h) run here in float against tests/dump_tour.
 *
 * Tolerance: |float - double| <= 1e-5 · (largest |double| in that block).
 * Float keeps 24 bits (relative rounding 6e-8); a tour value passes through
 * at most ~15 ops and sums of at most 32 terms, which bounds its error near
 * 1e-6 of the magnitudes involved (measured: 4e-7). Those magnitudes are the
 * block's, not the value's own: a value that is a difference of larger terms
 * (a gradient near 0) is only as accurate as its terms, hence the block
 * scale. 1e-5 leaves 25x headroom over the measured error, while a wrong
 * index or a missing term errs by ~1e-1. */
#include <stdlib.h>

#include "ops_tour.h"
#include "testing.h"

#define TOLERANCE 1e-5

/* Run $QKV_TEST_BUILD/tests/dump_tour and compare each of its blocks with fl. */
static void compare_with_double(const tour_blocks *fl)
{
    const char *dir = getenv("QKV_TEST_BUILD");
    char cmd[512];
    snprintf(cmd, sizeof cmd, "%s/tests/dump_tour", dir ? dir : "build");
    FILE *p = popen(cmd, "r");
    ck_assert_msg(p != NULL, "cannot run %s", cmd);
    double worst = 0;
    const char *worst_name = "";
    int k = 0;
    size_t n;
    char name[64];
    while (fscanf(p, "%zu %63[^\n]", &n, name) == 2) {
        ck_assert_msg(k < fl->count, "%s: more blocks than the float tour (%s)", cmd, name);
        const tour_block *b = &fl->items[k++];
        ck_assert_str_eq(name, b->name);
        ck_assert_msg(n == b->n, "%s: %zu values in double, %zu in float", name, n, b->n);
        double *d = malloc(n * sizeof *d), scale = 0;
        for (size_t i = 0; i < n; i++) {
            ck_assert_msg(fscanf(p, "%lf", &d[i]) == 1, "%s: value %zu unreadable", name, i);
            scale = fmax(scale, fabs(d[i]));
        }
        for (size_t i = 0; i < n; i++) {
            double err = fabs((double)b->values[i] - d[i]) / fmax(scale, 1e-30);
            ck_assert_msg(err <= TOLERANCE, "%s value %zu: float %.9g, double %.17g (error %.3g of "
                          "the block's largest value %.3g)",
                          name, i, (double)b->values[i], d[i], err, scale);
            if (err > worst)
                worst = err, worst_name = b->name;
        }
        free(d);
    }
    ck_assert_msg(pclose(p) == 0, "%s failed", cmd);
    ck_assert_msg(k == fl->count, "%s printed %d blocks, the float tour has %d", cmd, k, fl->count);
    fprintf(stderr, "precision: %d blocks agree; worst error %.2g (in %s), tolerance %g\n", k,
            worst, worst_name, TOLERANCE);
}

START_TEST(test_float_agrees_with_double)
{
    tour_blocks fl;
    ck_assert_msg(ops_tour_keep(1, &fl) == 0, "tour: %s", qkv_last_error());
    ck_assert_int_gt(fl.count, 30);
    compare_with_double(&fl);
    tour_blocks_free(&fl);
}
END_TEST

static Suite *precision_suite(void)
{
    Suite *s = suite_create("precision");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30); /* slow under the sanitizers on a busy machine */
    tcase_add_test(tc, test_float_agrees_with_double);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(precision_suite)
