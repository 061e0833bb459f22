/* The safe-output path (qkv/file.h): what it refuses, what it leaves behind,
 * the lock between processes, and inputs that must not block (NULL arguments:
 * tests/misuse/file.c). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "child.h"
#include "testing.h"

static char dir[64];

static void make_dir(void) { qkv_test_make_tmpdir(dir, sizeof dir, "qkv_file"); }
static void remove_dir(void) { qkv_test_remove_tmpdir(dir); }

/* dir/name (two slots, so two can be held at once). */
static const char *at(const char *name)
{
    static char paths[2][128];
    static int slot;
    slot ^= 1;
    snprintf(paths[slot], sizeof paths[slot], "%s/%s", dir, name);
    return paths[slot];
}

static void put_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* The first line of the file at path (static buffer; "" when absent). */
static const char *text_of(const char *path)
{
    static char line[256];
    line[0] = 0;
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
    }
    return line;
}

/* How many entries of dir start with prefix. */
static int entries(const char *prefix)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "ls -a %s | grep -c '^%s' ", dir, prefix);
    FILE *p = popen(cmd, "r");
    int n = -1;
    ck_assert_int_eq(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

/* Commit replaces the file whole and keeps its mode; abort and a failed
 * check leave it as it was; nothing is left behind. */
START_TEST(test_commit_replaces_abort_keeps)
{
    const char *path = at("out.txt");
    put_text(path, "old\n");
    ck_assert_int_eq(chmod(path, 0640), 0);
    qkv_output *o = qkv_output_open(path);
    ck_assert_qkv(o);
    fputs("new\n", qkv_output_file(o));
    ck_assert_str_eq(text_of(path), "old\n"); /* not in place before the commit */
    ck_assert_int_eq(qkv_output_commit(o), 0);
    ck_assert_str_eq(text_of(path), "new\n");
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 07777, 0640);
    o = qkv_output_open(path);
    ck_assert_qkv(o);
    fputs("abandoned\n", qkv_output_file(o));
    qkv_output_abort(o);
    ck_assert_str_eq(text_of(path), "new\n");
    ck_assert_int_eq(entries("out.txt"), 1);
    /* Published: in place at once, later writes appended to the file itself. */
    o = qkv_output_open(path);
    fputs("head\n", qkv_output_file(o));
    ck_assert_int_eq(qkv_output_publish(o), 0);
    ck_assert_str_eq(text_of(path), "head\n");
    fputs("more\n", qkv_output_file(o));
    ck_assert_int_eq(qkv_output_commit(o), 0);
    ck_assert_int_eq(entries("out.txt"), 1);
    ck_assert_int_eq(qkv_output_check(path), 0);
    ck_assert_int_eq(entries("out.txt"), 1);
    ck_assert_int_eq(unlink(path), 0);
}
END_TEST

/* A target that is not a regular file, or that is a protected input under
 * another name, is refused before anything is written. */
START_TEST(test_refused_targets)
{
    ck_assert_int_eq(mkfifo(at("fifo"), 0600), 0);
    ck_assert_int_eq(mkdir(at("sub"), 0700), 0);
    const char *targets[] = {at("fifo"), at("sub"), "/dev/null", ""};
    const char *why[] = {"it is a FIFO", "it is a directory", "it is a character device",
                         "the file name is empty"};
    for (int i = 0; i < 4; i++) {
        ck_assert_ptr_null(qkv_output_open(targets[i]));
        ck_assert_msg(strstr(qkv_last_error(), why[i]), "%s", qkv_last_error());
        ck_assert_int_eq(qkv_output_check(targets[i]), -1);
    }
    ck_assert_int_eq(qkv_protect_input(at("absent")), -1); /* nothing there to protect */
    put_text(at("corpus.txt"), "text\n");
    ck_assert_int_eq(link(at("corpus.txt"), at("alias.txt")), 0);
    ck_assert_int_eq(qkv_protect_input(at("corpus.txt")), 0);
    ck_assert_int_eq(qkv_output_check(at("alias.txt")), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "is the same file as the input"));
    ck_assert_ptr_null(qkv_output_open(at("alias.txt")));
    ck_assert_str_eq(text_of(at("corpus.txt")), "text\n");
    ck_assert_int_eq(entries(""), 2 + 4); /* . .. fifo sub corpus.txt alias.txt */
    unlink(at("fifo"));
    rmdir(at("sub"));
    unlink(at("alias.txt"));
    unlink(at("corpus.txt"));
}
END_TEST

/* Inputs: a FIFO and a directory are refused at once; a file opens. */
START_TEST(test_inputs_do_not_block)
{
    ck_assert_int_eq(mkfifo(at("in.fifo"), 0600), 0);
    alarm(10); /* a blocking open would hang here */
    ck_assert_ptr_null(qkv_input_open(at("in.fifo")));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "not a regular file (it is a FIFO)"));
    alarm(0);
    ck_assert_ptr_null(qkv_input_open(dir));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "Is a directory"));
    ck_assert_ptr_null(qkv_input_open("/dev/zero"));
    put_text(at("in.txt"), "hello\n");
    FILE *f = qkv_input_open(at("in.txt"));
    ck_assert_ptr_nonnull(f);
    char line[16];
    ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
    ck_assert_str_eq(line, "hello\n");
    fclose(f);
    unlink(at("in.fifo"));
    unlink(at("in.txt"));
}
END_TEST

/* A whole input in memory: every byte (a NUL inside too), its length, a NUL
 * after the end; an empty file is empty; what qkv_input_open refuses, this
 * refuses with the same reason. */
START_TEST(test_reading_a_whole_input)
{
    const char bytes[] = {'a', 0, 'b', '\n'};
    FILE *f = fopen(at("whole.bin"), "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(bytes, 1, sizeof bytes, f), sizeof bytes);
    fclose(f);
    size_t len = 99;
    unsigned char *got = qkv_input_read(at("whole.bin"), &len);
    ck_assert_msg(got, "%s", qkv_last_error());
    ck_assert_uint_eq(len, sizeof bytes);
    ck_assert_int_eq(memcmp(got, bytes, sizeof bytes), 0);
    ck_assert_int_eq(got[len], 0);
    qkv_free(got);
    put_text(at("empty.txt"), "");
    got = qkv_input_read(at("empty.txt"), &len);
    ck_assert_ptr_nonnull(got);
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq((const char *)got, "");
    qkv_free(got);
    ck_assert_ptr_null(qkv_input_read(dir, &len));
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "Is a directory"));
    unlink(at("whole.bin"));
    unlink(at("empty.txt"));
}
END_TEST

/* A small checkpoint for the lock tests. */
static int save_small(const char *path, uint64_t seed)
{
    qkv_params *p = qkv_params_new();
    qkv_params_add(p, "w", QKV_SHAPE(64, 64), QKV_INIT_NORMAL, 1);
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    qkv_params_alloc(p, &rng);
    qkv_tokenizer vocab;
    qkv_tokenizer_build(&vocab, "ab", 2);
    qkv_ckpt_model model = {.kind = "lock-test", .vocab = &vocab};
    qkv_rng *streams[] = {&rng};
    qkv_ckpt_progress prog = {.step = (int64_t)seed, .n_rngs = 1, .rngs = streams};
    int rc = qkv_checkpoint_save(path, &model, p, NULL, &prog);
    qkv_params_free(&p);
    return rc;
}

/* A lock holder: the path it locks and its two pipes (it says it holds the
 * lock on ready, and gives it back when hold is closed). */
typedef struct holder {
    const char *path;
    int ready[2], hold[2];
} holder;

/* The child: take the lock, say so, hold it until the test closes hold. */
static int hold_lock(void *arg)
{
    const holder *h = arg;
    close(h->ready[0]);
    close(h->hold[1]);
    char c = qkv_output_lock(h->path) == 0 ? 'y' : 'n';
    if (write(h->ready[1], &c, 1) != 1)
        return 1;
    while (read(h->hold[0], &c, 1) > 0)
        ;
    qkv_output_unlock(h->path);
    return 0;
}

/* A child that takes path's lock and holds it until *release is closed. */
static qkv_child hold_in_child(const char *path, int *release)
{
    holder h = {.path = path};
    ck_assert_int_eq(pipe(h.ready), 0);
    ck_assert_int_eq(pipe(h.hold), 0);
    qkv_child child = qkv_child_call(hold_lock, &h, NULL);
    close(h.ready[1]);
    close(h.hold[0]);
    char c = 0;
    ck_assert_int_eq(read(h.ready[0], &c, 1), 1);
    ck_assert_int_eq(c, 'y');
    close(h.ready[0]);
    *release = h.hold[1];
    return child;
}

/* While another process holds a checkpoint's lock, this one cannot save
 * there or take it; once it is given back, both work and PATH.lock is gone;
 * a file of that name that is not a lock file is never used or removed. */
START_TEST(test_the_lock_keeps_a_second_writer_out)
{
    const char *path = at("run.ckpt");
    int release;
    qkv_child holder = hold_in_child(path, &release);
    ck_assert_int_eq(save_small(path, 1), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "is being written by another process (pid"));
    ck_assert_int_eq(qkv_output_lock(path), -1);
    ck_assert_int_eq(access(path, F_OK), -1);
    close(release);
    ck_assert_int_eq(qkv_child_wait(&holder, -1), 0);
    ck_assert_int_eq(access(at("run.ckpt.lock"), F_OK), -1);
    ck_assert_int_eq(save_small(path, 1), 0);
    ck_assert_int_eq(qkv_output_lock(path), 0);
    ck_assert_int_eq(qkv_output_lock(path), 0); /* held already: fine */
    ck_assert_int_eq(save_small(path, 2), 0);   /* the holder's own saves work */
    qkv_output_unlock(path);
    ck_assert_int_eq(entries("run.ckpt"), 1);

    put_text(at("mine.ckpt.lock"), "my notes\n");
    ck_assert_int_eq(qkv_output_lock(at("mine.ckpt")), -1);
    ck_assert_ptr_nonnull(strstr(qkv_last_error(), "is not a qkv lock file"));
    ck_assert_int_eq(save_small(at("mine.ckpt"), 1), -1);
    ck_assert_str_eq(text_of(at("mine.ckpt.lock")), "my notes\n");
    unlink(at("mine.ckpt.lock"));
    unlink(path);
}
END_TEST

/* What a saver saves where. */
typedef struct saving {
    const char *path;
    uint64_t step;
} saving;

/* The child: save 200 times; 1 when a save fails other than for the lock. */
static int save_often(void *arg)
{
    const saving *job = arg;
    for (int i = 0; i < 200; i++)
        if (save_small(job->path, job->step) < 0 &&
            !strstr(qkv_last_error(), "is being written by another process"))
            return 1;
    return 0;
}

/* Two processes saving one checkpoint over and over: each save either works
 * or fails at once saying the other holds the lock, and the file is always
 * one whole checkpoint. */
START_TEST(test_concurrent_savers_never_corrupt_the_file)
{
    const char *path = at("both.ckpt");
    ck_assert_int_eq(save_small(path, 1), 0);
    qkv_child kids[2];
    for (int k = 0; k < 2; k++)
        kids[k] = qkv_child_call(save_often, &(saving){path, (uint64_t)(10 + k)}, NULL);
    for (int k = 0; k < 2; k++)
        ck_assert_msg(qkv_child_wait(&kids[k], -1) == 0, "a save failed otherwise");
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "lock-test");
    ck_assert_qkv(ck);
    ck_assert(ck->step == 10 || ck->step == 11);
    qkv_checkpoint_close(ck);
    ck_assert_int_eq(entries("both.ckpt"), 1);
    unlink(path);
}
END_TEST

static Suite *file_suite(void)
{
    Suite *s = suite_create("file");
    TCase *tc = tcase_create("output");
    tcase_add_unchecked_fixture(tc, make_dir, remove_dir);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_commit_replaces_abort_keeps);
    tcase_add_test(tc, test_refused_targets);
    tcase_add_test(tc, test_inputs_do_not_block);
    tcase_add_test(tc, test_reading_a_whole_input);
    tcase_add_test(tc, test_the_lock_keeps_a_second_writer_out);
    tcase_add_test(tc, test_concurrent_savers_never_corrupt_the_file);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(file_suite)
