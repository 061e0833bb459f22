/* libFuzzer target: the checkpoint loader on arbitrary bytes.
 *
 * Each input is opened as a "gpt" checkpoint (twice: see below). When it opens and its config
 * describes a small model, the model is built and the file's weights,
 * optimizer moments, step and RNG states are loaded into it, and the model
 * then runs and samples a few tokens (stored weights may be anything, NaN
 * included). Any crash, sanitizer report or leak is a bug; so is a failure
 * that leaves no message.
 *
 *     make fuzz FUZZ_SECONDS=600      (needs clang and libclang-rt-14-dev)
 */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "qkv/qkv.h"

/* The largest model the fuzzer builds: the file decides the sizes, and an
 * honest config of 65536-wide layers would only test the allocator. */
enum { MAX_BLOCK = 32, MAX_LAYERS = 2, MAX_EMBD = 32, MAX_RNGS = 8 };

/* A failure must say why. */
static void require_message(void)
{
    if (!qkv_last_error()[0])
        __builtin_trap();
}

static bool small(const qkv_gpt_config *c)
{
    return c->block_size <= MAX_BLOCK && c->n_layer <= MAX_LAYERS && c->n_embd <= MAX_EMBD;
}

static int count_tokens(int32_t token, void *ud)
{
    (void)token;
    ++*(int *)ud;
    return 0;
}

/* Use the loaded model: a forward pass and a few sampled tokens, with and
 * without the key/value cache. */
static void exercise(const qkv_gpt *m)
{
    int V = m->cfg.vocab_size, T = m->cfg.block_size < 4 ? m->cfg.block_size : 4;
    int32_t ids[4];
    for (int t = 0; t < T; t++)
        ids[t] = t % V;
    qkv_arena *arena = qkv_arena_new(1 << 16);
    if (!arena)
        return;
    bool was = qkv_set_grad_enabled(false);
    qkv_ctx ctx = {.arena = arena};
    if (!qkv_gpt_logits(m, &ctx, ids, 1, T, NULL))
        require_message();
    qkv_set_grad_enabled(was);
    qkv_arena_free(&arena);
    qkv_sample_opts opts = {.temperature = 0.8, .top_k = 3, .top_p = 0.9};
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    for (int cache = 0; cache < 2; cache++) {
        int n = 0;
        if (qkv_gpt_generate(m, ids, T, m->cfg.block_size + 2, &opts, &rng, cache, count_tokens,
                             &n) < 0)
            require_message();
    }
}

/* Load the checkpoint into a model of its config, the way a program resumes
 * a run: the optimizer the file has, as many RNG streams as it stores. */
static void load_into_model(const qkv_checkpoint *ck)
{
    qkv_gpt_config mc;
    if (qkv_gpt_config_unpack(&mc, ck->config, ck->config_len) < 0) {
        require_message();
        return;
    }
    if (!small(&mc) || ck->vocab.size != mc.vocab_size)
        return;
    qkv_gpt *m = qkv_gpt_new(&mc, 1);
    if (!m) {
        require_message();
        return;
    }
    qkv_optim_config oc =
        ck->optim_kind == QKV_OPTIM_SGD ? qkv_sgd_defaults() : qkv_adamw_defaults();
    qkv_optim *opt = qkv_optim_new(m->params, &oc);
    qkv_rng rngs[MAX_RNGS], *streams[MAX_RNGS];
    for (int r = 0; r < MAX_RNGS; r++)
        streams[r] = &rngs[r];
    qkv_ckpt_progress prog = {.n_rngs = ck->n_rngs < MAX_RNGS ? ck->n_rngs : MAX_RNGS,
                              .rngs = streams};
    /* Weights only (sampling), then the whole state (resuming). */
    if (qkv_checkpoint_load(ck, m->params, NULL, NULL) < 0)
        require_message();
    else
        exercise(m);
    if (opt && qkv_checkpoint_load(ck, m->params, ck->optim_kind ? opt : NULL, &prog) < 0)
        require_message();
    qkv_optim_free(opt);
    qkv_gpt_free(m);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    omp_set_num_threads(1); /* one input at a time, reproducibly */
    return 0;
}

/* Open len bytes as a "gpt" checkpoint and, if they open, load them. */
static void fuzz_bytes(const uint8_t *data, size_t len)
{
    qkv_clear_error();
    qkv_checkpoint *ck = qkv_checkpoint_open_bytes(data, len, "fuzz.ckpt", "gpt");
    if (!ck) {
        require_message();
        return;
    }
    load_into_model(ck);
    qkv_checkpoint_close(ck);
}

static void put_le(uint8_t *b, uint64_t x, int n)
{
    for (int i = 0; i < n; i++)
        b[i] = (uint8_t)(x >> (8 * i));
}

/* Every input is tried twice: as it is, which exercises the size and
 * checksum checks, and with its size field and checksum made right, which
 * gets random mutations past the checksum into the parser proper (a fuzzer
 * cannot guess a CRC-32). */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_bytes(data, size);
    if (size < 24) /* magic, version, size and a checksum */
        return 0;
    uint8_t *fixed = malloc(size);
    if (!fixed)
        return 0;
    memcpy(fixed, data, size);
    put_le(fixed + 12, size, 8);
    put_le(fixed + size - 4, qkv_crc32(0, fixed, size - 4), 4);
    fuzz_bytes(fixed, size);
    free(fixed);
    return 0;
}
