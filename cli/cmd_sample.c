/* qkv sample: stream text from a trained character GPT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "commands.h"
#include "output.h"
#include "precision_flag.h"
#include "qkv/qkv.h"
#include "runtime.h"
#include "threads.h"
#include "tokenizer_text.h"
#include "weights.h"

typedef struct emit_state {
    const qkv_tokenizer *vocab;
    const qkv_bpe *bpe; /* a model of BPE tokens' tokenizer, or NULL */
    long count;         /* tokens written so far */
} emit_state;

static int emit(int32_t token, void *ud)
{
    emit_state *s = ud;
    if (tokenizer_write(stdout, s->vocab, s->bpe, token) == '\n')
        fflush(stdout);
    s->count++;
    return ferror(stdout); /* stop at once when the output cannot be written */
}

int cmd_sample(int argc, char **argv)
{
    const char *ckpt = NULL, *prompt = "\n", *tokenizer = NULL, *precision = NULL;
    int tokens = 500, top_k = 0, seed = 1337, threads = ARG_AUTO;
    double temperature = 1.0, top_p = 1.0;
    bool no_cache = false;
    const arg_spec specs[] = {
        {"--ckpt", ARG_STR, &ckpt, 0, 0, "CKPT",
         "checkpoint written by qkv train, or GPT-2's weights (FILE.safetensors)"},
        {"--prompt", ARG_STR, &prompt, 0, 0, "TEXT", "text to continue"},
        {"--tokenizer", ARG_STR, &tokenizer, 0, 0, "PATH",
         "a tokenizer for the prompt and the output instead of the checkpoint's: a .bpe file "
         "or a folder of GPT-2's vocab.json and merges.txt; a .safetensors model needs one: "
         "the folder, bytes (a token a byte) or a qkv checkpoint's"},
        {"--tokens", ARG_INT, &tokens, 0, 1e9, "N", "characters to generate"},
        {"--temperature", ARG_REAL, &temperature, 0, 100, "T", "divide the logits by T; 0 = greedy"},
        {"--top-k", ARG_INT, &top_k, 0, 1e9, "K", "sample among the K most likely (0 = all)"},
        {"--top-p", ARG_REAL, &top_p, 1e-9, 1, "P", "sample among the most likely with mass P"},
        {"--seed", ARG_INT, &seed, 0, 2147483647, "S", "random seed"},
        {"--threads", ARG_THREADS, &threads, 1, QKV_MAX_THREADS, "N",
         "OpenMP threads, or auto: one per core that other programs leave free"},
        {"--no-cache", ARG_FLAG, &no_cache, 0, 0, NULL, "recompute the whole context every token"},
        {"--precision", ARG_STR, &precision, 0, 0, "NAME", PRECISION_FLAG_HELP},
    };
    const arg_cmd cmd = {"sample", "Generate text from a trained model, streamed to stdout "
                         "(speed on stderr).", "", specs, (int)(sizeof specs / sizeof specs[0]), 0};
    const char *pos[1];
    int n_pos, rc = args_parse(&cmd, argc, argv, pos, &n_pos);
    if (rc >= 0)
        return rc;
    if (!ckpt)
        return args_error(&cmd, "--ckpt is required");
    if (!prompt[0])
        return args_error(&cmd, "--prompt: the prompt is empty");
    if ((rc = precision_flag_use(&cmd, precision)) != 0)
        return rc;
    cli_use_threads(threads);
    qkv_tokenizer vocab;
    qkv_bpe *bpe = NULL;
    const bool weights = weights_is_safetensors(ckpt);
    if (weights && !tokenizer)
        return args_error(&cmd, "--tokenizer is required with a .safetensors model (it holds "
                                "weights only)");
    qkv_gpt *m = weights ? weights_load(ckpt, 0, 0) : qkv_gpt_load_bpe(ckpt, &vocab, &bpe);
    if (m && tokenizer &&
        (weights ? weights_tokenizer(tokenizer, m->cfg.vocab_size, &vocab, &bpe)
                 : tokenizer_override(&bpe, tokenizer, bpe ? qkv_bpe_size(bpe) : vocab.size)) < 0) {
        qkv_gpt_free(m);
        m = NULL;
    }
    if (!m) {
        fprintf(stderr, "qkv sample: %s\n", qkv_last_error());
        qkv_bpe_free(bpe);
        return 1;
    }
    size_t n = strlen(prompt);
    int32_t *ids = malloc(n * sizeof *ids);
    long long n_ids = !ids ? -1 : bpe ? qkv_bpe_encode(bpe, prompt, n, ids)
                                      : qkv_encode(&vocab, prompt, n, ids) < 0 ? -1 : (long long)n;
    if (n_ids < 0) {
        /* Name what was wrong: the flag, or the default prompt when no flag was given. */
        fprintf(stderr, "qkv sample: %s: %s\n",
                args_given(&cmd, "--prompt") ? "--prompt" : "the default prompt (a newline; "
                "no --prompt was given)", ids ? qkv_last_error() : "out of memory");
        free(ids);
        qkv_gpt_free(m);
        qkv_bpe_free(bpe);
        return 1;
    }
    qkv_sample_opts opts = {.temperature = temperature, .top_k = top_k, .top_p = top_p};
    qkv_rng rng;
    qkv_rng_seed(&rng, (uint64_t)seed);
    emit_state st = {&vocab, bpe, 0};
    fputs(prompt, stdout);
    double t0 = cli_now();
    rc = qkv_gpt_generate(m, ids, (int)n_ids, tokens, &opts, &rng, !no_cache, emit, &st);
    double secs = cli_now() - t0;
    putchar('\n');
    bool written = cli_check_stdout("sample") == 0;
    if (rc < 0)
        fprintf(stderr, "qkv sample: %s\n", qkv_last_error());
    else if (written)
        fprintf(stderr, "qkv sample: %ld tokens in %.2fs: %.0f tokens/s (%s, %s products)\n",
                st.count, secs, (double)st.count / secs, no_cache ? "no cache" : "key/value cache",
                qkv_precision_name(qkv_precision_active()));
    free(ids);
    qkv_gpt_free(m);
    qkv_bpe_free(bpe);
    return rc < 0 || !written ? 1 : 0;
}
