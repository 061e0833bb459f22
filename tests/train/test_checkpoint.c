/* Checkpoints: bit-exact round trip, and a precise error for every kind of
 * bad file (truncated, corrupt, foreign, newer, mismatched, absurd). */
#define _GNU_SOURCE /* memmem */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "qkv/checkpoint.h"
#include "child.h"
#include "testing.h"

/* ---- a temporary directory for the suite (made and removed by the parent
 * process, so it goes away even when a test fails) ---- */

static char tmpdir[64];

static void make_tmpdir(void) { qkv_test_make_tmpdir(tmpdir, sizeof tmpdir, "qkv_ckpt"); }

static void remove_tmpdir(void) { qkv_test_remove_tmpdir(tmpdir); }

/* tmpdir/name (see qkv_test_path). */
static const char *tmp_path(const char *name) { return qkv_test_path(tmpdir, name); }

/* ---- a small training run to save ---- */

typedef struct run {
    qkv_params *p;
    qkv_optim *opt;
    qkv_rng rngs[2];        /* "dropout" and "data sampler" */
    qkv_rng *streams[2];    /* pointers to them, for the progress */
    qkv_ckpt_progress prog; /* step and the streams */
    qkv_tokenizer vocab;    /* from a short text */
    uint32_t config[3];     /* the model's blob: made-up sizes and the seed */
    qkv_ckpt_model model;   /* kind "gpt", config, vocab */
} run;

/* Parameters of 2, 1 and 3 dims; fc_rows changes the last one's shape. */
static qkv_params *small_params(uint64_t seed, int fc_rows)
{
    qkv_params *p = qkv_params_new();
    qkv_params_add(p, "wte.weight", QKV_SHAPE(6, 4), QKV_INIT_NORMAL, 0.02);
    qkv_params_add(p, "ln.bias", QKV_SHAPE(4), QKV_INIT_NORMAL, 1);
    qkv_params_add(p, "fc.weight", QKV_SHAPE(fc_rows, 4, 2), QKV_INIT_NORMAL, 0.5);
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    ck_assert_int_eq(qkv_params_alloc(p, &rng), 0);
    return p;
}

/* A run after two optimizer steps on random gradients (so no state is zero). */
static void run_init(run *r, uint64_t seed, qkv_optim_kind kind)
{
    memset(r, 0, sizeof *r);
    r->p = small_params(seed, 2);
    qkv_optim_config cfg = kind == QKV_OPTIM_ADAMW ? qkv_adamw_defaults() : qkv_sgd_defaults();
    r->opt = qkv_optim_new(r->p, &cfg);
    ck_assert_qkv(r->opt);
    qkv_rng_seed(&r->rngs[0], seed + 100);
    qkv_rng_seed(&r->rngs[1], seed + 200);
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < r->p->total; i++)
            r->p->grad[i] = (qkv_real)qkv_rng_normal(&r->rngs[0]);
        qkv_optim_step(r->opt, r->p, 0.01);
    }
    r->streams[0] = &r->rngs[0];
    r->streams[1] = &r->rngs[1];
    r->prog = (qkv_ckpt_progress){.step = (int64_t)seed * 10, .n_rngs = 2, .rngs = r->streams};
    const char *text = "First Citizen:\nBefore we proceed";
    qkv_tokenizer_build(&r->vocab, text, strlen(text));
    r->config[0] = 2, r->config[1] = 4, r->config[2] = (uint32_t)seed;
    r->model = (qkv_ckpt_model){
        .kind = "gpt", .config = r->config, .config_len = sizeof r->config, .vocab = &r->vocab};
}

static void run_free(run *r)
{
    qkv_optim_free(r->opt);
    qkv_params_free(&r->p);
}

/* Save a run of seed as tmpdir/name and return the file's bytes. */
static unsigned char *saved_bytes(const char *name, uint64_t seed, size_t *n)
{
    run r;
    run_init(&r, seed, QKV_OPTIM_ADAMW);
    const char *path = tmp_path(name);
    ck_assert_msg(qkv_checkpoint_save(path, &r.model, r.p, r.opt, &r.prog) == 0, "%s",
                  qkv_last_error());
    run_free(&r);
    return (unsigned char *)qkv_test_read_file(path, n);
}

/* Open n bytes that must fail; the message must contain want. */
static void expect_open_error(const unsigned char *b, size_t n, const char *want)
{
    qkv_checkpoint *ck = qkv_checkpoint_open_bytes(b, n, "mem.ckpt", "gpt");
    ck_assert_msg(ck == NULL, "%zu bytes opened without error", n);
    ck_assert_msg(strstr(qkv_last_error(), want), "%zu bytes: '%s' lacks '%s'", n, qkv_last_error(),
                  want);
}

/* Little-endian patches, and a fresh checksum (so the check after it is reached). */
static void patch_le(unsigned char *b, size_t at, uint64_t x, int bytes)
{
    for (int i = 0; i < bytes; i++)
        b[at + i] = (unsigned char)(x >> (8 * i));
}

static void fix_crc(unsigned char *b, size_t n) { patch_le(b, n - 4, qkv_crc32(0, b, n - 4), 4); }

/* ---- tests ---- */

START_TEST(test_crc32_known_values)
{
    ck_assert_uint_eq(qkv_crc32(0, "123456789", 9), 0xCBF43926u);
    ck_assert_uint_eq(qkv_crc32(0, "", 0), 0);
    ck_assert_uint_eq(qkv_crc32(qkv_crc32(0, "1234", 4), "56789", 5), 0xCBF43926u);
    ck_assert_uint_eq(qkv_crc32(0, "The quick brown fox jumps over the lazy dog", 43), 0x414FA339u);
}
END_TEST

START_TEST(test_round_trip_is_bit_exact)
{
    run a, b;
    run_init(&a, 1, QKV_OPTIM_ADAMW);
    run_init(&b, 2, QKV_OPTIM_ADAMW); /* different everything */
    const char *path = tmp_path("rt.ckpt");
    ck_assert_msg(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog) == 0, "%s",
                  qkv_last_error());
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    ck_assert_qkv(ck);
    /* Phase one: what a program needs to build the model. */
    ck_assert_str_eq(ck->kind, "gpt");
    ck_assert_uint_eq(ck->config_len, sizeof a.config);
    ck_assert_mem_eq(ck->config, a.config, sizeof a.config);
    ck_assert_int_eq(ck->vocab.size, a.vocab.size);
    ck_assert_mem_eq(ck->vocab.byte, a.vocab.byte, (size_t)a.vocab.size);
    ck_assert_int_eq(ck->n_params, 3);
    ck_assert_int_eq(ck->optim_kind, QKV_OPTIM_ADAMW);
    /* Phase two: the state, into the other run. */
    ck_assert_msg(qkv_checkpoint_load(ck, b.p, b.opt, &b.prog) == 0, "%s", qkv_last_error());
    qkv_checkpoint_close(ck);
    ck_assert_mem_eq(b.p->data, a.p->data, a.p->total * sizeof(qkv_real));
    ck_assert_mem_eq(b.opt->m, a.opt->m, a.p->total * sizeof(qkv_real));
    ck_assert_mem_eq(b.opt->v, a.opt->v, a.p->total * sizeof(qkv_real));
    ck_assert_int_eq(b.opt->step, 2);
    ck_assert_int_eq(b.prog.step, 10);
    ck_assert_mem_eq(b.rngs, a.rngs, sizeof a.rngs);
    /* Saving the loaded run again gives the same file, byte for byte. */
    const char *again = tmp_path("rt2.ckpt");
    ck_assert_int_eq(qkv_checkpoint_save(again, &a.model, b.p, b.opt, &b.prog), 0);
    qkv_test_assert_same_files(path, again);
    run_free(&a);
    run_free(&b);
}
END_TEST

START_TEST(test_optimizer_kind_must_match)
{
    run a, b;
    run_init(&a, 1, QKV_OPTIM_SGD);
    run_init(&b, 2, QKV_OPTIM_ADAMW);
    const char *path = tmp_path("sgd.ckpt");
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog), 0);
    qkv_checkpoint *ck = qkv_checkpoint_open(path, NULL);
    ck_assert_qkv(ck);
    ck_assert_int_eq(qkv_checkpoint_load(ck, b.p, b.opt, NULL), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "holds SGD state, but the optimizer is AdamW"));
    /* Sampling needs only the weights: no optimizer, no progress. */
    ck_assert_int_eq(qkv_checkpoint_load(ck, b.p, NULL, NULL), 0);
    ck_assert_mem_eq(b.p->data, a.p->data, a.p->total * sizeof(qkv_real));
    qkv_checkpoint_close(ck);
    /* Saved without an optimizer: loading one is an error. */
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, NULL, NULL), 0);
    ck = qkv_checkpoint_open(path, NULL);
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->optim_kind, 0);
    ck_assert_int_eq(ck->n_rngs, 0);
    ck_assert_int_eq(qkv_checkpoint_load(ck, b.p, b.opt, NULL), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "holds no optimizer state"));
    qkv_checkpoint_close(ck);
    run_free(&a);
    run_free(&b);
}
END_TEST

START_TEST(test_every_truncation_is_an_error)
{
    size_t n;
    unsigned char *b = saved_bytes("t.ckpt", 3, &n);
    for (size_t len = 0; len < n; len++)
        expect_open_error(b, len, "is truncated");
    /* The message names the field the file ends in. */
    expect_open_error(b, 5, "the magic needs 8 bytes at offset 0, but 5 are left");
    expect_open_error(b, 15, "the file size needs 8 bytes");
    size_t n_params = 51 + b[47]; /* after kind "gpt", a 12-byte config and the vocabulary */
    expect_open_error(b, n_params + 20, "the 3 parameters need at least 51 bytes");
    expect_open_error(b, n_params + 64, "the values of parameter 'wte.weight' needs 24 × 4 bytes");
    expect_open_error(b, n - 40, "the RNG states");
    expect_open_error(b, n - 2, "it ends in the checksum");
    free(b);
}
END_TEST

START_TEST(test_flipped_byte_is_detected)
{
    size_t n;
    unsigned char *b = saved_bytes("f.ckpt", 4, &n);
    for (size_t at = 0; at < n; at++) {
        b[at] ^= 0x10;
        /* Magic, version and size have their own messages; after them, the checksum. */
        expect_open_error(b, n,
                          at < 8    ? "bad magic"
                          : at < 12 ? "format version"
                          : at < 20 ? "header says"
                                    : "checksum mismatch");
        b[at] ^= 0x10;
    }
    qkv_checkpoint *ck = qkv_checkpoint_open_bytes(b, n, "mem", "gpt"); /* restored: fine */
    ck_assert_qkv(ck);
    qkv_checkpoint_close(ck);
    free(b);
}
END_TEST

START_TEST(test_bad_magic_and_newer_version)
{
    size_t n;
    unsigned char *b = saved_bytes("m.ckpt", 5, &n);
    b[0] = 'X';
    expect_open_error(b, n, "'mem.ckpt' is not a qkv checkpoint: bad magic");
    b[0] = 'Q';
    patch_le(b, 8, QKV_CKPT_VERSION + 1, 4);
    fix_crc(b, n);
    expect_open_error(b, n,
                      "has format version 3; this qkv reads versions 1 to 2 (it was written "
                      "by a newer qkv)");
    patch_le(b, 8, 0, 4);
    expect_open_error(b, n, "has format version 0");
    free(b);
    /* A text file is not a checkpoint either. */
    const char *path = tmp_path("notes.txt");
    FILE *f = fopen(path, "w");
    fputs("just some notes, long enough to hold a header\n", f);
    fclose(f);
    ck_assert_ptr_null(qkv_checkpoint_open(path, NULL));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "is not a qkv checkpoint"));
}
END_TEST

/* A run saved in bf16 is a version-2 file ending in the precision's id; a
 * version-1 file (fp32) has no such field, and an unknown id is refused. */
START_TEST(test_precision_field)
{
    size_t n1, n2;
    unsigned char *v1 = saved_bytes("p1.ckpt", 5, &n1);
    ck_assert_int_eq(qkv_precision_use(QKV_PRECISION_BF16), 0);
    unsigned char *v2 = saved_bytes("p2.ckpt", 5, &n2);
    ck_assert_int_eq(qkv_precision_use(QKV_PRECISION_FP32), 0);
    ck_assert_uint_eq(v1[8], 1);
    ck_assert_uint_eq(v2[8], 2);
    ck_assert_uint_eq(n2, n1 + 4);
    ck_assert_int_eq(memcmp(v1 + 20, v2 + 20, n1 - 24), 0); /* the same fields before it */
    ck_assert_uint_eq(v2[n2 - 8], QKV_PRECISION_BF16);
    qkv_checkpoint *ck = qkv_checkpoint_open_bytes(v2, n2, "mem.ckpt", "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(qkv_checkpoint_precision(ck), QKV_PRECISION_BF16);
    qkv_checkpoint_close(ck);
    patch_le(v2, n2 - 8, 2, 4);
    fix_crc(v2, n2);
    expect_open_error(v2, n2, "unknown precision 2");
    patch_le(v1, 8, 2, 4); /* a version-2 file without the field */
    fix_crc(v1, n1);
    expect_open_error(v1, n1, "the precision needs 4 bytes");
    free(v1);
    free(v2);
}
END_TEST

START_TEST(test_wrong_kind_names_both)
{
    size_t n;
    unsigned char *b = saved_bytes("k.ckpt", 6, &n);
    qkv_checkpoint *ck = qkv_checkpoint_open_bytes(b, n, "k.ckpt", "seq2seq");
    ck_assert_ptr_null(ck);
    ck_assert_str_eq(qkv_last_error(),
                     "qkv_checkpoint_open_bytes: checkpoint 'k.ckpt' holds a 'gpt' model, not the "
                     "expected 'seq2seq'");
    free(b);
}
END_TEST

/* The largest block asked of the allocation hook since the last reset. */
static size_t biggest_alloc;
static void *tracking_malloc(size_t size)
{
    if (size > biggest_alloc)
        biggest_alloc = size;
    return malloc(size);
}

START_TEST(test_absurd_sizes_are_rejected_before_allocating)
{
    size_t n;
    unsigned char *good = saved_bytes("a.ckpt", 7, &n);
    unsigned char *b = malloc(n);
    /* Offsets in this file: kind "gpt", a 12-byte config, then the vocabulary. */
    const size_t config_len = 27, vocab_len = 47, n_params = 51 + good[vocab_len];
    const size_t first_extent = n_params + 4 + 4 + 10 + 4, n_rngs = n - 4 - 64 - 4;
    struct {
        size_t at;
        int bytes;
        uint64_t value;
        const char *want;
    } cases[] = {
        {20, 4, 1000, "the model kind has 1000 bytes"},
        {config_len, 8, (uint64_t)1 << 62, "the model config needs 4611686018427387904 bytes"},
        {config_len, 8, UINT64_MAX, "the model config needs"},
        {vocab_len, 4, 257, "a vocabulary of 257 bytes"},
        {n_params, 4, 0xffffffffu, "the 4294967295 parameters need at least"},
        {n_params + 4, 4, 0xfffffff0u, "parameter 0 has a name of 4294967280 bytes"},
        {first_extent, 4, 1u << 30, "the values of parameter 'wte.weight' needs 4294967296 × 4"},
        {first_extent + 4, 4, 0, "parameter 'wte.weight' has extent 0 in dimension 1"},
        {n_rngs, 4, 0x7fffffffu, "the RNG states needs 2147483647 × 32 bytes"},
    };
    qkv_set_allocator(tracking_malloc, free);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(b, good, n);
        patch_le(b, cases[i].at, cases[i].value, cases[i].bytes);
        fix_crc(b, n);
        biggest_alloc = 0;
        expect_open_error(b, n, cases[i].want);
        ck_assert_msg(biggest_alloc < n + 4096, "case %zu allocated %zu bytes", i, biggest_alloc);
        ck_assert_ptr_nonnull(strstr(qkv_last_error(), "is malformed"));
    }
    qkv_set_allocator(NULL, NULL);
    free(b);
    free(good);
}
END_TEST

START_TEST(test_missing_file)
{
    const char *path = tmp_path("absent.ckpt");
    ck_assert_ptr_null(qkv_checkpoint_open(path, "gpt"));
    char want[256];
    snprintf(want, sizeof want,
             "qkv_checkpoint_open: cannot open '%s': No such file or directory", path);
    ck_assert_str_eq(qkv_last_error(), want);
}
END_TEST

START_TEST(test_parameter_mismatch_names_both_shapes)
{
    run a;
    run_init(&a, 1, QKV_OPTIM_ADAMW);
    const char *path = tmp_path("p.ckpt");
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog), 0);
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    ck_assert_qkv(ck);
    char want[512];

    qkv_params *wider = small_params(9, 3);
    qkv_real before = wider->data[0];
    ck_assert_int_eq(qkv_checkpoint_load(ck, wider, NULL, NULL), -1);
    snprintf(want, sizeof want,
             "qkv_checkpoint_load: parameter 'fc.weight' has shape (2,4,2) in checkpoint '%s' but "
             "(3,4,2) in the model",
             path);
    ck_assert_str_eq(qkv_last_error(), want);
    ck_assert_float_eq(wider->data[0], before); /* nothing was loaded */
    qkv_params_free(&wider);

    qkv_params *fewer = qkv_params_new();
    qkv_params_add(fewer, "wte.weight", QKV_SHAPE(6, 4), QKV_INIT_ZEROS, 0);
    qkv_params_alloc(fewer, NULL);
    ck_assert_int_eq(qkv_checkpoint_load(ck, fewer, NULL, NULL), -1);
    ck_assert_ptr_nonnull(
        strstr(qkv_last_error(), "has a parameter 'ln.bias' that the model does not"));
    qkv_params_free(&fewer);

    qkv_params *more = qkv_params_new();
    qkv_params_add(more, "wte.weight", QKV_SHAPE(6, 4), QKV_INIT_ZEROS, 0);
    qkv_params_add(more, "ln.bias", QKV_SHAPE(4), QKV_INIT_ZEROS, 0);
    qkv_params_add(more, "fc.weight", QKV_SHAPE(2, 4, 2), QKV_INIT_ZEROS, 0);
    qkv_params_add(more, "lm_head.bias", QKV_SHAPE(6), QKV_INIT_ZEROS, 0);
    qkv_params_alloc(more, NULL);
    ck_assert_int_eq(qkv_checkpoint_load(ck, more, NULL, NULL), -1);
    ck_assert_ptr_nonnull(
        strstr(qkv_last_error(), "the model's parameter 'lm_head.bias' is not in"));
    qkv_params_free(&more);

    /* A wrong number of RNGs is caught before anything is written. */
    run b;
    run_init(&b, 2, QKV_OPTIM_ADAMW);
    qkv_real w0 = b.p->data[0];
    b.prog.n_rngs = 1;
    ck_assert_int_eq(qkv_checkpoint_load(ck, b.p, b.opt, &b.prog), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "holds 2 RNG states, the program has 1"));
    ck_assert_float_eq(b.p->data[0], w0);
    run_free(&b);
    qkv_checkpoint_close(ck);
    run_free(&a);
}
END_TEST

/* The checkpoint at path still loads and holds the step of seed 1 (10). */
static void assert_still_first(const char *path)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->step, 10);
    qkv_checkpoint_close(ck);
}

/* The files in tmpdir whose names start with prefix but are not exactly it
 * (temporaries and locks left behind), space-separated. */
static const char *leftovers(const char *prefix)
{
    static char names[512];
    names[0] = 0;
    DIR *d = opendir(tmpdir);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && strcmp(e->d_name, prefix) != 0) {
            strncat(names, " ", sizeof names - strlen(names) - 1);
            strncat(names, e->d_name, sizeof names - strlen(names) - 1);
        }
    closedir(d);
    return names;
}

/* What a child saves: run b to path. */
typedef struct save_job {
    const char *path;
    run *b;
} save_job;

/* In the child: the save must fail naming why; 0 when it does. */
static int save_must_fail(void *arg)
{
    const save_job *job = arg;
    int ok = qkv_checkpoint_save(job->path, &job->b->model, job->b->p, job->b->opt,
                                 &job->b->prog) == -1 &&
             strstr(qkv_last_error(), "File too large") &&
             strstr(qkv_last_error(), "is left as it was");
    if (!ok)
        fprintf(stderr, "save under a file size limit: %s\n", qkv_last_error());
    return ok ? 0 : 1;
}

/* In a child whose files may grow to at most limit bytes (a disk that fills
 * up half-way, as root too): save b to path, which must fail naming why. */
static void save_with_file_limit(const char *path, run *b, rlim_t limit)
{
    qkv_child c = qkv_child_call(save_must_fail, &(save_job){path, b},
                                 &(qkv_child_opts){.fsize_limit = limit});
    ck_assert_msg(qkv_child_wait(&c, -1) == 0, "the failing save did not fail cleanly");
}

START_TEST(test_failed_save_keeps_last_checkpoint)
{
    run a, b;
    run_init(&a, 1, QKV_OPTIM_ADAMW);
    run_init(&b, 2, QKV_OPTIM_ADAMW);
    const char *path = tmp_path("keep.ckpt");
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog), 0);
    ck_assert_str_eq(leftovers("keep.ckpt"), ""); /* no temporary or lock left behind */
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);

    /* The disk fills up half-way through writing. */
    save_with_file_limit(path, &b, (rlim_t)st.st_size / 2);
    ck_assert_str_eq(leftovers("keep.ckpt"), ""); /* the failed temporary was removed */
    assert_still_first(path);

    /* No file can be created beside it (not testable as root, who may write anyway). */
    if (geteuid() != 0) {
        ck_assert_int_eq(chmod(tmpdir, 0500), 0);
        ck_assert_int_eq(qkv_checkpoint_save(path, &b.model, b.p, b.opt, &b.prog), -1);
        ck_assert_ptr_nonnull(strstr(qkv_last_error(), "cannot"));
        ck_assert_int_eq(chmod(tmpdir, 0700), 0);
        assert_still_first(path);
    }

    /* And a save that works replaces it. */
    ck_assert_int_eq(qkv_checkpoint_save(path, &b.model, b.p, b.opt, &b.prog), 0);
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->step, 20);
    qkv_checkpoint_close(ck);
    run_free(&a);
    run_free(&b);
}
END_TEST

/* Where the fields after the parameters sit in a saved run (2 RNGs, AdamW). */
typedef struct tail_layout {
    size_t m, v;        /* the first and second moment buffers */
    size_t optim_step;  /* the optimizer step */
    size_t train_step;  /* the training step */
} tail_layout;

static tail_layout layout_of(size_t n, size_t n_values)
{
    tail_layout t;
    t.train_step = n - 4 - (4 + 2 * 32) - 8;
    t.v = t.train_step - 4 * n_values;
    t.m = t.v - 4 * n_values;
    t.optim_step = t.m - 8;
    return t;
}

/* A file that passes its checksum but whose fields are impossible is refused,
 * naming the field: negative steps, NaN or inf weights, a negative second
 * moment, a kind with a control byte. */
START_TEST(test_lying_fields_are_refused)
{
    size_t n;
    unsigned char *good = saved_bytes("lie.ckpt", 3, &n), *b = malloc(n);
    qkv_checkpoint *ck = qkv_checkpoint_open_bytes(good, n, "lie.ckpt", "gpt");
    ck_assert_qkv(ck);
    size_t n_values = ck->n_values;
    qkv_checkpoint_close(ck);
    tail_layout t = layout_of(n, n_values);
    const unsigned char *name = memmem(good, n, "wte.weight", 10);
    ck_assert_ptr_nonnull(name);
    size_t first_value = (size_t)(name - good) + 10 + 4 + 2 * 4;
    struct {
        size_t at;
        uint64_t x;
        int bytes;
        const char *want;
    } cases[] = {
        {t.train_step, (uint64_t)-1000, 8, "the training step -1000 is negative"},
        {t.optim_step, (uint64_t)-5, 8, "the optimizer step -5 is negative"},
        {first_value, 0x7fc00000u, 4, "the value 0 of parameter 'wte.weight' is nan"},
        {first_value + 4, 0x7f800000u, 4, "the value 1 of parameter 'wte.weight' is inf"},
        {t.m, 0xff800000u, 4, "the first moment 0 of parameter 'wte.weight' is -inf"},
        {t.v, 0xbf800000u, 4, "the second moment 0 of parameter 'wte.weight' is -1"},
        {8 + 4 + 8 + 4 + 1, 0x07, 1, "the model kind holds byte 0x07 at 1"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(b, good, n);
        patch_le(b, cases[i].at, cases[i].x, cases[i].bytes);
        fix_crc(b, n);
        expect_open_error(b, n, cases[i].want);
        ck_assert_ptr_nonnull(strstr(qkv_last_error(), "checkpoint 'mem.ckpt' is malformed"));
    }
    free(b);
    free(good);
}
END_TEST

/* Save refuses what open would refuse, and writes nothing. */
START_TEST(test_save_refuses_what_open_refuses)
{
    const char *path = tmp_path("refused.ckpt");
    run a;
    run_init(&a, 4, QKV_OPTIM_ADAMW);
    qkv_rng kept = a.rngs[1];
    memset(&a.rngs[1], 0, sizeof a.rngs[1]);
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "RNG state 1 is all zero"));
    a.rngs[1] = kept;
    a.prog.step = -3;
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "the training step -3 is negative"));
    a.prog.step = 40;
    a.p->data[2] = (qkv_real)NAN;
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "parameter 'wte.weight' holds nan at index 2"));
    a.p->data[2] = 0;
    a.opt->v[0] = -1;
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "second moment of parameter 'wte.weight'"));
    ck_assert_int_eq(access(path, F_OK), -1);
    a.opt->v[0] = 0;
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog), 0);
    run_free(&a);
}
END_TEST

START_TEST(test_save_rejects_bad_arguments)
{
    run a;
    run_init(&a, 1, QKV_OPTIM_ADAMW);
    const char *path = tmp_path("bad.ckpt");
    a.model.kind = "";
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "model kind must have 1 to 31 characters"));
    a.model.kind = "a-model-kind-that-is-much-too-long";
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog), -1);
    a.model.kind = "gpt";
    a.model.config = NULL;
    ck_assert_int_eq(qkv_checkpoint_save(path, &a.model, a.p, a.opt, &a.prog), -1);
    ck_assert_int_eq(access(path, F_OK), -1);
    run_free(&a);
}
END_TEST

static Suite *checkpoint_suite(void)
{
    Suite *s = suite_create("checkpoint");
    TCase *tc = tcase_create("core");
    tcase_add_unchecked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_add_test(tc, test_crc32_known_values);
    tcase_add_test(tc, test_round_trip_is_bit_exact);
    tcase_add_test(tc, test_optimizer_kind_must_match);
    tcase_add_test(tc, test_every_truncation_is_an_error);
    tcase_add_test(tc, test_flipped_byte_is_detected);
    tcase_add_test(tc, test_bad_magic_and_newer_version);
    tcase_add_test(tc, test_precision_field);
    tcase_add_test(tc, test_wrong_kind_names_both);
    tcase_add_test(tc, test_absurd_sizes_are_rejected_before_allocating);
    tcase_add_test(tc, test_missing_file);
    tcase_add_test(tc, test_parameter_mismatch_names_both_shapes);
    tcase_add_test(tc, test_failed_save_keeps_last_checkpoint);
    tcase_add_test(tc, test_save_rejects_bad_arguments);
    tcase_add_test(tc, test_lying_fields_are_refused);
    tcase_add_test(tc, test_save_refuses_what_open_refuses);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(checkpoint_suite)
