/* Print the op tour (see tests/support/ops_tour.h) in double precision, for
 * tests/test_precision: per block a line "n name", then n values (%.17g). */
#include <stdio.h>

#include "ops_tour.h"

static void print_block(void *ud, const char *name, const qkv_real *values, size_t n)
{
    (void)ud;
    printf("%zu %s\n", n, name);
    for (size_t i = 0; i < n; i++)
        printf("%.17g\n", (double)values[i]);
}

int main(void)
{
    if (ops_tour(1, print_block, NULL) < 0) {
        fprintf(stderr, "dump_tour: %s\n", qkv_last_error());
        return 1;
    }
    return 0;
}
