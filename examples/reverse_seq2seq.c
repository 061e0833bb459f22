/* An encoder-decoder of your own, made of qkv's nn modules, that learns to
 * write its input backwards ("abcd" -> "dcba"), trained on padded batches by
 * the library's run and decoded by its generation loop; built against an
 * installed qkv:
 *
 *     cc reverse_seq2seq.c $(pkg-config --cflags --libs qkv) \
 *         -Wl,-rpath,$(pkg-config --variable=libdir qkv) -o reverse_seq2seq
 *
 * The encoder reads the input (padded to MAX_IN, the padding masked); the
 * decoder reads BOS and the answer so far and asks the encoder's output, its
 * memory, through cross-attention. To decode, the input is encoded once and
 * every cross-attention's keys and values are computed once
 * (qkv_cross_attn_memory); qkv_generate_batch then runs the decoder with its
 * key/value cache, a batch of inputs at once, each row until its EOS. */
#include <qkv/qkv.h>
#include <stdio.h>
#include <string.h>

enum { PAD, BOS, EOS, LETTERS = 6, V = 3 + LETTERS }; /* tokens: 3 special, then 'a'.. */
enum { MAX_IN = 6, MAX_OUT = MAX_IN + 1, C = 48, H = 4, BATCH = 32, ITERS = 500, TESTS = 200 };
enum { ROWS = TESTS }; /* the most pairs held at once (TESTS >= BATCH) */

typedef struct rev {
    qkv_params *params;
    qkv_embed src_tok, src_pos, dst_tok, dst_pos;
    qkv_block enc;
    qkv_cross_block dec;
    qkv_ln enc_ln, dec_ln;
    qkv_linear head;
    qkv_rng data; /* the training pairs' stream */
    int32_t src[ROWS * MAX_IN], dec_in[ROWS * MAX_OUT], dec_out[ROWS * MAX_OUT];
    uint8_t valid[ROWS * MAX_IN];
    /* Decoding: the memory's keys and values, and the decoder's cache. */
    qkv_tensor *k, *v;
    qkv_kv_cache *cache;
} rev;

static const qkv_block_config CFG = {.n_embd = C, .n_head = H, .n_layer = 1};

/* B random inputs of 1..MAX_IN letters into m->src (padded) and m->valid;
 * the decoder's input (BOS, then the reversed letters) and target (the
 * reversed letters, then EOS; PAD after it, which the loss skips). */
static void draw_pairs(rev *m, int B, qkv_rng *rng)
{
    for (int b = 0; b < B; b++) {
        int n = 1 + (int)qkv_rng_below(rng, MAX_IN);
        int32_t *src = m->src + b * MAX_IN, *in = m->dec_in + b * MAX_OUT,
                *out = m->dec_out + b * MAX_OUT;
        for (int t = 0; t < MAX_IN; t++) {
            src[t] = t < n ? 3 + (int32_t)qkv_rng_below(rng, LETTERS) : PAD;
            m->valid[b * MAX_IN + t] = t < n;
        }
        for (int t = 0; t < MAX_OUT; t++) {
            out[t] = t < n ? src[n - 1 - t] : t == n ? EOS : PAD;
            in[t] = t == 0 ? BOS : out[t - 1] == EOS ? PAD : out[t - 1];
        }
    }
}

/* Token plus position embeddings of ids (B,T) at positions pos0... */
static qkv_tensor *embed(const qkv_embed *tok, const qkv_embed *pos, const qkv_ctx *ctx,
                         const int32_t *ids, int B, int T, int pos0)
{
    int32_t at[MAX_OUT];
    for (int t = 0; t < T; t++)
        at[t] = pos0 + t;
    return qkv_add(ctx->arena, qkv_embed_forward(tok, ctx, ids, QKV_SHAPE(B, T)),
                   qkv_embed_forward(pos, ctx, at, QKV_SHAPE(T)));
}

/* The memory (B, MAX_IN, C) of the inputs src (B, MAX_IN), padding masked by valid. */
static qkv_tensor *encode(const rev *m, const qkv_ctx *ctx, const int32_t *src,
                          const uint8_t *valid, int B)
{
    qkv_tensor *x = embed(&m->src_tok, &m->src_pos, ctx, src, B, MAX_IN, 0);
    return qkv_ln_forward(&m->enc_ln, ctx, qkv_block_forward(&m->enc, ctx, x, valid, NULL));
}

/* The run's loss: the decoder's cross-entropy on rows [lo, hi) of fresh pairs. */
static qkv_tensor *rev_loss(void *model, const qkv_ctx *ctx, int lo, int hi)
{
    rev *m = model;
    draw_pairs(m, BATCH, &m->data);
    int B = hi - lo;
    const uint8_t *valid = m->valid + lo * MAX_IN;
    qkv_tensor *memory = encode(m, ctx, m->src + lo * MAX_IN, valid, B);
    qkv_tensor *y = embed(&m->dst_tok, &m->dst_pos, ctx, m->dec_in + lo * MAX_OUT, B, MAX_OUT, 0);
    y = qkv_cross_block_forward(&m->dec, ctx, y, memory, valid, NULL, NULL);
    qkv_tensor *logits = qkv_linear_forward(&m->head, ctx, qkv_ln_forward(&m->dec_ln, ctx, y));
    return qkv_cross_entropy(ctx->arena, logits, m->dec_out + lo * MAX_OUT, PAD);
}

/* Generation's logits: the new tokens ids (B, n) through the cached decoder
 * over the memory's keys and values, the last position's logits (B,1,V). */
static qkv_tensor *rev_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B, int n,
                              int pos)
{
    rev *m = model;
    if (pos == 0)
        qkv_kv_cache_reset(m->cache);
    qkv_tensor *y = embed(&m->dst_tok, &m->dst_pos, ctx, ids, B, n, pos);
    y = qkv_cross_block_forward_cached(&m->dec, ctx, y, m->cache, 0, m->k, m->v, m->valid);
    y = qkv_slice_axis(ctx->arena, qkv_ln_forward(&m->dec_ln, ctx, y), 1, n - 1, 1);
    return qkv_linear_forward(&m->head, ctx, y);
}

/* Decode TESTS fresh inputs in one batch; how many come out exactly reversed. */
static int exact_matches(rev *m, qkv_rng *rng)
{
    draw_pairs(m, TESTS, rng); /* held out: another stream than training's */
    qkv_arena *a = qkv_arena_new(1 << 20);
    qkv_ctx ctx = {.arena = a};
    bool was = qkv_set_grad_enabled(false);
    qkv_tensor *memory = encode(m, &ctx, m->src, m->valid, TESTS); /* once for all the steps */
    m->cache = qkv_kv_cache_new(&CFG, TESTS, MAX_OUT);
    int32_t bos[TESTS], out[TESTS * MAX_OUT];
    for (int b = 0; b < TESTS; b++)
        bos[b] = BOS;
    qkv_lm lm = {.model = m, .logits = rev_logits, .vocab_size = V, .context = MAX_OUT,
                 .cached = true};
    int right = -1;
    if (memory && m->cache && qkv_cross_attn_memory(&m->dec.cross, &ctx, memory, &m->k, &m->v) == 0 &&
        qkv_generate_batch(&lm, TESTS, bos, 1, MAX_OUT, &(qkv_sample_opts){0}, NULL, EOS, out) == 0)
        for (int b = right = 0; b < TESTS; b++) {
            int t = 0; /* the answer, up to and with its EOS, is the target */
            while (t < MAX_OUT && out[b * MAX_OUT + t] == m->dec_out[b * MAX_OUT + t] &&
                   out[b * MAX_OUT + t] != EOS)
                t++;
            right += t < MAX_OUT && out[b * MAX_OUT + t] == EOS && m->dec_out[b * MAX_OUT + t] == EOS;
        }
    qkv_set_grad_enabled(was);
    qkv_kv_cache_free(m->cache);
    qkv_arena_free(&a);
    return right;
}

/* Declare and draw m's parameters: the two embeddings of each side, the
 * encoder block and norm, the decoder block and norm, the head. */
static int rev_init(rev *m, uint64_t seed)
{
    m->params = qkv_params_new();
    qkv_params *p = m->params;
    if (!p || qkv_embed_init(&m->src_tok, p, "src.tok", V, C, 0.02) < 0 ||
        qkv_embed_init(&m->src_pos, p, "src.pos", MAX_IN, C, 0.02) < 0 ||
        qkv_embed_init(&m->dst_tok, p, "dst.tok", V, C, 0.02) < 0 ||
        qkv_embed_init(&m->dst_pos, p, "dst.pos", MAX_OUT, C, 0.02) < 0 ||
        qkv_block_init(&m->enc, p, "enc", &CFG, false) < 0 ||
        qkv_ln_init(&m->enc_ln, p, "enc.ln", C, true) < 0 ||
        qkv_cross_block_init(&m->dec, p, "dec", &CFG, C) < 0 ||
        qkv_ln_init(&m->dec_ln, p, "dec.ln", C, true) < 0 ||
        qkv_linear_init(&m->head, p, "head", C, V, false, 0.02) < 0)
        return -1;
    qkv_rng_seed(&m->data, seed);
    return qkv_params_alloc(p, &m->data);
}

int main(void)
{
    qkv_set_threads(1); /* tiny ops: one thread is fastest */
    static rev m;
    if (rev_init(&m, 1) < 0) {
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
        return 1;
    }
    qkv_rng *streams[1] = {&m.data};
    qkv_training_model plug = {.kind = "reverse", .model = &m, .params = m.params,
                               .rngs = streams, .n_rngs = 1, .loss = rev_loss};
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = ITERS, tc.batch_size = BATCH, tc.lr = 3e-3, tc.warmup = 20, tc.weight_decay = 0;
    qkv_training *run = qkv_training_new(&plug, &tc);
    double loss = 0;
    while (run && run->step < ITERS && qkv_training_step(run, &loss, NULL) == 0)
        if (run->step % 100 == 0)
            printf("step %3lld  loss %.3f\n", (long long)run->step, loss);
    qkv_rng rng;
    qkv_rng_seed(&rng, 99);
    int right = run && run->step == ITERS ? exact_matches(&m, &rng) : -1;
    if (right < 0)
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
    else
        printf("%d of %d held-out inputs reversed exactly\n", right, TESTS);
    qkv_training_free(run);
    qkv_params_free(&m.params);
    return right < TESTS * 9 / 10; /* a model that did not learn it is a failure */
}
