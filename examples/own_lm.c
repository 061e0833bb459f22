/* An own decoder-only language model through the public stack (qkv/stack.h), trained by a light
 * run (qkv/training.h) on a text in memory. The first run saves itself halfway; run again
 * (another process) it resumes there and ends on the same loss bit for bit. Each evaluates and
 * samples with a KV cache.
 *     cc own_lm.c $(pkg-config --cflags --libs qkv) -o own_lm && ./own_lm && ./own_lm */
#include <qkv/qkv.h>
#include <stdio.h>
#include <string.h>

enum { LAYERS = 2, HEADS = 2, WIDTH = 32, BATCH = 8, BLOCK = 32, ITERS = 300 };
typedef struct lm {
    qkv_stack s;                                /* embeddings, blocks, norm, tied head */
    qkv_batcher train, val;                     /* random windows of the text's two splits */
    int32_t x[BATCH * BLOCK], y[BATCH * BLOCK]; /* a batch: ids and next ids */
} lm;
/* The next-token loss of a training batch, or in evaluation of a held-out one. */
static qkv_tensor *loss(void *ud, const qkv_ctx *ctx)
{
    lm *m = ud;
    qkv_batcher_next(ctx->train ? &m->train : &m->val, m->x, m->y);
    return qkv_stack_loss(&m->s, ctx, m->x, m->y, BATCH, BLOCK);
}
/* Generation's text callback: write it out; non-zero stops. */
static int print(const char *s, size_t n, void *out) { return fwrite(s, 1, n, out) != n; }

int main(int argc, char **argv)
{
    static char text[4096], path[4096];
    while (strlen(text) + 50 < sizeof text)
        strcat(text, "the cat sat on the mat. the dog sat on the log. ");
    static lm m; /* zeroed */
    qkv_corpus *corpus = qkv_corpus_from_text(text, strlen(text), NULL);
    qkv_params *p = qkv_params_new();
    qkv_stack_config cfg = {.vocab_size = corpus ? corpus->tok.size : 0, .block_size = BLOCK,
                            .block = {.n_layer = LAYERS, .n_head = HEADS, .n_embd = WIDTH}};
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    if (qkv_stack_init(&m.s, p, "lm", &cfg) < 0 || qkv_params_alloc(p, &rng) < 0 ||
        qkv_batcher_init(&m.train, corpus, QKV_SPLIT_TRAIN, BATCH, BLOCK, 0) < 0 ||
        qkv_batcher_init(&m.val, corpus, QKV_SPLIT_VAL, BATCH, BLOCK, 0) < 0)
        return fprintf(stderr, "qkv: %s\n", qkv_last_error()), 1;
    const uint8_t sizes[] = {LAYERS, HEADS, WIDTH}; /* a resume checks them */
    qkv_light_model model = {.kind = "own_lm", .params = p, .loss = loss, .ud = &m,
                             .config = sizes, .config_len = sizeof sizes, .vocab = &corpus->tok,
                             .rngs = {&m.train.rng, &m.val.rng}, .rng_names = {"train", "val"}};
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = ITERS, tc.batch_size = BATCH, tc.lr = 3e-3, tc.min_lr = 3e-4, tc.eval_iters = 10;
    snprintf(path, sizeof path, "%s.own_lm", argc > 1 ? argv[1] : "own_lm"); /* the saved run */
    FILE *saved = fopen(path, "rb");
    qkv_training *run = saved ? qkv_light_resume(&model, path) : qkv_light_new(&model, &tc);
    double l = 0;
    while (run && run->step < ITERS && qkv_training_step(run, &l, NULL) == 0)
        if (!saved && run->step == ITERS / 2 && qkv_training_save(run, path) < 0)
            break;
    int bad = !run || run->step < ITERS;
    if (!bad)
        printf("%s: loss %.9g, val %.3f\nthe ", saved ? "resumed" : "trained", l,
               qkv_training_eval(run, 0));
    qkv_lm *gen = qkv_stack_lm_new(&m.s, true); /* generation with a key/value cache */
    bad = bad || qkv_generate_text(gen, &corpus->tok, "the ", 60,
                                   &(qkv_sample_opts){.temperature = 0.5}, &rng, print, stdout);
    fprintf(bad ? stderr : stdout, "\n%s\n", bad ? qkv_last_error() : "");
    qkv_stack_lm_free(gen), qkv_training_free(run), qkv_stack_free(&m.s), qkv_params_free(&p);
    qkv_corpus_free(corpus);
    return bad || (saved && (fclose(saved) || remove(path))); /* the second run cleans up */
}
