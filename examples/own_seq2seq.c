/* An own encoder-decoder (qkv/stack.h) learns to sort a word's letters ("fbdab" -> "abbdf"):
 * words of 1 to 8 letters, padded and masked, trained with AdamW, fresh ones decoded greedily
 * with a key/value cache, all at once.
 *     cc own_seq2seq.c $(pkg-config --cflags --libs qkv) -o own_seq2seq && ./own_seq2seq */
#include <qkv/qkv.h>
#include <stdio.h>

enum { PAD, BOS, EOS, LETTERS = 6, V = 3 + LETTERS }; /* ids: 3 special ones, then 'a'..'f' */
enum { MAX_IN = 8, MAX_OUT = MAX_IN + 1, BATCH = 64, ITERS = 600, TESTS = 500 };
static int32_t src[TESTS * MAX_IN], dec_in[TESTS * MAX_OUT], dec_out[TESTS * MAX_OUT];
static int32_t bos[TESTS], out[TESTS * MAX_OUT]; /* decoding: each row's prompt, its answer */
static uint8_t valid[TESTS * MAX_IN];            /* 1 = a letter, 0 = padding */
/* B random words, padded; the decoder's input BOS + letters sorted, its target sorted + EOS. */
static void draw(int B, qkv_rng *rng)
{
    for (int b = 0; b < B; b++) {
        int n = 1 + (int)qkv_rng_below(rng, MAX_IN), count[V] = {0};
        int32_t *s = src + b * MAX_IN, *in = dec_in + b * MAX_OUT, *y = dec_out + b * MAX_OUT;
        for (int t = 0; t < MAX_IN; t++) {
            s[t] = t < n ? 3 + (int32_t)qkv_rng_below(rng, LETTERS) : PAD;
            count[s[t]] += valid[b * MAX_IN + t] = t < n;
        }
        for (int c = 3, t = 0; c < V; c++) /* a counting sort */
            while (count[c]--)
                y[t++] = c;
        for (int t = 0; t < MAX_OUT; t++) {
            y[t] = t < n ? y[t] : t == n ? EOS : -1; /* -1: no loss there */
            in[t] = t == 0 ? BOS : t <= n ? y[t - 1] : PAD;
        }
        bos[b] = BOS;
    }
}
int main(void)
{
    qkv_s2s_config cfg = {.vocab_size = V, .max_src = MAX_IN, .max_tgt = MAX_OUT,
                          .block = {.n_layer = 2, .n_head = 4, .n_embd = 64}};
    qkv_params *p = qkv_params_new();
    static qkv_s2s_stack m; /* zeroed: freeing it is safe even if its init never ran */
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    qkv_set_threads(1); /* tiny products: one thread is fastest */
    bool ok = qkv_s2s_stack_init(&m, p, "sort", &cfg) == 0 && qkv_params_alloc(p, &rng) == 0;
    qkv_optim *opt = ok ? qkv_optim_new(p, &(qkv_optim_config){0}) : NULL; /* AdamW */
    qkv_ctx ctx = {.arena = qkv_arena_new(1 << 22), .train = true};
    qkv_tensor *loss = NULL; /* the last step's, its arena kept */
    for (int it = 0; opt && ok && it < ITERS; it++) {
        qkv_arena_reset(ctx.arena), qkv_params_zero_grad(p), draw(BATCH, &rng);
        loss = qkv_s2s_stack_loss(&m, &ctx, src, valid, MAX_IN, dec_in, dec_out, BATCH, MAX_OUT);
        ok = loss && qkv_backward(ctx.arena, loss) == 0 &&
             qkv_optim_step(opt, p, 3e-3 * (1 - (double)it / ITERS)) == 0; /* lr decays to 0 */
    }
    draw(TESTS, &rng); /* new words (a short one may have been trained on) */
    int right = 0;
    qkv_lm *lm = opt && ok ? qkv_s2s_stack_lm_new(&m, src, valid, TESTS, MAX_IN, true) : NULL;
    ok = lm &&
         qkv_generate_batch(lm, TESTS, bos, 1, MAX_OUT, &(qkv_sample_opts){0}, NULL, EOS, out) == 0;
    for (int b = 0, t = 0; ok && b < TESTS; b++, t = 0) { /* right: the answer up to its EOS */
        while (out[b * MAX_OUT + t] == dec_out[b * MAX_OUT + t] && out[b * MAX_OUT + t] != EOS)
            t++;
        right += out[b * MAX_OUT + t] == EOS && dec_out[b * MAX_OUT + t] == EOS;
    }
    if (ok)
        printf("loss %.4f, accuracy %.3f: %d of %d new words sorted\n", (double)loss->data[0],
               (double)right / TESTS, right, TESTS);
    else
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
    qkv_s2s_stack_lm_free(lm), qkv_optim_free(opt), qkv_arena_free(&ctx.arena);
    qkv_s2s_stack_free(&m), qkv_params_free(&p);
    return !ok || right < TESTS * 9 / 10; /* a model that did not learn to sort is a failure */
}
