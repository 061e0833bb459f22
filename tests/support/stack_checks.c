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

void assert_cached_steps_are_full(cached_step_fn step, void *ud, const int32_t *ids,
                                  const qkv_tensor *full, int B, int T, int V, const char *what)
{
    int32_t *in = malloc((size_t)B * 3 * sizeof *in);
    ck_assert_ptr_nonnull(in);
    for (int t0 = 0, n = 3; t0 < T; t0 += n, n = 1) {
        for (int b = 0; b < B; b++)
            for (int i = 0; i < n; i++)
                in[b * n + i] = ids[b * T + t0 + i];
        qkv_tensor *got = step(ud, in, B, n);
        ck_assert_msg(got, "%s, positions from %d: %s", what, t0, qkv_last_error());
        for (int b = 0; b < B; b++)
            for (int i = 0; i < n; i++)
                for (int v = 0; v < V; v++) {
                    double g = got->data[((size_t)b * n + i) * V + v];
                    double w = full->data[((size_t)b * T + t0 + i) * V + v];
                    ck_assert_msg(fabs(g - w) <= 1e-5 * (1 + fabs(w)),
                                  "%s, row %d, position %d: %g cached, %g full", what, b, t0 + i, g,
                                  w);
                }
    }
    free(in);
}
