/* qkv eval: the train and validation loss of a checkpoint on a text file. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "args.h"
#include "commands.h"
#include "full_eval.h"
#include "qkv/qkv.h"
#include "threads.h"
#include "tokenizer_bits.h"
#include "tokenizer_text.h"

/* The most bytes of activations one forward of the evaluation may take: a
 * --batch whose rows need more is evaluated in chunks of rows (at least one),
 * so the memory stays bounded whatever --batch (a block-8192 model at
 * --batch 20000 was killed by the OOM killer). */
#define CHUNK_BYTES ((double)(256 << 20))

/* Rows of T tokens that one forward of m takes within CHUNK_BYTES, at most
 * batch: an upper bound of a no-grad forward's activations per token (each
 * block's dozen widths of the residual stream, its attention's rows, the
 * logits and their softmax) times T. */
static int chunk_rows(const qkv_gpt *m, int batch)
{
    const qkv_gpt_config *c = &m->cfg;
    double per_token = (16.0 * c->n_embd + (double)c->n_head * c->block_size) * c->n_layer +
                       4.0 * c->vocab_size;
    double rows = CHUNK_BYTES / (per_token * sizeof(qkv_real) * c->block_size);
    return rows >= batch ? batch : rows >= 1 ? (int)rows : 1;
}

/* The mean loss of m over iters batches of `batch` windows from split of c
 * (drawn as qkv_batcher_next draws them: the same windows in the same
 * order, whatever the chunk), each batch forwarded rows rows at a time
 * through x and y (rows·T ids each). NAN with a message on failure. */
static double mean_loss(const qkv_gpt *m, const qkv_corpus *c, qkv_split split, int batch,
                        int iters, uint64_t seed, int rows, qkv_arena *arena, int32_t *x,
                        int32_t *y)
{
    int T = m->cfg.block_size;
    qkv_batcher s;
    if (qkv_batcher_init(&s, c, split, rows, T, seed) < 0)
        return NAN;
    bool was = qkv_set_grad_enabled(false);
    qkv_ctx ctx = {.arena = arena};
    double sum = 0;
    for (int i = 0; i < iters && !isnan(sum); i++) {
        double batch_sum = 0; /* the chunks' mean losses, weighted by their rows */
        for (int done = 0; done < batch && !isnan(batch_sum); done += s.batch_size) {
            s.batch_size = batch - done < rows ? batch - done : rows;
            qkv_batcher_next(&s, x, y);
            qkv_tensor *loss = qkv_gpt_loss(m, &ctx, x, y, s.batch_size, T);
            batch_sum += loss ? (double)loss->data[0] * s.batch_size : NAN;
            qkv_arena_reset(arena);
        }
        sum += batch_sum / batch;
    }
    qkv_set_grad_enabled(was);
    return sum / iters;
}

int cmd_eval(int argc, char **argv)
{
    const char *ckpt = NULL, *data = getenv("QKV_DATA");
    int iters = 200, batch = 12, seed = 1337, threads = ARG_AUTO;
    bool full = false;
    const arg_spec specs[] = {
        {"--ckpt", ARG_STR, &ckpt, 0, 0, "CKPT", "checkpoint written by qkv train"},
        {"--data", ARG_STR, &data, 0, 0, "FILE", "text to evaluate on (default: $QKV_DATA)"},
        {"--eval-iters", ARG_INT, &iters, 1, 1e6, "N", "batches per split"},
        {"--batch", ARG_INT, &batch, 1, 1e6, "B", "sequences per batch"},
        {"--seed", ARG_INT, &seed, 0, 2147483647, "S", "seed of the batch positions"},
        {"--threads", ARG_THREADS, &threads, 1, QKV_MAX_THREADS, "N",
         "OpenMP threads, or auto: one per core that other programs leave free"},
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
    qkv_bpe *bpe = NULL;
    double bpt; /* the text's bytes per token, for bits per byte */
    qkv_gpt *m = qkv_gpt_load_bpe(ckpt, &vocab, &bpe);
    qkv_corpus *c = m ? tokenizer_corpus(data, &vocab, 0, &bpe, &bpt) : NULL;
    int T = m ? m->cfg.block_size : 0, rows = m ? chunk_rows(m, batch) : 0;
    qkv_arena *arena = c ? qkv_arena_new((size_t)16 << 20) : NULL;
    /* A chunk's inputs and targets; qkv_alloc says what it could not get. */
    size_t ids = (size_t)rows * (size_t)T * sizeof(int32_t);
    int32_t *x = arena ? qkv_alloc(ids) : NULL, *y = x ? qkv_alloc(ids) : NULL;
    if (arena && !y) {
        char why[512];
        snprintf(why, sizeof why, "%s", qkv_last_error());
        qkv_set_error("%d %d-token sequences at a time need 2 x %zu bytes for their token ids: %s",
                      rows, T, ids, why);
    }
    double loss[2] = {0, 0};
    qkv_split_loss exact[2];
    rc = 1;
    if (y && full) {
        rc = 0;
        for (int split = 0; split < 2 && rc == 0; split++)
            rc = qkv_gpt_eval_split(m, c, (qkv_split)split, FULL_EVAL_MAX_TOKENS, arena,
                                    &exact[split]) < 0;
    } else if (y) {
        rc = 0;
        for (int split = 0; split < 2 && rc == 0; split++)
            if (isnan(loss[split] = mean_loss(m, c, (qkv_split)split, batch, iters,
                                              (uint64_t)seed + (uint64_t)split, rows, arena, x, y)))
                rc = 1;
    }
    if (rc)
        fprintf(stderr, "qkv eval: %s\n", qkv_last_error());
    else if (full)
        printf("%s on %s: train loss %.4f +- %.4f, val loss %.4f +- %.4f (the whole splits: "
               "%lld + %lld windows of %d tokens); bits per byte: train %.4f, val %.4f\n", ckpt,
               data, exact[0].loss, exact[0].se, exact[1].loss, exact[1].se,
               (long long)exact[0].windows, (long long)exact[1].windows, T,
               bits_per_byte(exact[0].loss, bpt),
               bits_per_byte(exact[1].loss, bpt));
    else
        printf("%s on %s: train loss %.4f, val loss %.4f (%d batches of %d x %d each); bits per "
               "byte: train %.4f, val %.4f\n", ckpt, data, loss[0], loss[1], iters, batch, T,
               bits_per_byte(loss[0], bpt),
               bits_per_byte(loss[1], bpt));
    qkv_free(x);
    qkv_free(y);
    qkv_arena_free(&arena);
    qkv_corpus_free(c);
    qkv_gpt_free(m);
    qkv_bpe_free(bpe);
    return rc;
}
