/* Attention on a made-up sentence, built against an installed qkv:
 *
 *     cc attention_sentence.c $(pkg-config --cflags --libs qkv) -o attention_sentence
 *
 * Each word gets a hand-made 4-number embedding (animal-ness, place-ness,
 * action-ness, "the"-ness). Queries and keys are the embeddings themselves,
 * so a word attends most to the words that resemble it; values are the
 * embeddings too, so each output is a blend of the words attended to. */
#include <qkv/qkv.h>
#include <stdio.h>

int main(void)
{
    const char *words[] = {"the", "cat", "sat", "on", "the", "mat"};
    const qkv_real emb[6][4] = {
        {0, 0, 0, 2}, /* the */
        {2, 0, 0, 0}, /* cat */
        {0, 0, 2, 0}, /* sat */
        {0, 1, 1, 0}, /* on  */
        {0, 0, 0, 2}, /* the */
        {1, 2, 0, 0}, /* mat */
    };
    qkv_arena *a = qkv_arena_new(1 << 16);
    if (!a) {
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
        return 1;
    }
    qkv_tensor *x = qkv_from_array(a, QKV_SHAPE(1, 6, 4), &emb[0][0]);
    qkv_mask causal = {.causal = true}; /* each word sees itself and the words before it */
    qkv_tensor *weights = NULL;
    qkv_tensor *out = qkv_attention(a, x, x, x, &causal, 0, NULL, &weights);
    if (!out) {
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
        qkv_arena_free(&a);
        return 1;
    }
    printf("causal self-attention weights (row: the word asking; column: the word looked at)\n%6s", "");
    for (int j = 0; j < 6; j++)
        printf("%6s", words[j]);
    printf("\n");
    for (int i = 0; i < 6; i++) {
        printf("%6s", words[i]);
        for (int j = 0; j < 6; j++)
            printf("%6.2f", (double)weights->data[i * 6 + j]);
        printf("\n");
    }
    qkv_arena_free(&a);
    return 0;
}
