/* make bench-bpe: how fast the BPE tokenizer trains, encodes and decodes a
 * text, with the load average before and after (time it on a quiet machine).
 *
 *   bench_bpe FILE [VOCAB]        VOCAB tokens, 4096 when not given
 *   bench_bpe FILE VOCAB_JSON MERGES_TXT   GPT-2's tokenizer, loaded, not trained
 *
 * Not a test: it checks only that decoding gives the text back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "qkv/bpe.h"
#include "qkv/file.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void print_load(const char *when)
{
    double load[3];
    FILE *f = fopen("/proc/loadavg", "r");
    if (f && fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) == 3)
        printf("load average %s: %.2f %.2f %.2f\n", when, load[0], load[1], load[2]);
    if (f)
        fclose(f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_bpe FILE [VOCAB | VOCAB_JSON MERGES_TXT]\n");
        return 2;
    }
    int vocab = argc == 3 ? atoi(argv[2]) : 4096, gpt2 = argc > 3;
    size_t len;
    char *text = (char *)qkv_input_read(argv[1], &len);
    int32_t *ids = text ? malloc((len + 1) * sizeof *ids) : NULL;
    char *back = malloc(len + 1);
    if (!text || !ids || !back) {
        fprintf(stderr, "bench_bpe: %s\n", text ? "out of memory" : qkv_last_error());
        return 1;
    }
    print_load("before");
    double t0 = now();
    qkv_bpe *bpe = gpt2 ? qkv_bpe_load_gpt2(argv[2], argv[3]) : qkv_bpe_train(text, len, vocab);
    double t_train = now() - t0;
    if (!bpe) {
        fprintf(stderr, "bench_bpe: %s\n", qkv_last_error());
        return 1;
    }
    /* the best of 5 runs: the figure the machine can do, less others' noise */
    double t_enc = 1e30, t_dec = 1e30;
    long long n = 0, m = 0;
    for (int run = 0; run < 5; run++) {
        t0 = now();
        n = qkv_bpe_encode(bpe, text, len, ids);
        double t = now() - t0;
        t_enc = t < t_enc ? t : t_enc;
        t0 = now();
        m = qkv_bpe_decode(bpe, ids, (size_t)n, back, len);
        t = now() - t0;
        t_dec = t < t_dec ? t : t_dec;
    }
    int same = m == (long long)len && memcmp(back, text, len) == 0;
    printf("text: %s, %zu bytes\n", argv[1], len);
    printf("%s: %d tokens in %.2f s\n", gpt2 ? "load GPT-2's files" : "train", qkv_bpe_size(bpe),
           t_train);
    printf("encode: %lld tokens (%.2f bytes a token) in %.3f s: %.1f MB/s\n", n,
           (double)len / (double)n, t_enc, (double)len / t_enc / 1e6);
    printf("decode: %.3f s: %.1f MB/s; round trip %s\n", t_dec, (double)len / t_dec / 1e6,
           same ? "exact" : "DIFFERS");
    print_load("after");
    qkv_bpe_free(bpe);
    free(ids), free(back), qkv_free(text);
    return same ? 0 : 1;
}
