/* Small assertions shared by the test programs. */
#include "testing.h"

void qkv_test_assert_close(const qkv_tensor *t, const qkv_real *expected, double tol)
{
    for (size_t i = 0; i < t->size; i++)
        ck_assert_msg(fabs((double)t->data[i] - (double)expected[i]) <= tol,
                      "value %zu: got %.9g, expected %.9g (tolerance %g)", i, (double)t->data[i],
                      (double)expected[i], tol);
}

void qkv_test_random_shape(qkv_rng *rng, int ndim, int max_extent, int *shape)
{
    for (int i = 0; i < ndim; i++)
        shape[i] = 1 + (int)qkv_rng_below(rng, (uint64_t)max_extent);
}
