/* qkv eval: the train and validation loss of a checkpoint on a text file. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "commands.h"
#include "full_eval.h"
#include "qkv/qkv.h"
#include "threads.h"

int cmd_eval(int argc, char **argv)
{
    const char *ckpt = NULL, *data = getenv("QKV_DATA");
    int iters = 200, batch = 12, seed = 1337, threads = omp_get_num_procs();
    bool full = false;
    const arg_spec specs[] = {
        {"--ckpt", ARG_STR, &ckpt, 0, 0, "CKPT", "checkpoint written by qkv train"},
        {"--data", ARG_STR, &data, 0, 0, "FILE", "text to evaluate on (default: $QKV_DATA)"},
        {"--eval-iters", ARG_INT, &iters, 1, 1e6, "N", "batches per split"},
        {"--batch", ARG_INT, &batch, 1, 1e6, "B", "sequences per batch"},
        {"--seed", ARG_INT, &seed, 0, 2147483647, "S", "seed of the batch positions"},
        {"--threads", ARG_INT, &threads, 1, QKV_MAX_THREADS, "N", "OpenMP threads"},
        {"--full", ARG_FLAG, &full, 0, 0, NULL,
         "read each split whole, window after window (up to 500k tokens), not --eval-iters "
         "random batches; the losses with their standard errors"},
    };
    const arg_cmd cmd = {"eval", "Mean loss of a checkpoint on the train and validation splits "
                         "(first 90% / last 10%) of a text.", "", specs,
                         (int)(sizeof specs / sizeof specs[0]), 0};
    const char *pos[1];
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc >= 0)
        return rc;
    if (!ckpt)
        return args_error(&cmd, "--ckpt is required");
    if (!data)
        return args_error(&cmd, "no text: give --data FILE or set QKV_DATA");
    cli_use_threads(threads);
    qkv_tokenizer vocab;
    qkv_gpt *m = qkv_gpt_load(ckpt, &vocab);
    qkv_corpus *c = m ? qkv_corpus_load(data, &vocab) : NULL;
    int T = m ? m->cfg.block_size : 0;
    qkv_arena *arena = c ? qkv_arena_new((size_t)16 << 20) : NULL;
    /* The batch's inputs and targets; qkv_alloc says what it could not get. */
    size_t ids = (size_t)batch * (size_t)T * sizeof(int32_t);
    int32_t *x = arena ? qkv_alloc(ids) : NULL, *y = x ? qkv_alloc(ids) : NULL;
    if (arena && !y) {
        char why[512];
        snprintf(why, sizeof why, "%s", qkv_last_error());
        qkv_set_error("--batch %d of %d-token sequences needs 2 x %zu bytes for its token ids: %s",
                      batch, T, ids, why);
    }
    double loss[2] = {0, 0};
    full_loss exact[2];
    rc = 1;
    if (y && full) {
        rc = 0;
        for (int split = 0; split < 2 && rc == 0; split++)
            rc = full_eval(m, c, (qkv_split)split, full_eval_windows(m, c, (qkv_split)split),
                           arena, &exact[split]) < 0;
    } else if (y) {
        rc = 0;
        for (int split = 0; split < 2 && rc == 0; split++) {
            qkv_batcher s;
            if (qkv_batcher_init(&s, c, (qkv_split)split, batch, T, (uint64_t)seed + (uint64_t)split) < 0)
                rc = 1;
            else if (isnan(loss[split] = qkv_gpt_mean_loss(m, &s, iters, arena, x, y)))
                rc = 1;
        }
    }
    if (rc)
        fprintf(stderr, "qkv eval: %s\n", qkv_last_error());
    else if (full)
        printf("%s on %s: train loss %.4f +- %.4f, val loss %.4f +- %.4f (the whole splits: "
               "%lld + %lld windows of %d tokens)\n", ckpt, data, exact[0].loss, exact[0].se,
               exact[1].loss, exact[1].se, (long long)exact[0].windows,
               (long long)exact[1].windows, T);
    else
        printf("%s on %s: train loss %.4f, val loss %.4f (%d batches of %d x %d each)\n", ckpt, data,
               loss[0], loss[1], iters, batch, T);
    qkv_free(x);
    qkv_free(y);
    qkv_arena_free(&arena);
    qkv_corpus_free(c);
    qkv_gpt_free(m);
    return rc;
}
