/* qkv bench --context: what a longer context costs. The baby model trains
 * at T = 256 ... 8192 with the tokens of a step fixed (B·T = 8192), so the
 * work that grows with T is attention's alone; each T runs in a fresh child
 * process, whose peak RSS (from wait4) is then its own. Beside it the
 * memory the model accounts for: its parameters (with gradients and AdamW
 * moments) and its step arena (activations, graph and gradients). */
#include <stdio.h>

#include "bench.h"

/* Tokens per step of every configuration of the sweep. */
enum { SWEEP_TOKENS = 8192, SWEEP_T_MIN = 256, SWEEP_T_MAX = 8192 };

void bench_context(int steps, int threads)
{
    qkv_gpt_config baby = {.vocab_size = 65, .n_layer = 4, .n_head = 4, .n_embd = 128};
    printf("\ncontext sweep: baby 4L/4H/128 at B x T = %d tokens a step, %d thread%s, median of "
           "%d timed steps after 1 warm-up, each T in a process of its own\n",
           SWEEP_TOKENS, threads, threads > 1 ? "s" : "", steps);
    printf("%6s %4s %11s %11s %8s %10s %16s %12s\n", "T", "B", "ms/step", "tokens/s", "spread",
           "peak RSS", "params+AdamW", "step arena");
    for (int t = SWEEP_T_MIN; t <= SWEEP_T_MAX; t *= 2) {
        baby.block_size = t;
        train_case tc = {"context sweep", baby, SWEEP_TOKENS / t, threads, 1, steps};
        double rss = 0;
        result r = in_child(bench_train, &tc, &rss);
        if (!r.ok) {
            printf("%6d %4d %11s\n", t, tc.batch, "failed");
            continue;
        }
        printf("%6d %4d %11.1f %11.0f %7.0f%% %7.1f MB %13.1f MB %9.1f MB\n", t, tc.batch, r.value,
               SWEEP_TOKENS / (r.value / 1000), 100 * r.spread, rss, r.params_mb, r.arena_mb);
    }
}
