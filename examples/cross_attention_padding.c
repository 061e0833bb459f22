/* Cross-attention between two sequences, with a padding mask, built against
 * an installed qkv (as C, or as C++: make test builds it both ways):
 *
 *     cc cross_attention_padding.c $(pkg-config --cflags --libs qkv) \
 *         -Wl,-rpath,$(pkg-config --variable=libdir qkv) -o cross_attention_padding
 *
 * A decoder-side sequence x (4 positions, width 8) asks queries; an
 * encoder-side memory (width 6, another width on purpose) offers keys and
 * values. The batch holds two memories of different lengths, 5 and 3, so
 * the shorter one is padded to 5 and mem_valid marks its last two positions
 * as padding. The program shows what the mask guarantees:
 *   - every query gives the padded positions a weight of exactly 0;
 *   - the padded item's output is the output of its 3 real positions alone;
 *   - no gradient reaches the padding. */
#include <qkv/qkv.h>
#include <stdio.h>
#include <string.h>

enum { B = 2, TQ = 4, TK = 5, C = 8, C_MEM = 6, H = 2 };

static double magnitude(double v) { return v < 0 ? -v : v; }

static int fail(qkv_arena *a, qkv_params *p)
{
    fprintf(stderr, "qkv: %s\n", qkv_last_error());
    qkv_arena_free(&a);
    qkv_params_free(&p);
    return 1;
}

int main(void)
{
    /* Every field zero, then the sizes: assignments rather than designated
     * initializers, because this file is also compiled as C++11. */
    qkv_block_config cfg;
    memset(&cfg, 0, sizeof cfg); /* dropout 0 */
    cfg.n_embd = C;
    cfg.n_head = H;
    cfg.n_layer = 1;

    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    qkv_params *p = qkv_params_new();
    qkv_cross_attn cross;
    if (!p || qkv_cross_attn_init(&cross, p, "cross", &cfg, C_MEM) < 0 || qkv_params_alloc(p, &rng) < 0)
        return fail(NULL, p);

    /* The inputs, as plain arrays: item 1's memory has 3 real positions. */
    static qkv_real x_values[B * TQ * C], mem_values[B * TK * C_MEM];
    for (size_t i = 0; i < sizeof x_values / sizeof x_values[0]; i++)
        x_values[i] = (qkv_real)qkv_rng_normal(&rng);
    for (size_t i = 0; i < sizeof mem_values / sizeof mem_values[0]; i++)
        mem_values[i] = (qkv_real)qkv_rng_normal(&rng);
    const int lengths[B] = {5, 3};
    uint8_t mem_valid[B * TK]; /* 1 = a real position, 0 = padding */
    for (int b = 0; b < B; b++)
        for (int t = 0; t < TK; t++)
            mem_valid[b * TK + t] = t < lengths[b];

    qkv_arena *a = qkv_arena_new(1 << 20);
    if (!a)
        return fail(a, p);
    qkv_ctx ctx;
    memset(&ctx, 0, sizeof ctx); /* not training: no dropout, no rng */
    ctx.arena = a;
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(B, TQ, C), x_values);
    qkv_tensor *memory = qkv_from_array(a, QKV_SHAPE(B, TK, C_MEM), mem_values);
    qkv_set_requires_grad(memory, true);
    qkv_tensor *weights = NULL; /* (B, H, TQ, TK) */
    qkv_tensor *out = qkv_cross_attn_forward(&cross, &ctx, x, memory, mem_valid, &weights);
    if (!out)
        return fail(a, p);

    printf("cross-attention weights of item 1 (memory of 3 positions, padded to %d)\n", TK);
    double padded_weight = 0;
    for (int h = 0; h < H; h++) {
        printf("head %d   key:", h);
        for (int k = 0; k < TK; k++)
            printf(k < lengths[1] ? "%7d" : "    pad", k);
        printf("\n");
        for (int q = 0; q < TQ; q++) {
            const qkv_real *row = weights->data + (((size_t)1 * H + h) * TQ + q) * TK;
            printf("  query %d    ", q);
            for (int k = 0; k < TK; k++) {
                printf("%7.3f", (double)row[k]);
                if (k >= lengths[1])
                    padded_weight += magnitude((double)row[k]);
            }
            printf("\n");
        }
    }
    printf("total weight on padding: %g\n", padded_weight);

    /* The same item alone, its memory cut to its 3 real positions, no mask. */
    qkv_tensor *x1 = qkv_from_array(a, QKV_SHAPE(1, TQ, C), x_values + TQ * C);
    qkv_tensor *mem1 = qkv_from_array(a, QKV_SHAPE(1, lengths[1], C_MEM), mem_values + TK * C_MEM);
    qkv_tensor *out1 = qkv_cross_attn_forward(&cross, &ctx, x1, mem1, NULL, NULL);
    if (!out1)
        return fail(a, p);
    double diff = 0;
    for (size_t i = 0; i < out1->size; i++) {
        double d = magnitude((double)(out->data[TQ * C + i] - out1->data[i]));
        diff = d > diff ? d : diff;
    }
    printf("item 1 padded and masked vs alone: outputs differ by at most %.3g\n", diff);

    /* Backward from the sum of the outputs: the padded memory rows get nothing. */
    qkv_tensor *loss = qkv_sum(a, out);
    if (!loss || qkv_backward(a, loss) < 0)
        return fail(a, p);
    double real_grad = 0, pad_grad = 0;
    for (int b = 0; b < B; b++)
        for (int t = 0; t < TK; t++)
            for (int c = 0; c < C_MEM; c++) {
                double g = magnitude((double)memory->grad[((size_t)b * TK + t) * C_MEM + c]);
                if (mem_valid[b * TK + t])
                    real_grad += g;
                else
                    pad_grad += g;
            }
    printf("gradient reaching the memory: %.4g on real positions, %g on padding\n", real_grad,
           pad_grad);

    int ok = padded_weight == 0 && pad_grad == 0 && real_grad > 0 && diff < 1e-5;
    qkv_arena_free(&a);
    qkv_params_free(&p);
    if (!ok) {
        fprintf(stderr, "cross_attention_padding: the padding mask did not hold\n");
        return 1;
    }
    return 0;
}
