/* Your own small transformer, made of qkv's nn modules, trained on a string
 * held in memory by the library's training run, then generating text; built
 * against an installed qkv:
 *
 *     cc own_transformer.c $(pkg-config --cflags --libs qkv) \
 *         -Wl,-rpath,$(pkg-config --variable=libdir qkv) -o own_transformer
 *
 * The model is written out here rather than taken from qkv/gpt.h: token and
 * position embeddings, two causal blocks (self-attention and an MLP, each
 * pre-LayerNorm and residual), a final LayerNorm and its own lm head (a
 * Linear, not tied to the embedding). The model brings its loss and its
 * logits; the library brings the rest: the corpus and its batches
 * (qkv/data.h), the run with AdamW, the schedule, clipping, evaluation and
 * a checkpoint saved halfway and resumed in one call (qkv/training.h), and
 * the generation loop (qkv/generate.h). */
#include <qkv/qkv.h>
#include <stdio.h>
#include <string.h>

enum { N_LAYER = 2, N_HEAD = 2, N_EMBD = 32, BLOCK = 32, BATCH = 8, ITERS = 400 };

typedef struct tiny {
    qkv_params *params;      /* every parameter below, by name, in one flat buffer */
    qkv_embed wte, wpe;      /* token (V, C) and position (BLOCK, C) embeddings */
    qkv_block h[N_LAYER];    /* causal blocks */
    qkv_ln ln_f;             /* the final LayerNorm */
    qkv_linear lm_head;      /* C -> V */
    qkv_batcher batches;     /* training windows of the text: the model's own random stream */
    qkv_batcher val;         /* windows of the held-out tenth, for evaluation */
    int32_t x[BATCH * BLOCK], y[BATCH * BLOCK]; /* the current batch: inputs, next-token targets */
} tiny;

/* The model's sizes: what a checkpoint keeps to rebuild it. */
static const uint8_t CONFIG[3] = {N_LAYER, N_HEAD, N_EMBD};

/* m's parameters for a vocabulary of `vocab` bytes, drawn from seed, and
 * its two batch streams over corpus (the run seeds them). */
static int tiny_init(tiny *m, const qkv_corpus *corpus, uint64_t seed)
{
    int vocab = corpus->tok.size;
    qkv_block_config cfg = {.n_embd = N_EMBD, .n_head = N_HEAD, .n_layer = N_LAYER};
    m->params = qkv_params_new();
    if (!m->params || qkv_embed_init(&m->wte, m->params, "wte", vocab, N_EMBD, 0.02) < 0 ||
        qkv_embed_init(&m->wpe, m->params, "wpe", BLOCK, N_EMBD, 0.02) < 0)
        return -1;
    for (int l = 0; l < N_LAYER; l++) {
        char name[16];
        snprintf(name, sizeof name, "h.%d", l);
        if (qkv_block_init(&m->h[l], m->params, name, &cfg, true) < 0)
            return -1;
    }
    if (qkv_ln_init(&m->ln_f, m->params, "ln_f", N_EMBD, true) < 0 ||
        qkv_linear_init(&m->lm_head, m->params, "lm_head", N_EMBD, vocab, false, 0.02) < 0)
        return -1;
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    return qkv_params_alloc(m->params, &rng) < 0 ||
                   qkv_batcher_init(&m->batches, corpus, QKV_SPLIT_TRAIN, BATCH, BLOCK, 0) < 0 ||
                   qkv_batcher_init(&m->val, corpus, QKV_SPLIT_VAL, BATCH, BLOCK, 0) < 0
               ? -1
               : 0;
}

/* Logits (B, T, V) for token ids (B, T) at positions 0..T-1. */
static qkv_tensor *tiny_forward(const tiny *m, const qkv_ctx *ctx, const int32_t *ids, int B, int T)
{
    int32_t pos[BLOCK];
    for (int t = 0; t < T; t++)
        pos[t] = t;
    qkv_tensor *x = qkv_add(ctx->arena, qkv_embed_forward(&m->wte, ctx, ids, QKV_SHAPE(B, T)),
                            qkv_embed_forward(&m->wpe, ctx, pos, QKV_SHAPE(T))); /* (T,C) over each b */
    for (int l = 0; l < N_LAYER; l++)
        x = qkv_block_forward(&m->h[l], ctx, x, NULL, NULL);
    return qkv_linear_forward(&m->lm_head, ctx, qkv_ln_forward(&m->ln_f, ctx, x));
}

/* The run's loss callback: the mean next-token cross-entropy of rows
 * [lo, hi) of a fresh batch (drawn whole, whatever the slice). */
static qkv_tensor *tiny_loss(void *model, const qkv_ctx *ctx, int lo, int hi)
{
    tiny *m = model;
    qkv_batcher_next(&m->batches, m->x, m->y);
    qkv_tensor *logits = tiny_forward(m, ctx, m->x + lo * BLOCK, hi - lo, BLOCK);
    return qkv_cross_entropy(ctx->arena, logits, m->y + lo * BLOCK, -1);
}

/* The run's evaluation callback: the same loss on a held-out batch (the run
 * turns gradients and dropout off, and averages eval_iters of them). */
static qkv_tensor *tiny_val_loss(void *model, const qkv_ctx *ctx, int which, int lo, int hi)
{
    tiny *m = model;
    (void)which; /* one evaluation only */
    qkv_batcher_next(&m->val, m->x, m->y);
    qkv_tensor *logits = tiny_forward(m, ctx, m->x + lo * BLOCK, hi - lo, BLOCK);
    return qkv_cross_entropy(ctx->arena, logits, m->y + lo * BLOCK, -1);
}

/* What the run needs from the model: its parameters, callbacks, config
 * blob, vocabulary and named streams. */
static qkv_training_model tiny_plug(tiny *m, const qkv_corpus *corpus)
{
    static qkv_rng *streams[2];
    static const char *const names[2] = {"train", "val"};
    streams[0] = &m->batches.rng, streams[1] = &m->val.rng;
    return (qkv_training_model){.kind = "tiny", .model = m, .params = m->params,
                                .config = CONFIG, .config_len = sizeof CONFIG,
                                .vocab = &corpus->tok, .rngs = streams, .rng_names = names,
                                .n_rngs = 2, .loss = tiny_loss, .eval_loss = tiny_val_loss};
}

/* qkv_training_resume's rebuild: a fresh model of the saved sizes (ud is
 * the model to fill; the corpus is the one it was saved with). */
static const qkv_corpus *the_corpus;
static int tiny_rebuild(void *ud, const qkv_checkpoint *ck, qkv_training_model *plug)
{
    tiny *m = ud;
    if (ck->config_len < sizeof CONFIG || memcmp(ck->config, CONFIG, sizeof CONFIG))
        return qkv_set_error("tiny: the checkpoint holds a model of other sizes");
    if (tiny_init(m, the_corpus, 0) < 0) /* its values come from the checkpoint */
        return -1;
    *plug = tiny_plug(m, the_corpus);
    return 0;
}

/* Generation's logits callback. Without a key/value cache the model is
 * given the whole window every time, so it always starts at position 0. */
static qkv_tensor *tiny_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B, int n,
                               int pos)
{
    (void)pos;
    return tiny_forward(model, ctx, ids, B, n);
}

static int print_text(const char *text, size_t len, void *ud)
{
    return fwrite(text, 1, len, ud) != len; /* non-zero stops the generation */
}

int main(int argc, char **argv)
{
    /* A model this small trains fastest on one thread: waking a team of
     * threads for each tiny op costs more than the op. */
    qkv_set_threads(1);

    /* The text lives in this buffer only: no file is read. */
    static char text[4096];
    const char *verse = "the cat sat on the mat. the dog sat on the log. ";
    size_t len = 0;
    while (len + strlen(verse) < sizeof text) {
        memcpy(text + len, verse, strlen(verse));
        len += strlen(verse);
    }
    qkv_corpus *corpus = qkv_corpus_from_text(text, len, NULL);
    static tiny m; /* zeroed */
    the_corpus = corpus;
    if (!corpus || tiny_init(&m, corpus, 1) < 0) {
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
        return 1;
    }

    /* Half the run, saved (beside the checkpoint the tests pass, else here). */
    char path[4096];
    snprintf(path, sizeof path, "%s.tiny", argc > 1 ? argv[1] : "own_transformer");
    qkv_training_model plug = tiny_plug(&m, corpus);
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = ITERS, tc.batch_size = BATCH, tc.lr = 3e-3, tc.min_lr = 3e-4, tc.warmup = 20;
    tc.eval_iters = 10;
    qkv_training *run = qkv_training_new(&plug, &tc);
    double first = 0, loss = 0;
    while (run && run->step < tc.iters / 2 && qkv_training_step(run, &loss, NULL) == 0)
        if (run->step == 1)
            first = loss;
    int saved = run && run->step == tc.iters / 2 && qkv_training_save(run, path) == 0;
    qkv_training_free(run);
    qkv_params_free(&m.params);

    /* The other half in what could be another process: one call rebuilds
     * the model, its run, its optimizer state and its streams. */
    run = saved ? qkv_training_resume_rebuild(path, "tiny", tiny_rebuild, &m) : NULL;
    while (run && run->step < tc.iters) {
        if (qkv_training_step(run, &loss, NULL) < 0)
            break;
        if (run->step % 100 == 0)
            printf("step %3lld  loss %.3f  val %.3f\n", (long long)run->step, loss,
                   qkv_training_eval(run, 0));
    }
    int trained = run && run->step == tc.iters;
    if (!trained)
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
    remove(path);

    /* Generate: the library's loop runs the model's logits callback. */
    qkv_lm lm = {.model = &m, .logits = tiny_logits, .vocab_size = corpus->tok.size,
                 .context = BLOCK};
    qkv_sample_opts opts = {.temperature = 0.5};
    qkv_rng rng;
    qkv_rng_seed(&rng, 3);
    printf("the ");
    int generated = trained && qkv_generate_text(&lm, &corpus->tok, "the ", 100, &opts, &rng,
                                                 print_text, stdout) == 0;
    printf("\n");
    if (trained && !generated)
        fprintf(stderr, "qkv: %s\n", qkv_last_error());

    qkv_training_free(run);
    qkv_params_free(&m.params);
    qkv_corpus_free(corpus);
    if (trained && !(loss < first / 2)) {
        fprintf(stderr, "own_transformer: the loss went from %.3f only to %.3f\n", first, loss);
        return 1;
    }
    return !(trained && generated);
}
