/* qkv bench --context: what a longer context costs. The baby model trains
 * at T = 256 ... 8192 with the tokens of a step fixed (B·T = 8192), so the
 * work that grows with T is attention's alone; each T runs in a fresh child
 * process, whose peak RSS (from wait4) is then its own. Beside it the
 * memory the model accounts for: its parameters (with gradients and AdamW
 * moments) and what one step keeps in its arena at the peak (activations,
 * graph and gradients), measured by a forward and backward of its own. */
#include <math.h>
#include <stdio.h>

#include "bench.h"
#include "qkv/qkv.h"
#include "threads.h"

/* Tokens per step of every configuration of the sweep. */
enum { SWEEP_TOKENS = 8192, SWEEP_T_MIN = 256, SWEEP_T_MAX = 8192 };

/* MB of one forward and backward of a fresh model of tc's shape on tc's
 * batch (ids 0, 1, 2, ...): the step arena at its peak, before the reset,
 * i.e. every activation, graph node and gradient a training step keeps. */
static double step_memory_mb(const train_case *tc)
{
    int B = tc->batch, T = tc->model.block_size;
    size_t n = (size_t)B * T;
    qkv_gpt *m = qkv_gpt_new(&tc->model, 1);
    qkv_arena *a = qkv_arena_new(1 << 20);
    int32_t *ids = qkv_alloc(2 * n * sizeof *ids);
    double mb = NAN;
    if (m && a && ids) {
        for (size_t i = 0; i < 2 * n; i++)
            ids[i] = (int32_t)(i % (size_t)tc->model.vocab_size);
        qkv_rng rng;
        qkv_rng_seed(&rng, 1);
        qkv_ctx ctx = {.arena = a, .train = true, .rng = &rng};
        qkv_tensor *loss = qkv_gpt_loss(m, &ctx, ids, ids + n, B, T);
        if (loss && qkv_backward(a, loss) == 0)
            mb = (double)qkv_arena_used(a) / (1 << 20);
    }
    qkv_free(ids);
    qkv_arena_free(&a);
    qkv_gpt_free(m);
    return mb;
}

/* One T of the sweep (in a child): its step memory, then its timed steps. */
static result sweep_case(const void *arg)
{
    const train_case *tc = arg;
    cli_use_threads(tc->threads);
    double step_mb = step_memory_mb(tc);
    result r = bench_train(tc);
    r.arena_mb = step_mb;
    return r;
}

void bench_context(int steps, int threads)
{
    qkv_gpt_config baby = {.vocab_size = 65, .n_layer = 4, .n_head = 4, .n_embd = 128};
    printf("\ncontext sweep: baby 4L/4H/128 at B x T = %d tokens a step, %d thread%s, median of "
           "%d timed steps after 1 warm-up, each T in a process of its own\n",
           SWEEP_TOKENS, threads, threads > 1 ? "s" : "", steps);
    printf("%6s %4s %11s %11s %8s %10s %16s %12s\n", "T", "B", "ms/step", "tokens/s", "spread",
           "peak RSS", "params+AdamW", "activations");
    for (int t = SWEEP_T_MIN; t <= SWEEP_T_MAX; t *= 2) {
        baby.block_size = t;
        train_case tc = {"context sweep", baby, SWEEP_TOKENS / t, threads, 1, steps,
                         QKV_PRECISION_FP32};
        double rss = 0;
        result r = in_child(sweep_case, &tc, &rss);
        if (!r.ok) {
            printf("%6d %4d %11s\n", t, tc.batch, "failed");
            continue;
        }
        printf("%6d %4d %11.1f %11.0f %7.0f%% %7.1f MB %13.1f MB %9.1f MB\n", t, tc.batch, r.value,
               SWEEP_TOKENS / (r.value / 1000), 100 * r.spread, rss, r.params_mb, r.arena_mb);
    }
}
