/* Load a checkpoint written by `qkv train` and continue a prompt, built
 * against an installed qkv:
 *
 *     qkv train --data input.txt --out model.ckpt
 *     cc generate_from_checkpoint.c $(pkg-config --cflags --libs qkv) \
 *         -Wl,-rpath,$(pkg-config --variable=libdir qkv) -o generate_from_checkpoint
 *     ./generate_from_checkpoint model.ckpt "ROMEO:" 200
 *
 * The checkpoint holds the model's sizes, its vocabulary and its weights:
 * qkv_gpt_load rebuilds the model from them. qkv_generate_text then takes
 * text in (the prompt, encoded with that vocabulary: a character the model
 * never saw is an error naming it) and gives text out, piece by piece as it
 * is generated, to a callback that prints it. */
#include <qkv/qkv.h>
#include <stdio.h>
#include <stdlib.h>

/* Counts what it prints, to check that every token came. */
typedef struct printer {
    FILE *out;
    size_t printed;
} printer;

static int print_text(const char *text, size_t len, void *ud)
{
    printer *p = ud;
    p->printed += fwrite(text, 1, len, p->out);
    return 0; /* non-zero would stop the generation */
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
    qkv_lm *lm = m ? qkv_gpt_lm_new(m, true) : NULL; /* true: with a key/value cache */
    if (!lm) {
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
        qkv_gpt_free(m);
        return 1;
    }
    fprintf(stderr, "%s: %d layers, %d heads, width %d, context %d, %d characters in the vocabulary\n",
            argv[1], m->cfg.n_layer, m->cfg.n_head, m->cfg.n_embd, m->cfg.block_size, vocab.size);

    /* temperature 0.8 sharpens the distribution a little; top_k and top_p 0 keep every token. */
    qkv_sample_opts opts = {.temperature = 0.8};
    qkv_rng rng;
    qkv_rng_seed(&rng, 42);
    printer p = {.out = stdout, .printed = 0};
    fputs(prompt, stdout);
    int rc = qkv_generate_text(lm, &vocab, prompt, n_new, &opts, &rng, print_text, &p);
    putchar('\n');
    if (rc < 0)
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
    else
        fprintf(stderr, "%zu characters generated\n", p.printed);
    qkv_gpt_lm_free(lm);
    qkv_gpt_free(m);
    return rc < 0 || p.printed != (size_t)n_new;
}
