/* qkv_gpt_load_safetensors without PyTorch: a built-in GPT written here in
 * Hugging Face's GPT-2 layout (Conv1D weights (in, out), the masks, with and
 * without the "transformer." prefix, F32 or F16) loads back to the same
 * weights and config, its heads from the argument, the metadata or the
 * width, an lm_head of its own untied; and each way a file can fail to be
 * GPT-2 is named: a tensor missing, one too many, a Conv1D weight stored as a
 * Linear's, a block the names count but the file does not hold. */
#include "testing.h"

#include <stdlib.h>
#include <string.h>

/* One tensor to write: its name, shape and float values (row-major). */
typedef struct entry {
    char name[96];
    int ndim, shape[2];
    float *v;
} entry;

/* A GPT-2-layout file of m's weights, edited by the test through the list. */
typedef struct file {
    entry e[64];
    int n;
} file;

static const char *const CONV[] = {".attn.c_attn.weight", ".attn.c_proj.weight",
                                   ".mlp.c_fc.weight", ".mlp.c_proj.weight"};

static bool is_conv(const char *name)
{
    for (int i = 0; i < 4; i++) {
        size_t n = strlen(name), k = strlen(CONV[i]);
        if (n >= k && !strcmp(name + n - k, CONV[i]))
            return true;
    }
    return false;
}

static void add(file *f, const char *name, int ndim, int rows, int cols)
{
    ck_assert_int_lt(f->n, 64);
    entry *e = &f->e[f->n++];
    snprintf(e->name, sizeof e->name, "%s", name);
    e->ndim = ndim, e->shape[0] = rows, e->shape[1] = cols;
    e->v = calloc((size_t)rows * (size_t)(ndim == 2 ? cols : 1), sizeof *e->v);
    ck_assert_ptr_nonnull(e->v);
}

/* m's parameters under prefix, Conv1D weights transposed, and a mask per block. */
static void from_model(file *f, const qkv_gpt *m, const char *prefix)
{
    f->n = 0;
    char name[96];
    for (int i = 0; i < m->params->count; i++) {
        const qkv_tensor *t = m->params->items[i].t;
        bool conv = is_conv(m->params->items[i].name);
        snprintf(name, sizeof name, "%s%s", prefix, m->params->items[i].name);
        int r = t->shape[0], c = t->ndim == 2 ? t->shape[1] : 1;
        add(f, name, t->ndim, conv ? c : r, conv ? r : c);
        for (int a = 0; a < r; a++)
            for (int b = 0; b < c; b++)
                f->e[f->n - 1].v[conv ? (size_t)b * r + a : (size_t)a * c + b] =
                    (float)t->data[(size_t)a * c + b];
    }
    for (int l = 0; l < m->cfg.n_layer; l++) {
        snprintf(name, sizeof name, "%sh.%d.attn.bias", prefix, l);
        add(f, name, 2, m->cfg.block_size, m->cfg.block_size);
    }
}

static entry *find(file *f, const char *name)
{
    for (int i = 0; i < f->n; i++)
        if (!strcmp(f->e[i].name, name))
            return &f->e[i];
    ck_abort_msg("no %s", name);
    return NULL;
}

static void drop(file *f, const char *name)
{
    entry *e = find(f, name);
    free(e->v);
    *e = f->e[--f->n];
}

static void free_file(file *f)
{
    for (int i = 0; i < f->n; i++)
        free(f->e[i].v);
    f->n = 0;
}

/* IEEE half of x (round to nearest; the values here are normal halves or zero). */
static uint16_t to_f16(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    uint32_t sign = u >> 16 & 0x8000, e = u >> 23 & 0xFF, mant = u & 0x7FFFFF;
    if (e < 113) /* below half's normals: zero */
        return (uint16_t)sign;
    uint32_t h = (e - 112) << 10 | mant >> 13;
    h += (mant >> 12 & 1) && ((mant & 0x2FFF) || (h & 1)); /* to nearest, ties to even */
    return (uint16_t)(sign | h);
}

/* Write f as a .safetensors file at path, in F32 or F16, with metadata meta (JSON, or NULL). */
static void write_file(const file *f, const char *path, bool f16, const char *meta)
{
    size_t cap = 1 << 16, len = 0, at = 0, size = f16 ? 2 : 4;
    char *json = malloc(cap);
    ck_assert_ptr_nonnull(json);
    len += (size_t)snprintf(json + len, cap - len, "{\"__metadata__\":%s", meta ? meta : "{}");
    for (int i = 0; i < f->n; i++) {
        const entry *e = &f->e[i];
        size_t n = (size_t)e->shape[0] * (size_t)(e->ndim == 2 ? e->shape[1] : 1);
        char shape[32];
        snprintf(shape, sizeof shape, e->ndim == 2 ? "[%d,%d]" : "[%d]", e->shape[0], e->shape[1]);
        len += (size_t)snprintf(json + len, cap - len,
                                ",\"%s\":{\"dtype\":\"%s\",\"shape\":%s,\"data_offsets\":[%zu,%zu]}",
                                e->name, f16 ? "F16" : "F32", shape, at, at + n * size);
        at += n * size;
    }
    len += (size_t)snprintf(json + len, cap - len, "}");
    ck_assert_uint_lt(len, cap);
    FILE *out = fopen(path, "wb");
    ck_assert_ptr_nonnull(out);
    uint64_t h = len;
    unsigned char le[8];
    for (int i = 0; i < 8; i++)
        le[i] = (unsigned char)(h >> (8 * i));
    fwrite(le, 1, 8, out);
    fwrite(json, 1, len, out);
    for (int i = 0; i < f->n; i++) {
        const entry *e = &f->e[i];
        size_t n = (size_t)e->shape[0] * (size_t)(e->ndim == 2 ? e->shape[1] : 1);
        for (size_t k = 0; k < n; k++) {
            uint16_t half = to_f16(e->v[k]);
            fwrite(f16 ? (void *)&half : (void *)&e->v[k], 1, size, out);
        }
    }
    ck_assert_int_eq(fclose(out), 0);
    free(json);
}

static qkv_gpt *model(int n_head)
{
    qkv_gpt_config c = {.vocab_size = 40, .block_size = 8, .n_layer = 2, .n_head = n_head,
                        .n_embd = 128};
    qkv_gpt *m = qkv_gpt_new(&c, 7);
    ck_assert_qkv(m);
    return m;
}

static char dir[64];
static file f;

static void setup(void) { qkv_test_make_tmpdir(dir, sizeof dir, "qkv_gpt2_load"); }

static void teardown(void)
{
    free_file(&f);
    qkv_test_remove_tmpdir(dir);
}

/* The loaded model of path has m's config and, within tol, its weights. */
static void loads_as(const qkv_gpt *m, const char *path, int n_head, double tol)
{
    qkv_gpt *back = qkv_gpt_load_safetensors(path, n_head);
    ck_assert_qkv(back);
    ck_assert(back->cfg.vocab_size == m->cfg.vocab_size && back->cfg.n_layer == m->cfg.n_layer &&
              back->cfg.block_size == m->cfg.block_size && back->cfg.n_head == m->cfg.n_head &&
              back->cfg.n_embd == m->cfg.n_embd && !back->cfg.opts.untied);
    ck_assert_uint_eq(back->params->total, m->params->total);
    for (size_t i = 0; i < m->params->total; i++)
        ck_assert_msg(fabs((double)back->params->data[i] - (double)m->params->data[i]) <= tol,
                      "value %zu: %g, wrote %g", i, (double)back->params->data[i],
                      (double)m->params->data[i]);
    qkv_gpt_free(back);
}

START_TEST(round_trip_in_both_layouts)
{
    qkv_gpt *m = model(2); /* width 128: n_embd / 64 gives these 2 heads */
    const char *path = qkv_test_path(dir, "m.safetensors");
    from_model(&f, m, "transformer.");
    write_file(&f, path, false, NULL);
    loads_as(m, path, 0, 0);
    free_file(&f);
    from_model(&f, m, ""); /* GPT2Model's names, with a tied head saved as itself */
    add(&f, "lm_head.weight", 2, 40, 128);
    memcpy(f.e[f.n - 1].v, find(&f, "wte.weight")->v, 40 * 128 * sizeof(float));
    write_file(&f, path, true, NULL); /* F16: the weights to within half's rounding */
    loads_as(m, path, 0, 1e-3);
    qkv_gpt_free(m);
}
END_TEST

START_TEST(heads_from_the_argument_or_the_metadata)
{
    qkv_gpt *m = model(8);
    const char *path = qkv_test_path(dir, "m.safetensors");
    from_model(&f, m, "");
    write_file(&f, path, false, "{\"n_head\":\"8\"}");
    loads_as(m, path, 0, 0);
    write_file(&f, path, false, NULL);
    loads_as(m, path, 8, 0);
    write_file(&f, path, false, "{\"n_head\":\"3\"}");
    ck_assert_ptr_null(qkv_gpt_load_safetensors(path, 0));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "n_head"));
    qkv_gpt_free(m);
}
END_TEST

/* A file edited by edit is refused with a message holding words. */
static void refused(const char *words, void (*edit)(file *))
{
    qkv_gpt *m = model(2);
    const char *path = qkv_test_path(dir, "bad.safetensors");
    from_model(&f, m, "transformer.");
    edit(&f);
    write_file(&f, path, false, NULL);
    ck_assert_ptr_null(qkv_gpt_load_safetensors(path, 0));
    ck_assert_msg(strstr(qkv_last_error(), words) &&
                      strstr(qkv_last_error(), "qkv_gpt_load_safetensors: ") &&
                      strstr(qkv_last_error(), "bad.safetensors"),
                  "\"%s\" does not say \"%s\"", qkv_last_error(), words);
    free_file(&f);
    qkv_gpt_free(m);
}

static void no_ln_f_bias(file *f) { drop(f, "transformer.ln_f.bias"); }
static void one_more(file *f) { add(f, "transformer.h.0.attn.rotary.weight", 1, 4, 1); }
static void linear_not_conv1d(file *f)
{
    entry *e = find(f, "transformer.h.1.mlp.c_fc.weight");
    int r = e->shape[0];
    e->shape[0] = e->shape[1], e->shape[1] = r;
}
static void layers_counted_by_name(file *f) { add(f, "transformer.h.2.ln_1.weight", 1, 1, 1); }

START_TEST(names_what_is_not_gpt2)
{
    refused("no tensor transformer.ln_f.bias", no_ln_f_bias);
    refused("transformer.h.0.attn.rotary.weight is not a part of GPT-2's model", one_more);
    refused("transformer.h.1.mlp.c_fc.weight: shape does not match, expected (128, 512) "
            "(Conv1D: in, out)",
            linear_not_conv1d);
    refused("transformer.h.2.ln_1.weight: shape does not match, expected (128)",
            layers_counted_by_name);
}
END_TEST

/* An lm_head.weight of other values than wte's is a head of its own. */
START_TEST(an_untied_head_loads_as_one)
{
    qkv_gpt *m = model(2);
    const char *path = qkv_test_path(dir, "m.safetensors");
    from_model(&f, m, "transformer.");
    add(&f, "lm_head.weight", 2, 40, 128);
    memcpy(f.e[f.n - 1].v, find(&f, "transformer.wte.weight")->v, 40 * 128 * sizeof(float));
    f.e[f.n - 1].v[5] = 0.5f;
    write_file(&f, path, false, NULL);
    qkv_gpt *back = qkv_gpt_load_safetensors(path, 0);
    ck_assert_qkv(back);
    ck_assert(back->cfg.opts.untied);
    const qkv_tensor *head = qkv_params_find(back->params, "lm_head.weight")->t;
    ck_assert(head->data[5] == (qkv_real)0.5f && head->data[4] == m->wte.weight->data[4]);
    qkv_gpt_free(back);
    qkv_gpt_free(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("gpt2_load");
    TCase *tc = tcase_create("gpt2_load");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, round_trip_in_both_layouts);
    tcase_add_test(tc, heads_from_the_argument_or_the_metadata);
    tcase_add_test(tc, names_what_is_not_gpt2);
    tcase_add_test(tc, an_untied_head_loads_as_one);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(suite)
