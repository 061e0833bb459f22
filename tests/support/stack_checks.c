/* The checks the stacks' suites share (see stack_checks.h). */
#include "stack_checks.h"
#include "testing.h"

#include <math.h>
#include <stdlib.h>

double plain_mean_cross_entropy(const qkv_real *logits, const int32_t *targets, int rows, int V)
{
    double sum = 0;
    int counted = 0;
    for (int r = 0; r < rows; r++) {
        if (targets[r] < 0)
            continue;
        const qkv_real *z = logits + (size_t)r * V;
        double norm = 0;
        for (int v = 0; v < V; v++)
            norm += exp((double)z[v]);
        sum += log(norm) - z[targets[r]];
        counted++;
    }
    return sum / counted;
}

void assert_cache_changes_no_token(qkv_lm *without, qkv_lm *with, int B, const int32_t *prompts,
                                   int n_prompt, int n_new, const qkv_sample_opts *opts,
                                   const char *what)
{
    ck_assert_msg(without && with, "%s: %s", what, qkv_last_error());
    ck_assert(!without->cached && with->cached);
    size_t n = (size_t)B * n_new;
    int32_t *out = malloc(3 * n * sizeof *out);
    ck_assert_ptr_nonnull(out);
    qkv_lm *lms[3] = {without, with, with};
    for (int run = 0; run < 3; run++) {
        qkv_rng rng;
        qkv_rng_seed(&rng, 5);
        ck_assert_msg(qkv_generate_batch(lms[run], B, prompts, n_prompt, n_new, opts, &rng, -1,
                                         out + run * n) == 0,
                      "%s, run %d: %s", what, run, qkv_last_error());
    }
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(out[i] == out[n + i] && out[i] == out[2 * n + i],
                      "%s: token %zu is %d without the cache, %d with it, %d with it again", what,
                      i, out[i], out[n + i], out[2 * n + i]);
    free(out);
}
