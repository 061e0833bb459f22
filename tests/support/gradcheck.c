/* The tests' gradient check (see gradcheck.h). */
#include "gradcheck.h"

#include <math.h>
#include <stdio.h>

double gradcheck(gradcheck_fn f, int n_inputs, qkv_tensor **inputs, void *ud)
{
    double err = qkv_gradcheck(f, inputs, n_inputs, ud);
    if (!(err <= GRADCHECK_TOL))
        fprintf(stderr, "gradcheck: %s\n", qkv_last_error());
    return isnan(err) ? INFINITY : err;
}
