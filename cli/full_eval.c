/* The exact evaluation's cost (see full_eval.h). */
#include "full_eval.h"

#include <math.h>

#include "runtime.h"

/* Windows full_eval_cost times (besides the first, which warms up). */
enum { COST_WINDOWS = 8 };

double full_eval_cost(const qkv_gpt *m, const qkv_corpus *c, qkv_split split, qkv_arena *arena)
{
    const int T = m->cfg.block_size;
    int64_t n = qkv_split_windows(c, split, T, FULL_EVAL_MAX_TOKENS);
    qkv_split_loss f;
    if (qkv_gpt_eval_split(m, c, split, T, arena, &f) < 0)
        return NAN;
    int64_t k = n < COST_WINDOWS ? n : COST_WINDOWS;
    double t0 = cli_now();
    if (qkv_gpt_eval_split(m, c, split, k * T, arena, &f) < 0)
        return NAN;
    return (cli_now() - t0) * (double)n / (double)k;
}
