/* The live attention page's module (make wasm: WebAssembly, one thread),
 * the library's forward pass and sampler as the page calls them. Each call
 * runs the same recording as `qkv attn --html` (attn_record.c) and hands the
 * page the same data, its numbers as one float array (live_numbers) beside a
 * JSON text instead of printed, so the page's views draw from it unchanged.
 * Strings in and out are UTF-8, NUL-terminated; a NULL return means an error,
 * which live_error() says. Not part of libqkv: only the module has it. */
#include <stdio.h>
#include <string.h>

#include "qkv/qkv.h"
#include "qkv/seq2seq.h"
#include "cli/viz/viz_internal.h"

static qkv_gpt *gpt;          /* the model, when it is a GPT */
static qkv_tokenizer vocab;   /* its vocabulary */
static qkv_seq2seq *s2s;      /* the model, when it is an encoder-decoder */
static qkv__attn_json last;   /* the last page's data (JSON and numbers) */
static char text_out[65536];  /* live_generate's text */

/* Where the page's checkpoint bytes go: the module's in-memory file system. */
#define CKPT_PATH "/model.ckpt"

/* The message of the last failed call. */
const char *live_error(void) { return qkv_last_error(); }

/* Load the checkpoint's n bytes (kind "gpt", or "seq2seq" when seq2seq is
 * non-zero) with the library's own loader. 0, or -1. */
int live_load(const unsigned char *bytes, int n, int seq2seq)
{
    FILE *f = fopen(CKPT_PATH, "wb");
    bool written = f && fwrite(bytes, 1, (size_t)n, f) == (size_t)n;
    if (f && fclose(f) != 0)
        written = false;
    if (!written)
        return qkv_set_error("live_load: cannot write %s in memory", CKPT_PATH);
    qkv_gpt_free(gpt);
    qkv_seq2seq_free(s2s);
    gpt = NULL, s2s = NULL;
    if (seq2seq)
        s2s = qkv_seq2seq_load(CKPT_PATH);
    else
        gpt = qkv_gpt_load(CKPT_PATH, &vocab);
    remove(CKPT_PATH);
    return gpt || s2s ? 0 : -1;
}

/* Keep the page's data: its numbers in binary, every float as it is. */
static int keep(const qkv__attn_page *p, void *user)
{
    (void)user;
    qkv__attn_json_free(&last);
    last.binary = true;
    return qkv__attn_json_data(&last, p);
}

/* The page's data for the GPT reading text, or NULL. */
const char *live_gpt(const char *text)
{
    if (!gpt) {
        qkv_set_error("live_gpt: no GPT loaded");
        return NULL;
    }
    return qkv__attn_record_gpt("live_gpt", gpt, &vocab, text, keep, NULL) < 0 ? NULL : last.text;
}

/* The page's data for the encoder-decoder reading input, its decoder
 * reading output teacher-forced (decode non-zero: its own greedy answer
 * instead), or NULL. */
const char *live_seq2seq(const char *input, const char *output, int decode)
{
    if (!s2s) {
        qkv_set_error("live_seq2seq: no encoder-decoder loaded");
        return NULL;
    }
    int rc = qkv__attn_record_seq2seq("live_seq2seq", s2s, input, decode ? NULL : output, keep,
                                      NULL);
    return rc < 0 ? NULL : last.text;
}

/* The numbers of the last page's data: {"f":offset,"n":n} is n floats from offset. */
const qkv_real *live_numbers(void) { return last.bin; }

/* Append a generated token's character to text_out. */
static int emit(int32_t token, void *ud)
{
    size_t *len = ud;
    if (*len + 1 >= sizeof text_out)
        return 1;
    qkv_decode(&vocab, &token, 1, &text_out[(*len)++]);
    text_out[*len] = 0;
    return 0;
}

/* n characters the GPT writes after prompt, drawn as `qkv sample` draws
 * them (the key/value cache, the seed's stream, temperature, top-k, top-p),
 * or NULL. */
const char *live_generate(const char *prompt, int n, double temperature, int top_k, double top_p,
                          int seed)
{
    if (!gpt) {
        qkv_set_error("live_generate: no GPT loaded");
        return NULL;
    }
    size_t len = strlen(prompt), out = 0;
    if (len < 1 || len > sizeof text_out) {
        qkv_set_error("live_generate: the prompt has %zu characters (1 to %zu)", len,
                      sizeof text_out);
        return NULL;
    }
    static int32_t ids[sizeof text_out];
    if (qkv_encode(&vocab, prompt, len, ids) < 0)
        return NULL;
    qkv_sample_opts opts = {.temperature = temperature, .top_k = top_k, .top_p = top_p};
    qkv_rng rng;
    qkv_rng_seed(&rng, (uint64_t)seed);
    text_out[0] = 0;
    int rc = qkv_gpt_generate(gpt, ids, (int)len, n, &opts, &rng, true, emit, &out);
    return rc < 0 ? NULL : text_out;
}
