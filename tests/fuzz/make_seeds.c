/* Writes the fuzzer's seed corpus: tiny valid "gpt" checkpoints (a few KB
 * each) of the shapes programs save, into the directory given.
 *
 *     make fuzz-seeds            (writes tests/fuzz/corpus/)
 *
 * Every value is a small multiple of 1/64 drawn from qkv's own RNG, so the
 * files are the same bytes on every machine. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qkv/qkv.h"

/* Fill n values with k/64, k in [-64, 64], drawn from rng. */
static void fill(qkv_real *x, size_t n, qkv_rng *rng)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (qkv_real)((int)qkv_rng_below(rng, 129) - 64) / 64;
}

/* Save a tiny model under dir/name: with a training run's 88-byte config or the
 * model's own 32 bytes, an optimizer of kind (0 for none) and n_rngs streams. */
static int seed(const char *dir, const char *name, size_t config_len, int kind, int n_rngs)
{
    const char *text = "abcde";
    qkv_gpt_config mc = {.vocab_size = 5, .block_size = 4, .n_layer = 1, .n_head = 2,
                         .n_embd = 4, .dropout = 0};
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    if (!m)
        return -1;
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    fill(m->params->data, m->params->total, &rng);
    qkv_optim *opt = NULL;
    if (kind) {
        qkv_optim_config oc = kind == QKV_OPTIM_SGD ? qkv_sgd_defaults() : qkv_adamw_defaults();
        if (!(opt = qkv_optim_new(m->params, &oc)))
            return -1;
        fill(opt->m, opt->n, &rng);
        if (opt->v)
            for (size_t i = 0; i < opt->n; i++)
                opt->v[i] = (qkv_real)qkv_rng_below(&rng, 65) / 64;
        opt->step = 3;
    }
    qkv_rng streams[4], *ptrs[4];
    for (int r = 0; r < 4; r++) {
        qkv_rng_seed(&streams[r], (uint64_t)r + 1);
        ptrs[r] = &streams[r];
    }
    qkv_ckpt_progress prog = {.step = 3, .n_rngs = n_rngs, .rngs = ptrs};
    /* A run's blob is the model's config followed by the run's settings. */
    uint8_t blob[128] = {0};
    qkv_gpt_config_pack(&mc, blob);
    for (size_t i = QKV_GPT_CONFIG_BYTES; i + 4 <= config_len; i += 4)
        blob[i] = (uint8_t)(i / 4); /* iters, batch, ... as small numbers */
    qkv_tokenizer vocab;
    qkv_tokenizer_build(&vocab, text, strlen(text));
    qkv_ckpt_model model = {.kind = "gpt", .config = blob, .config_len = config_len,
                            .vocab = &vocab};
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int rc = qkv_checkpoint_save(path, &model, m->params, opt, n_rngs ? &prog : NULL);
    qkv_optim_free(opt);
    qkv_gpt_free(m);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: make_seeds DIR\n");
        return 2;
    }
    if (seed(argv[1], "gpt-trainer", 88, QKV_OPTIM_ADAMW, 4) < 0 ||
        seed(argv[1], "gpt-weights", QKV_GPT_CONFIG_BYTES, 0, 0) < 0 ||
        seed(argv[1], "gpt-sgd", QKV_GPT_CONFIG_BYTES, QKV_OPTIM_SGD, 1) < 0) {
        fprintf(stderr, "make_seeds: %s\n", qkv_last_error());
        return 1;
    }
    return 0;
}
