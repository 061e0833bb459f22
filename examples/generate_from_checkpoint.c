/* Load a checkpoint written by `qkv train` and continue a prompt, built
 * against an installed qkv:
 *
 *     qkv train --data input.txt --out model.ckpt
 *     cc generate_from_checkpoint.c $(pkg-config --cflags --libs qkv) \
 *         -Wl,-rpath,$(pkg-config --variable=libdir qkv) -o generate_from_checkpoint
 *     ./generate_from_checkpoint model.ckpt "ROMEO:" 200
 *
 * The checkpoint holds the model's sizes, its vocabulary and its weights:
 * qkv_gpt_load rebuilds the model from them. The prompt is encoded with
 * that vocabulary (a character the model never saw is an error naming it),
 * and every generated token is decoded and printed as soon as it comes. */
#include <qkv/qkv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What the emit callback needs to print a token. */
typedef struct printer {
    const qkv_tokenizer *vocab;
    int printed;
} printer;

static int print_token(int32_t token, void *ud)
{
    printer *p = ud;
    char c;
    if (qkv_decode(p->vocab, &token, 1, &c) < 0)
        return 1; /* stop: an id outside the vocabulary cannot happen, but say so if it does */
    putchar(c);
    p->printed++;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 4) {
        fprintf(stderr, "usage: %s CKPT [PROMPT [TOKENS]]\n", argv[0]);
        return 2;
    }
    const char *prompt = argc > 2 ? argv[2] : "\n";
    int n_new = argc > 3 ? atoi(argv[3]) : 200;

    qkv_tokenizer vocab;
    qkv_gpt *m = qkv_gpt_load(argv[1], &vocab);
    if (!m) {
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
        return 1;
    }
    fprintf(stderr, "%s: %d layers, %d heads, width %d, context %d, %d characters in the vocabulary\n",
            argv[1], m->cfg.n_layer, m->cfg.n_head, m->cfg.n_embd, m->cfg.block_size, vocab.size);

    size_t n_prompt = strlen(prompt);
    int32_t *ids = malloc((n_prompt ? n_prompt : 1) * sizeof *ids);
    if (!ids || n_prompt == 0 || qkv_encode(&vocab, prompt, n_prompt, ids) < 0) {
        fprintf(stderr, "qkv: prompt: %s\n", !ids ? "out of memory" : n_prompt ? qkv_last_error() : "empty");
        free(ids);
        qkv_gpt_free(m);
        return 1;
    }

    /* temperature 0.8 sharpens the distribution a little; top_k 0 and top_p 1 keep every token. */
    qkv_sample_opts opts = {.temperature = 0.8, .top_k = 0, .top_p = 1};
    qkv_rng rng;
    qkv_rng_seed(&rng, 42);
    printer p = {.vocab = &vocab, .printed = 0};
    fputs(prompt, stdout);
    int rc = qkv_gpt_generate(m, ids, (int)n_prompt, n_new, &opts, &rng, true, print_token, &p);
    putchar('\n');
    if (rc < 0)
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
    else
        fprintf(stderr, "%d characters generated\n", p.printed);
    free(ids);
    qkv_gpt_free(m);
    return rc < 0 || p.printed != n_new;
}
