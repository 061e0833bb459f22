/* The ranges of a saved run: load refuses every impossible field of a
 * checkpoint (its run settings, its step, its model's dropout) with a
 * message naming the field, save refuses what load refuses (a vocabulary
 * that is not 0..256 strictly ascending bytes, settings out of range, a step
 * past the run's end), and the program says what is wrong with a --time or
 * an --iters below the saved step. (An eval batch of any size is evaluated
 * in bounded memory: tests/cli/test_eval_bounded.c.) */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error_text.h"
#include "testing.h"

/* ---- the suite's directory and text (made and removed by the parent) ---- */

static char tmpdir[64];

static void make_tmpdir(void) { qkv_test_make_tmpdir(tmpdir, sizeof tmpdir, "qkv_ranges"); }

static void remove_tmpdir(void) { qkv_test_remove_tmpdir(tmpdir); }

/* tmpdir/name (see qkv_test_path). */
static const char *tmp_path(const char *name) { return qkv_test_path(tmpdir, name); }

/* n bytes of made-up text (lower-case letters, spaces, newlines) at name. */
static const char *write_text(const char *name, size_t n)
{
    const char *path = tmp_path(name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    for (size_t i = 0; i < n; i++)
        fputc(i % 61 == 60 ? '\n' : "abcdefgh ijklmnop"[qkv_rng_below(&rng, 17)], f);
    ck_assert_int_eq(fclose(f), 0);
    return path;
}

static void write_all(const char *path, const unsigned char *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(b, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
}

/* ---- a small GPT run of 10 steps, saved after 3 ---- */

#define RUN_ITERS 10
#define RUN_STEPS 3

/* A run of a tiny GPT (block 8) on the text at text. */
static test_run *tiny_run(const char *text, qkv_corpus **corpus)
{
    *corpus = qkv_corpus_load(text, NULL);
    ck_assert_qkv(*corpus);
    qkv_gpt_config mc = {.vocab_size = (*corpus)->tok.size, .block_size = 8, .n_layer = 1,
                         .n_head = 2, .n_embd = 8};
    qkv_train_config tc = {.iters = RUN_ITERS, .batch_size = 2, .eval_iters = 1, .seed = 5};
    test_run *t = gpt_run_new(&mc, &tc, *corpus);
    ck_assert_qkv(t);
    return t;
}

/* The run's checkpoint after RUN_STEPS steps, at path, and its text. */
static char text_path[128];
static const char *saved_run(const char *name)
{
    snprintf(text_path, sizeof text_path, "%s", write_text("text.txt", 4000));
    qkv_corpus *c;
    test_run *t = tiny_run(text_path, &c);
    for (int i = 0; i < RUN_STEPS; i++)
        ck_assert_msg(qkv_training_step(t->run, NULL, NULL) == 0, "%s", qkv_last_error());
    const char *path = tmp_path(name);
    ck_assert_msg(qkv_training_save(t->run, path) == 0, "%s", qkv_last_error());
    test_run_free(t);
    qkv_corpus_free(c);
    return path;
}

/* Where the fields are in that file: the preamble (20 bytes), the kind
 * "gpt" (4 + 3), the config's length (8), then the GPT's 32 config bytes
 * (dropout at 20 among them) and the run's 64. */
enum { GPT_CONFIG = 35, GPT_DROPOUT = GPT_CONFIG + 20, RUN_CONFIG = GPT_CONFIG + 32 };
enum { ITERS = 0, BATCH = 4, EVAL_ITERS = 12, LR = 16, MIN_LR = 24, WEIGHT_DECAY = 32 };

/* The training step's offset: before the RNG count and the states, then the checksum. */
static size_t step_offset(const char *path, size_t n)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    ck_assert_qkv(ck);
    size_t at = n - 4 - 32 * (size_t)ck->n_rngs - 4 - 8;
    qkv_checkpoint_close(ck);
    return at;
}

/* Where the optimizer's step is in the n bytes of the run saved at path
 * (AdamW's: two moments of every value after it, then the training step). */
static size_t optim_step_offset(const char *path, size_t n)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->optim_kind, QKV_OPTIM_ADAMW);
    size_t at = step_offset(path, n) - 2 * 4 * ck->n_values - 8;
    qkv_checkpoint_close(ck);
    return at;
}

static void patch_le(unsigned char *b, size_t at, uint64_t x, int bytes)
{
    for (int i = 0; i < bytes; i++)
        b[at + i] = (unsigned char)(x >> (8 * i));
}

static uint64_t bits(double x)
{
    uint64_t u;
    memcpy(&u, &x, 8);
    return u;
}

/* good with the field at `at` set to value (bytes long) and a fresh
 * checksum, so that only the field is wrong, written to tampered.ckpt. */
static const char *tampered(const unsigned char *good, size_t n, size_t at, uint64_t value,
                            int bytes)
{
    unsigned char *b = malloc(n);
    memcpy(b, good, n);
    patch_le(b, at, value, bytes);
    patch_le(b, n - 4, qkv_crc32(0, b, n - 4), 4);
    const char *path = tmp_path("tampered.ckpt");
    write_all(path, b, n);
    free(b);
    return path;
}

/* Resuming good tampered so must fail, with a message that starts with
 * who, the function that refused it, and says want. */
static void resume_refuses(const unsigned char *good, size_t n, size_t at, uint64_t value,
                           int bytes, const char *who, const char *want)
{
    const char *path = tampered(good, n, at, value, bytes);
    qkv_clear_error();
    test_run *t = gpt_run_resume(path, text_path, 0);
    ck_assert_msg(t == NULL, "a checkpoint with %s resumed", want);
    ck_assert_msg(strstr(qkv_last_error(), want), "'%s' lacks '%s'", qkv_last_error(), want);
    ck_assert_msg(strncmp(qkv_last_error(), who, strlen(who)) == 0 &&
                      qkv_last_error()[strlen(who)] == ':',
                  "'%s' does not start with %s", qkv_last_error(), who);
}

/* The two that refuse: loading the model (its config) and resuming the run (the rest). */
static const char *const MODEL = "qkv_gpt_load", *const RUN = "qkv_training_resume";

/* ---- load refuses every impossible field ---- */

START_TEST(test_load_refuses_impossible_run_settings)
{
    const char *path = saved_run("r.ckpt");
    size_t n;
    unsigned char *good = (unsigned char *)qkv_test_read_file(path, &n);
    /* The file itself resumes: only the patched field makes the difference. */
    test_run *t = gpt_run_resume(path, text_path, 0);
    ck_assert_qkv(t);
    ck_assert_int_eq(t->run->step, RUN_STEPS);
    test_run_free(t);
    struct {
        size_t at;
        int bytes;
        uint64_t value;
        const char *who, *want;
    } cases[] = {
        /* A saved run holds the values it used: a 0 is not a default any more. */
        {RUN_CONFIG + ITERS, 4, 0, RUN, "iters 0 is not in [1, 2147483647]"},
        {RUN_CONFIG + BATCH, 4, 0, RUN, "batch_size 0 is not in [1, 1048576]"},
        {RUN_CONFIG + EVAL_ITERS, 4, 0, RUN, "eval_iters 0 is not in [1, 1000000]"},
        {RUN_CONFIG + ITERS, 4, 0x80000000u, RUN, "iters -2147483648"},
        {RUN_CONFIG + LR, 8, bits(1e300), RUN, "lr 1e+300 is not in [1e-12, 10]"},
        {RUN_CONFIG + MIN_LR, 8, bits(0.5), RUN, "min_lr 0.5 is above lr 0.001"},
        {RUN_CONFIG + WEIGHT_DECAY, 8, bits(INFINITY), RUN, "weight_decay inf is not in [0, 10]"},
        {RUN_CONFIG + WEIGHT_DECAY, 8, bits(1e300), RUN, "weight_decay 1e+300 is not in [0, 10]"},
        {GPT_DROPOUT, 8, bits(0.999999), MODEL, "dropout 0.999999 is not in [0, 0.95]"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        resume_refuses(good, n, cases[i].at, cases[i].value, cases[i].bytes, cases[i].who,
                       cases[i].want);
    free(good);
}
END_TEST

START_TEST(test_load_refuses_a_step_past_the_run)
{
    const char *path = saved_run("s.ckpt");
    size_t n;
    unsigned char *good = (unsigned char *)qkv_test_read_file(path, &n);
    size_t at = step_offset(path, n);
    ck_assert_uint_eq(good[at], RUN_STEPS); /* it is the step */
    resume_refuses(good, n, at, INT64_MAX, 8, RUN,
                   "step 9223372036854775807 is not in [0, iters 10]");
    resume_refuses(good, n, at, (uint64_t)1 << 31, 8, RUN, "step 2147483648 is not in [0, iters 10]");
    resume_refuses(good, n, at, RUN_ITERS + 1, 8, RUN, "step 11 is not in [0, iters 10]");
    /* Its own length is a step it can stand at (with its optimizer's step,
     * one update a step): it resumes with nothing to do. */
    size_t at_optim = optim_step_offset(path, n);
    ck_assert_uint_eq(good[at_optim], RUN_STEPS);
    patch_le(good, at_optim, RUN_ITERS, 8);
    test_run *t = gpt_run_resume(tampered(good, n, at, RUN_ITERS, 8), text_path, 0);
    ck_assert_qkv(t);
    ck_assert_int_eq(t->run->step, RUN_ITERS);
    test_run_free(t);
    free(good);
}
END_TEST

/* Resuming for fewer steps than the run has done says where it stands and what to pass. */
START_TEST(test_resume_below_the_saved_step_says_what_to_pass)
{
    const char *path = saved_run("b.ckpt");
    test_run *t = gpt_run_resume(path, text_path, RUN_STEPS - 1);
    ck_assert_ptr_null(t);
    ck_assert_error("qkv_training_resume", "is at step 3 (of 10)", "iters 2",
                    "pass iters above 3");
    t = gpt_run_resume(path, text_path, RUN_STEPS); /* the step itself: nothing to do */
    ck_assert_qkv(t);
    ck_assert_int_eq(qkv_training_set_iters(t->run, RUN_STEPS - 1), -1);
    ck_assert_error("qkv_training_set_iters", "iters 2 must be in [3, 2147483647]");
    test_run_free(t);
}
END_TEST

/* ---- save refuses what load refuses ---- */

/* A save of a vocabulary load would refuse fails naming it, and writes nothing. */
START_TEST(test_save_refuses_vocabularies_load_refuses)
{
    qkv_params *p = qkv_params_new();
    qkv_params_add(p, "w", QKV_SHAPE(2, 2), QKV_INIT_NORMAL, 0.1);
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    ck_assert_int_eq(qkv_params_alloc(p, &rng), 0);
    qkv_tokenizer v;
    struct {
        int size;
        const char *bytes;
        const char *want;
    } cases[] = {
        {257, "", "a vocabulary of 257 bytes"},
        {300, "", "a vocabulary of 300 bytes"},
        {3, "bac", "byte 1 is 0x61 after 0x62"},
        {3, "abb", "byte 2 is 0x62 after 0x62 (a duplicate)"},
        {-1, "", "a vocabulary of -1 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        qkv_tokenizer_build(&v, "abc", 3);
        v.size = cases[i].size;
        memcpy(v.byte, cases[i].bytes, strlen(cases[i].bytes));
        qkv_ckpt_model m = {.kind = "test", .vocab = &v};
        const char *path = tmp_path("v.ckpt");
        ck_assert_int_eq(qkv_checkpoint_save(path, &m, p, NULL, NULL), -1);
        ck_assert_error("qkv_checkpoint_save", "model->vocab", cases[i].want);
        ck_assert_int_eq(access(path, F_OK), -1); /* nothing written */
    }
    /* The same vocabulary, sorted, saves and opens. */
    qkv_tokenizer_build(&v, "bca", 3);
    qkv_ckpt_model m = {.kind = "test", .vocab = &v};
    ck_assert_int_eq(qkv_checkpoint_save(tmp_path("v.ckpt"), &m, p, NULL, NULL), 0);
    qkv_checkpoint *ck = qkv_checkpoint_open(tmp_path("v.ckpt"), "test");
    ck_assert_qkv(ck);
    ck_assert_int_eq(ck->vocab.size, 3);
    qkv_checkpoint_close(ck);
    qkv_params_free(&p);
}
END_TEST

/* A run whose settings, step or vocabulary load would refuse is not saved:
 * the checkpoint there stays the last good one. */
START_TEST(test_training_save_refuses_what_load_refuses)
{
    const char *path = saved_run("t.ckpt");
    size_t n;
    unsigned char *before = (unsigned char *)qkv_test_read_file(path, &n);
    test_run *t = gpt_run_resume(path, text_path, 0);
    ck_assert_qkv(t);
    qkv_training *run = t->run;
    qkv_train_config good = run->cfg;
/* The good run with one change must not save, and the message must say want. */
#define SAVE_REFUSES(change, want)                                                                 \
    do {                                                                                           \
        run->cfg = good;                                                                           \
        run->step = RUN_STEPS;                                                                     \
        change;                                                                                    \
        ck_assert_int_eq(qkv_training_save(run, path), -1);                                        \
        ck_assert_error("qkv_training_save", want);                                                \
    } while (0)
    SAVE_REFUSES(run->cfg.iters = 0, "t->cfg: iters 0");
    SAVE_REFUSES(run->cfg.batch_size = 0, "t->cfg: batch_size 0");
    SAVE_REFUSES(run->cfg.eval_iters = 0, "t->cfg: eval_iters 0");
    SAVE_REFUSES(run->cfg.lr = 1e300, "t->cfg: lr 1e+300");
    SAVE_REFUSES(run->cfg.min_lr = 1, "t->cfg: min_lr 1 is above lr 0.001");
    SAVE_REFUSES(run->cfg.weight_decay = INFINITY, "t->cfg: weight_decay inf");
    SAVE_REFUSES(run->cfg.grad_clip = NAN, "t->cfg: grad_clip nan");
    SAVE_REFUSES(run->step = RUN_ITERS + 1, "step 11 is not in [0, iters 10]");
    SAVE_REFUSES(run->step = -1, "step -1 is not in [0, iters 10]");
#undef SAVE_REFUSES
    run->cfg = good;
    run->step = RUN_STEPS;
    qkv_tokenizer bad = t->text->tok;
    bad.byte[1] = bad.byte[0]; /* a duplicate */
    run->model.vocab = &bad;
    ck_assert_int_eq(qkv_training_save(run, path), -1);
    ck_assert_error("qkv_training_save", "t->model.vocab", "(a duplicate)");
    size_t m;
    unsigned char *after = (unsigned char *)qkv_test_read_file(path, &m);
    ck_assert(m == n && memcmp(before, after, n) == 0); /* untouched */
    free(after);
    free(before);
    test_run_free(t);
}
END_TEST

/* ---- the program ---- */

/* Run `qkv ARGS` (the program of QKV_TEST_BUILD, else build/) in tmpdir,
 * after the shell commands before (or ""), with stdout and stderr into out;
 * its exit status. */
static int run_qkv(char *out, size_t cap, const char *before, const char *args)
{
    const char *build = getenv("QKV_TEST_BUILD");
    char cwd[2048] = "", cmd[8192];
    if (!build || build[0] != '/')
        ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(cmd, sizeof cmd, "cd %s && %s%s%s%s/qkv %s > out.txt 2>&1", tmpdir, before, cwd,
             cwd[0] ? "/" : "", build ? build : "build", args);
    int rc = system(cmd);
    FILE *f = fopen(tmp_path("out.txt"), "r");
    ck_assert_ptr_nonnull(f);
    size_t k = fread(out, 1, cap - 1, f);
    out[k] = 0;
    fclose(f);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

/* --time past a year is refused before any work: 1e30 s overflowed the
 * budget's step count and trained 2,000 steps in 2.5 s. */
START_TEST(test_time_beyond_a_year_is_refused)
{
    char out[4096];
    write_text("text.txt", 4000);
    ck_assert_int_eq(run_qkv(out, sizeof out, "", "train --data text.txt --time 1e30 --out x.ckpt"), 2);
    ck_assert_msg(strstr(out, "--time: '1e30' is 1e+30 s, longer than a year (31536000 s)"), "%s",
                  out);
    ck_assert_int_eq(access(tmp_path("x.ckpt"), F_OK), -1);
    ck_assert_int_eq(run_qkv(out, sizeof out, "", "s2s train --time 40000000"), 2);
    ck_assert_msg(strstr(out, "longer than a year"), "%s", out);
}
END_TEST

/* The program resuming below the saved step, or at it, says what to pass. */
START_TEST(test_program_resume_below_the_step_says_what_to_pass)
{
    char out[4096];
    saved_run("p.ckpt");
    ck_assert_int_eq(run_qkv(out, sizeof out, "", "train --resume p.ckpt --data text.txt --iters 2"), 1);
    ck_assert_msg(strstr(out, "is at step 3 (of 10)") && strstr(out, "pass iters above 3"), "%s",
                  out);
    ck_assert_int_eq(run_qkv(out, sizeof out, "", "train --resume p.ckpt --data text.txt --iters 3"), 0);
    ck_assert_msg(strstr(out, "already at step 3 of 3; nothing to do (pass --iters above 3"), "%s",
                  out);
}
END_TEST

static Suite *ranges_suite(void)
{
    Suite *s = suite_create("checkpoint_ranges");
    TCase *load = tcase_create("load");
    tcase_add_unchecked_fixture(load, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(load, 60);
    tcase_add_test(load, test_load_refuses_impossible_run_settings);
    tcase_add_test(load, test_load_refuses_a_step_past_the_run);
    tcase_add_test(load, test_resume_below_the_saved_step_says_what_to_pass);
    suite_add_tcase(s, load);
    TCase *save = tcase_create("save");
    tcase_add_unchecked_fixture(save, make_tmpdir, remove_tmpdir);
    tcase_add_test(save, test_save_refuses_vocabularies_load_refuses);
    tcase_add_test(save, test_training_save_refuses_what_load_refuses);
    suite_add_tcase(s, save);
    TCase *program = tcase_create("program");
    tcase_add_unchecked_fixture(program, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(program, 120);
    tcase_add_test(program, test_time_beyond_a_year_is_refused);
    tcase_add_test(program, test_program_resume_below_the_step_says_what_to_pass);
    suite_add_tcase(s, program);
    return s;
}

QKV_TEST_MAIN(ranges_suite)
