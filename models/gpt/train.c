/* The character GPT's side of a qkv_training run (see qkv/gpt.h): its loss
 * and evaluation on a corpus's batches, and the model saved for sampling. */
#include "qkv/gpt.h"

#include <math.h>
#include <string.h>

#include "tensor/check.h"
#include "data/bpe_internal.h"
#include "internal.h"

/* What the run's callbacks work in: the model, its text, its batches. The
 * run owns it (qkv_training_model.release). */
typedef struct gpt_batches {
    qkv_gpt *model;                 /* the model being trained (the caller's) */
    const qkv_corpus *corpus;       /* the text (the caller's) */
    qkv_batcher train;              /* training batches */
    qkv_batcher eval[2];            /* evaluation batches of the train and val splits */
    int32_t *x, *y;                 /* one batch of inputs and targets (B·T each) */
    uint8_t *config;                /* the model's config blob (a BPE tokenizer's bytes after it) */
    size_t config_len;              /* its length */
    qkv_rng *streams[3];            /* the batchers' streams, in checkpoint order */
} gpt_batches;

/* The GPT's loss for the run: draw the next training batch (all of it, see
 * qkv_loss_fn) and the mean loss of its rows [lo, hi). */
static qkv_tensor *gpt_loss(void *batches, const qkv_ctx *ctx, int lo, int hi)
{
    gpt_batches *g = batches;
    int T = g->model->cfg.block_size;
    qkv_batcher_next(&g->train, g->x, g->y);
    return qkv_gpt_loss(g->model, ctx, g->x + (size_t)lo * T, g->y + (size_t)lo * T, hi - lo, T);
}

/* The mean loss of m over iters batches from s, on rows [lo, hi) of each;
 * with a training run, over the batches qkv_training_eval_more allows
 * instead (iters is then the run's eval_iters). */
static double mean_loss_rows(const qkv_gpt *m, qkv_batcher *s, int iters, qkv_arena *arena,
                             int32_t *x, int32_t *y, int lo, int hi, qkv_training *training)
{
    if (iters < 1) {
        qkv_set_error("qkv_gpt_mean_loss: iters %d must be >= 1", iters);
        return NAN;
    }
    bool was = qkv_set_grad_enabled(false);
    qkv_ctx ctx = {.arena = arena, .train = false, .rng = NULL};
    size_t T = (size_t)s->block_size;
    double sum = 0;
    int i = 0;
    for (; training ? qkv_training_eval_more(training, i) : i < iters && !isnan(sum); i++) {
        /* A failed batch ends the work but not the asking: eval_stop may be a
         * vote of data-parallel ranks, which must all ask it as often. */
        if (isnan(sum))
            continue;
        qkv_batcher_next(s, x, y);
        qkv_tensor *loss = qkv_gpt_loss(m, &ctx, x + lo * T, y + lo * T, hi - lo, s->block_size);
        sum += loss ? loss->data[0] : NAN;
        if (!loss)
            qkv__fail_in("qkv_gpt_mean_loss");
        else if (isnan(loss->data[0]))
            qkv_set_error("qkv_gpt_mean_loss: batch %d has a NaN loss (the weights are not finite)",
                          i);
        qkv_arena_reset(arena);
    }
    qkv_set_grad_enabled(was);
    return sum / i;
}

/* The GPT's evaluation for the run: the mean loss of split `which`, on the
 * rows of each batch the run computes (all of them, but for data parallelism). */
static double gpt_eval(void *batches, qkv_training *run, int which)
{
    gpt_batches *g = batches;
    if (which != QKV_SPLIT_TRAIN && which != QKV_SPLIT_VAL) {
        qkv_set_error("gpt evaluation %d does not exist: 0 is the train split, 1 the val split",
                      which);
        return NAN;
    }
    return mean_loss_rows(g->model, &g->eval[which], run->cfg.eval_iters, run->arena, g->x, g->y,
                          run->batch_lo, run->batch_hi, run);
}

/* The batches for the run's settings: B sequences of the model's block
 * size. One seed, separate streams: changing how often we evaluate never
 * changes the training batches. 0 or -1. */
static int gpt_start(void *batches, const qkv_training *run)
{
    gpt_batches *g = batches;
    const qkv_corpus *d = g->corpus;
    int B = run->cfg.batch_size, T = g->model->cfg.block_size;
    uint64_t seed = run->cfg.seed;
    if (qkv_batcher_init(&g->train, d, QKV_SPLIT_TRAIN, B, T, seed + 1) < 0 ||
        qkv_batcher_init(&g->eval[QKV_SPLIT_TRAIN], d, QKV_SPLIT_TRAIN, B, T, seed + 2) < 0 ||
        qkv_batcher_init(&g->eval[QKV_SPLIT_VAL], d, QKV_SPLIT_VAL, B, T, seed + 3) < 0 ||
        !(g->x = qkv_alloc((size_t)B * T * sizeof *g->x)) ||
        !(g->y = qkv_alloc((size_t)B * T * sizeof *g->y)))
        return -1;
    return 0;
}

/* Free the batches and their buffers (the model and the corpus stay). */
static void gpt_release(void *batches)
{
    gpt_batches *g = batches;
    qkv_free(g->x);
    qkv_free(g->y);
    qkv_free(g->config);
    qkv_free(g);
}

/* The training model of m on corpus, whose config blob is m's config followed
 * by the tail_len bytes of tail (a BPE tokenizer's, or none); the vocabulary
 * saved is corpus's (empty for BPE ids). */
static int training_model(const char *fn, qkv_gpt *m, const qkv_corpus *corpus,
                          const unsigned char *tail, size_t tail_len, qkv_training_model *out)
{
    gpt_batches *g = qkv_calloc(sizeof *g);
    uint8_t *config = qkv_alloc(QKV_GPT_CONFIG_BYTES + tail_len);
    if (!g || !config) {
        qkv_free(g);
        qkv_free(config);
        return qkv__fail_in(fn);
    }
    *g = (gpt_batches){.model = m, .corpus = corpus, .config = config,
                       .config_len = QKV_GPT_CONFIG_BYTES + tail_len,
                       .streams = {&g->train.rng, &g->eval[QKV_SPLIT_TRAIN].rng,
                                   &g->eval[QKV_SPLIT_VAL].rng}};
    qkv_gpt_config_pack(&m->cfg, g->config);
    if (tail_len)
        memcpy(g->config + QKV_GPT_CONFIG_BYTES, tail, tail_len);
    *out = (qkv_training_model){.kind = "gpt", .model = g, .params = m->params,
                                .config = g->config, .config_len = g->config_len,
                                .vocab = &corpus->tok, .rngs = g->streams, .n_rngs = 3,
                                .loss = gpt_loss, .eval = gpt_eval, .start = gpt_start,
                                .release = gpt_release, .arena_bytes = (size_t)64 << 20};
    return 0;
}

int qkv_gpt_training_model(qkv_gpt *m, const qkv_corpus *corpus, qkv_training_model *out)
{
    const char *fn = "qkv_gpt_training_model";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "corpus", corpus) || qkv__null(fn, "out", out))
        return -1;
    if (corpus->tok.size != m->cfg.vocab_size)
        return qkv_set_error("%s: the corpus has %d distinct characters but the model's "
                             "vocabulary is %d", fn, corpus->tok.size, m->cfg.vocab_size);
    return training_model(fn, m, corpus, NULL, 0, out);
}

int qkv_gpt_training_model_bpe(qkv_gpt *m, const qkv_corpus *corpus, const qkv_bpe *bpe,
                               qkv_training_model *out)
{
    const char *fn = "qkv_gpt_training_model_bpe";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "corpus", corpus) || qkv__null(fn, "bpe", bpe) ||
        qkv__null(fn, "out", out))
        return -1;
    if (qkv_bpe_size(bpe) != m->cfg.vocab_size)
        return qkv_set_error("%s: the tokenizer has %d tokens but the model's vocabulary is %d",
                             fn, qkv_bpe_size(bpe), m->cfg.vocab_size);
    if (corpus->tok.size != 0)
        return qkv_set_error("%s: the corpus is of characters (%d), not of bpe's tokens "
                             "(qkv_bpe_corpus makes one)", fn, corpus->tok.size);
    size_t len;
    unsigned char *bytes = qkv__bpe_to_bytes(bpe, &len);
    if (!bytes)
        return qkv_set_error("%s: out of memory for the tokenizer", fn);
    int rc = training_model(fn, m, corpus, bytes, len, out);
    qkv_free(bytes);
    return rc;
}

double qkv_gpt_mean_loss(const qkv_gpt *m, qkv_batcher *s, int iters, qkv_arena *arena,
                         int32_t *x, int32_t *y)
{
    const char *fn = "qkv_gpt_mean_loss";
    if (qkv__null(fn, "m", m) || qkv__null(fn, "s", s) || qkv__null(fn, "arena", arena) ||
        qkv__null(fn, "x", x) || qkv__null(fn, "y", y))
        return NAN;
    return mean_loss_rows(m, s, iters, arena, x, y, 0, s->batch_size, NULL);
}

/* 0 when the checkpoint at path holds a model of config mc: its vocabulary
 * (the characters stored, or bpe's tokens when it carries a tokenizer) and
 * its number of values. Checked before the model is built, so a file whose
 * config describes a huge model but which holds a small one is an error
 * rather than a huge allocation. */
static int check_holds(const qkv_checkpoint *ck, const qkv_gpt_config *mc, const qkv_bpe *bpe,
                       const char *path)
{
    if (bpe && (qkv_bpe_size(bpe) != mc->vocab_size || ck->vocab.size != 0))
        return qkv_set_error("%s: its tokenizer has %d tokens and %d characters are stored, but "
                             "the model expects %d tokens",
                             path, qkv_bpe_size(bpe), ck->vocab.size, mc->vocab_size);
    if (!bpe && ck->vocab.size != mc->vocab_size)
        return qkv_set_error("%s: the vocabulary holds %d characters but the model expects %d",
                             path, ck->vocab.size, mc->vocab_size);
    uint64_t want = qkv__gpt_n_values(mc);
    if (want != ck->n_values)
        return qkv_set_error("%s: its config describes a model of %llu parameter values but it "
                             "holds %zu",
                             path, (unsigned long long)want, ck->n_values);
    return 0;
}

/* The model at path and its vocabulary; with bpe not NULL, its BPE tokenizer
 * too (NULL for a character model), else a BPE model is an error. */
static qkv_gpt *load(const char *fn, const char *path, qkv_tokenizer *vocab, qkv_bpe **bpe)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    if (!ck) {
        qkv__fail_in(fn);
        return NULL;
    }
    qkv_gpt_config mc;
    qkv_gpt *m = NULL;
    qkv_bpe *tok = NULL;
    if (qkv_gpt_config_unpack(&mc, ck->config, ck->config_len) < 0)
        goto done;
    /* A BPE model's tokenizer follows its config (and the run's settings follow
     * that); a character model's settings follow the config at once. */
    const unsigned char *after = (const unsigned char *)ck->config + QKV_GPT_CONFIG_BYTES;
    size_t tail = qkv__bpe_bytes_len(after, ck->config_len - QKV_GPT_CONFIG_BYTES);
    if (tail && !bpe) {
        qkv_set_error("%s: a model of BPE tokens (qkv_gpt_load_bpe loads it with its tokenizer)",
                      path);
        goto done;
    }
    if (tail && !(tok = qkv__bpe_from_bytes(after, tail))) {
        qkv__error_prefix("%s: its tokenizer", path);
        goto done;
    }
    if (check_holds(ck, &mc, tok, path) < 0 || !(m = qkv_gpt_new(&mc, 0)))
        goto done;
    if (qkv_checkpoint_load(ck, m->params, NULL, NULL) < 0) {
        qkv_gpt_free(m);
        m = NULL;
        goto done;
    }
    *vocab = ck->vocab;
    if (bpe)
        *bpe = tok;
    tok = NULL;
done:
    qkv_bpe_free(tok);
    qkv_checkpoint_close(ck);
    if (!m)
        qkv__fail_in(fn);
    return m;
}

qkv_gpt *qkv_gpt_load(const char *path, qkv_tokenizer *vocab)
{
    const char *fn = "qkv_gpt_load";
    if (qkv__null(fn, "path", path) || qkv__null(fn, "vocab", vocab))
        return NULL;
    return load(fn, path, vocab, NULL);
}

qkv_gpt *qkv_gpt_load_bpe(const char *path, qkv_tokenizer *vocab, qkv_bpe **bpe)
{
    const char *fn = "qkv_gpt_load_bpe";
    if (qkv__null(fn, "path", path) || qkv__null(fn, "vocab", vocab) || qkv__null(fn, "bpe", bpe))
        return NULL;
    *bpe = NULL;
    return load(fn, path, vocab, bpe);
}
