/* Misuse cases for qkv/safetensors.h, and qkv_gpt_load_safetensors (qkv/gpt.h). */
#include "misuse.h"

#include <stdint.h>

/* A two-tensor file: "x", F32 (2), and "ids", I64 (1); its bytes and length. */
static const unsigned char *small_file(size_t *len)
{
    static const char json[] = "{\"x\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},"
                               "\"ids\":{\"dtype\":\"I64\",\"shape\":[1],\"data_offsets\":[8,16]}}";
    static unsigned char f[8 + sizeof json - 1 + 16];
    f[0] = (unsigned char)(sizeof json - 1);
    memcpy(f + 8, json, sizeof json - 1);
    *len = sizeof f;
    return f;
}

static qkv_safetensors *small(void)
{
    size_t len;
    const unsigned char *f = small_file(&len);
    qkv_safetensors *st = qkv_safetensors_parse(f, len);
    MISUSE_ASSERT(st != NULL);
    return st;
}

/* small_file() written to the case's directory, as a .safetensors file. */
static const char *small_path(void)
{
    size_t len;
    const unsigned char *f = small_file(&len);
    const char *path = tmp_path("small.safetensors");
    FILE *out = fopen(path, "wb");
    MISUSE_ASSERT(out && fwrite(f, 1, len, out) == len && fclose(out) == 0);
    return path;
}

MISUSE(qkv_safetensors_open, null_path) { FAILS_NULL(qkv_safetensors_open(NULL), "path is NULL"); }
MISUSE(qkv_safetensors_open, missing_file)
{
    FAILS_NULL(qkv_safetensors_open(tmp_path("none.safetensors")), "none.safetensors");
}
MISUSE(qkv_safetensors_open, text_file) { FAILS_NULL(qkv_safetensors_open(text_path()), "header"); }
MISUSE(qkv_safetensors_parse, null_bytes)
{
    FAILS_NULL(qkv_safetensors_parse(NULL, 8), "bytes is NULL");
}
MISUSE(qkv_safetensors_parse, too_short)
{
    FAILS_NULL(qkv_safetensors_parse("\0\0\0", 3), "3 bytes", "8-byte header length");
}
MISUSE(qkv_safetensors_free, null_st) { HARMLESS((qkv_safetensors_free(NULL), 0)); }
MISUSE(qkv_safetensors_count, null_st) { FAILS_INT(qkv_safetensors_count(NULL), "st is NULL"); }
MISUSE(qkv_safetensors_tensor, null_st)
{
    FAILS_NULL(qkv_safetensors_tensor(NULL, 0), "st is NULL");
}
MISUSE(qkv_safetensors_tensor, out_of_range)
{
    qkv_safetensors *st = small();
    FAILS_NULL(qkv_safetensors_tensor(st, 2), "i 2", "[0, 2)");
    FAILS_NULL(qkv_safetensors_tensor(st, -1), "i -1");
    qkv_safetensors_free(st);
}
MISUSE(qkv_safetensors_find, null_st) { FAILS_NULL(qkv_safetensors_find(NULL, "x"), "st is NULL"); }
MISUSE(qkv_safetensors_find, bad_name)
{
    qkv_safetensors *st = small();
    FAILS_NULL(qkv_safetensors_find(st, NULL), "name is NULL");
    FAILS_NULL(qkv_safetensors_find(st, "y"), "no tensor \"y\"");
    qkv_safetensors_free(st);
}
MISUSE(qkv_safetensors_meta, null_st) { FAILS_NULL(qkv_safetensors_meta(NULL, "k"), "st is NULL"); }
MISUSE(qkv_safetensors_meta, bad_key)
{
    qkv_safetensors *st = small();
    FAILS_NULL(qkv_safetensors_meta(st, NULL), "key is NULL");
    FAILS_NULL(qkv_safetensors_meta(st, "format"), "no metadata \"format\"");
    qkv_safetensors_free(st);
}
MISUSE(qkv_safetensors_read, null_args)
{
    qkv_safetensors *st = small();
    const qkv_st_tensor *t = qkv_safetensors_tensor(st, 0);
    qkv_real out[2];
    FAILS_INT(qkv_safetensors_read(NULL, t, out, 2), "st is NULL");
    FAILS_INT(qkv_safetensors_read(st, NULL, out, 2), "t is NULL");
    FAILS_INT(qkv_safetensors_read(st, t, NULL, 2), "out is NULL");
    qkv_safetensors_free(st);
}
MISUSE(qkv_safetensors_read, foreign_tensor)
{
    qkv_safetensors *st = small(), *other = small();
    qkv_real out[2];
    FAILS_INT(qkv_safetensors_read(st, qkv_safetensors_tensor(other, 0), out, 2),
              "t is not a tensor of st");
    qkv_safetensors_free(other);
    qkv_safetensors_free(st);
}
MISUSE(qkv_safetensors_read, short_out)
{
    qkv_safetensors *st = small();
    qkv_real out[2];
    FAILS_INT(qkv_safetensors_read(st, qkv_safetensors_tensor(st, 0), out, 1), "n 1",
              "x's 2 values");
    FAILS_INT(qkv_safetensors_read(st, qkv_safetensors_tensor(st, 1), out, 2), "ids is I64",
              "not a float type");
    qkv_safetensors_free(st);
}
MISUSE(qkv_gpt_load_safetensors, null_path)
{
    FAILS_NULL(qkv_gpt_load_safetensors(NULL, 0), "path is NULL");
}
MISUSE(qkv_gpt_load_safetensors, negative_n_head)
{
    FAILS_NULL(qkv_gpt_load_safetensors(small_path(), -1), "n_head -1");
}
MISUSE(qkv_gpt_load_safetensors, not_gpt2)
{
    FAILS_NULL(qkv_gpt_load_safetensors(small_path(), 0), "small.safetensors", "wte.weight");
}
MISUSE(qkv_gpt_load_safetensors, text_file)
{
    FAILS_NULL(qkv_gpt_load_safetensors(text_path(), 0), "header");
}
