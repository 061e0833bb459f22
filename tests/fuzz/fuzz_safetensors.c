/* libFuzzer target: the safetensors reader and the GPT-2 loader on arbitrary bytes.
 *
 * Each input is parsed as a .safetensors file; when it is read, every float
 * tensor is converted, found again by name, and the metadata looked up; the
 * bytes are then written to a file and loaded as GPT-2's weights (a model is
 * only as large as the values the file holds). Any crash, sanitizer report or
 * leak is a bug; so is a refusal that leaves no message.
 *
 *     make fuzz-safetensors FUZZ_SECONDS=600      (needs clang and libclang-rt-14-dev)
 *
 * The seed, tests/fuzz/corpus-safetensors/gpt2-tiny, is a one-layer GPT-2 of
 * width 4 in GPT2LMHeadModel's layout (written by tests/fuzz/make_gpt2_seed.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "qkv/qkv.h"

static void fail(const char *what)
{
    fprintf(stderr, "fuzz_safetensors: %s\n", what);
    abort();
}

/* A refusal must say why. */
static void said(void)
{
    if (!qkv_last_error()[0])
        fail("a refusal without a message");
}

static void read_all(const qkv_safetensors *st)
{
    for (int i = 0; i < qkv_safetensors_count(st); i++) {
        const qkv_st_tensor *t = qkv_safetensors_tensor(st, i);
        if (qkv_safetensors_find(st, t->name) != t)
            fail("a tensor not found by its own name");
        if (t->dtype == QKV_ST_OTHER || t->count > (1u << 20))
            continue;
        qkv_real *v = malloc((t->count ? t->count : 1) * sizeof *v);
        if (v && qkv_safetensors_read(st, t, v, t->count) < 0)
            fail("a float tensor of a file read is not converted");
        free(v);
    }
    qkv_clear_error();
    if (!qkv_safetensors_meta(st, "n_head"))
        said();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    qkv_clear_error();
    qkv_safetensors *st = qkv_safetensors_parse(data, size);
    if (!st) {
        said();
        return 0;
    }
    read_all(st);
    qkv_safetensors_free(st);
    /* The loader reads a path: the input, in a file of this process's. */
    char path[64];
    snprintf(path, sizeof path, "/tmp/fuzz_safetensors.%d", (int)getpid());
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        fail("cannot write the input to a file");
    qkv_clear_error();
    qkv_gpt *m = qkv_gpt_load_safetensors(path, 0);
    if (!m)
        said();
    qkv_gpt_free(m);
    unlink(path);
    return 0;
}
