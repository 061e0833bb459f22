/* Saving never destroys the last good checkpoint. A child process saves a
 * big-ish checkpoint (6 MB) to one path over and over, each time a new
 * "generation" (every value, the step and the RNG states say which), and is
 * killed with SIGKILL at a random moment, again and again. After every kill
 * the file at the path must open, pass its checksum and hold one complete
 * generation: the last one the child finished, or the one whose rename it
 * had just done. A kill in the middle of writing leaves only a temporary
 * (PATH.tmp-XXXXXX) behind, and a kill that leaves the lock file PATH.lock
 * does not keep the next saver out (the lock died with its holder). */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "child.h"
#include "testing.h"

enum { ROUNDS = 10, N_RNGS = 2 };

/* Everything a checkpoint holds, filled with one generation's values. */
typedef struct state {
    qkv_params *p;
    qkv_optim *opt;
    qkv_rng rngs[N_RNGS];
    qkv_rng *streams[N_RNGS];
    qkv_ckpt_progress prog;
} state;

static void state_init(state *s)
{
    s->p = qkv_params_new();
    ck_assert_qkv(qkv_params_add(s->p, "w", QKV_SHAPE(512, 1024), QKV_INIT_ZEROS, 0));
    ck_assert_qkv(qkv_params_add(s->p, "b", QKV_SHAPE(1000), QKV_INIT_ZEROS, 0));
    ck_assert_int_eq(qkv_params_alloc(s->p, NULL), 0);
    qkv_optim_config cfg = qkv_adamw_defaults();
    s->opt = qkv_optim_new(s->p, &cfg);
    ck_assert_qkv(s->opt);
    for (int r = 0; r < N_RNGS; r++)
        s->streams[r] = &s->rngs[r];
    s->prog = (qkv_ckpt_progress){.n_rngs = N_RNGS, .rngs = s->streams};
}

static void state_free(state *s)
{
    qkv_optim_free(s->opt);
    qkv_params_free(&s->p);
}

/* What generation g stores: values g, first moments -g, second moments 2g. */
static void fill(state *s, int64_t g)
{
    for (size_t i = 0; i < s->p->total; i++) {
        s->p->data[i] = (qkv_real)g;
        s->opt->m[i] = (qkv_real)-g;
        s->opt->v[i] = (qkv_real)(2 * g);
    }
    s->opt->step = g;
    s->prog.step = g;
    for (int r = 0; r < N_RNGS; r++)
        qkv_rng_seed(&s->rngs[r], (uint64_t)(g * N_RNGS + r));
}

static int save(const char *path, state *s)
{
    static const char vocab_text[] = "abc";
    qkv_tokenizer vocab;
    qkv_tokenizer_build(&vocab, vocab_text, 3);
    qkv_ckpt_model model = {.kind = "crash-test", .vocab = &vocab};
    return qkv_checkpoint_save(path, &model, s->p, s->opt, &s->prog);
}

/* The checkpoint at path must be one whole generation; returns it. */
static int64_t check_whole(const char *path, state *s)
{
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "crash-test");
    ck_assert_msg(ck != NULL, "the last checkpoint does not open: %s", qkv_last_error());
    ck_assert_msg(qkv_checkpoint_load(ck, s->p, s->opt, &s->prog) == 0, "%s", qkv_last_error());
    qkv_checkpoint_close(ck);
    int64_t g = s->prog.step;
    ck_assert_int_eq(s->opt->step, g);
    for (int i = 0; i < s->p->count; i++) {
        const qkv_param *it = &s->p->items[i];
        size_t j = 0, k = it->offset; /* the first value of another generation, if any */
        while (j < it->t->size && s->p->data[k] == (qkv_real)g && s->opt->m[k] == (qkv_real)-g &&
               s->opt->v[k] == (qkv_real)(2 * g))
            j++, k++;
        ck_assert_msg(j == it->t->size, "value %zu of '%s' mixes generations (step %lld)", j,
                      it->name, (long long)g);
    }
    for (int r = 0; r < N_RNGS; r++) {
        qkv_rng want;
        qkv_rng_seed(&want, (uint64_t)(g * N_RNGS + r));
        ck_assert_mem_eq(&s->rngs[r], &want, sizeof want);
    }
    return g;
}

/* A saver: the generations it starts from, where it saves them, and the
 * pipe it tells the test on. */
typedef struct saver {
    const char *path;
    int64_t first;
    int fds[2];
} saver;

/* The child: save generations first, first+1, ... to path for ever,
 * writing each finished generation's number to the pipe. */
static int save_forever(void *arg)
{
    const saver *sv = arg;
    close(sv->fds[0]);
    state s;
    state_init(&s);
    for (int64_t g = sv->first;; g++) {
        fill(&s, g);
        if (save(sv->path, &s) < 0) {
            fprintf(stderr, "save failed: %s\n", qkv_last_error());
            return 3;
        }
        if (write(sv->fds[1], &g, sizeof g) != (ssize_t)sizeof g)
            return 4;
    }
}

/* Remove the temporaries a killed saver left in dir; how many there were. */
static int remove_temporaries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    char path[512];
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strncmp(e->d_name, "run.ckpt.tmp-", 13) == 0) {
            snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
            ck_assert_int_eq(unlink(path), 0);
            n++;
        }
    closedir(d);
    return n;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

START_TEST(test_sigkill_during_save_keeps_the_last_checkpoint)
{
    char dir[64], path[96], lock[128];
    snprintf(dir, sizeof dir, "/tmp/qkv_crash_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/run.ckpt", dir);
    snprintf(lock, sizeof lock, "%s.lock", path);

    /* Generation 0, and how long one save takes here. */
    state s;
    state_init(&s);
    fill(&s, 0);
    double t0 = now_s();
    ck_assert_msg(save(path, &s) == 0, "%s", qkv_last_error());
    double save_s = now_s() - t0;

    uint64_t seed = (uint64_t)time(NULL) ^ (uint64_t)getpid();
    qkv_rng rng;
    qkv_rng_seed(&rng, seed);
    int64_t last = check_whole(path, &s);
    int mid_write = 0;
    for (int round = 0; round < ROUNDS; round++) {
        saver sv = {path, last + 1, {-1, -1}};
        ck_assert_int_eq(pipe(sv.fds), 0);
        qkv_child c = qkv_child_call(save_forever, &sv, NULL);
        close(sv.fds[1]);
        /* Let it finish one save, then kill it somewhere in the next two. */
        int64_t g;
        ck_assert_int_eq(read(sv.fds[0], &g, sizeof g), (ssize_t)sizeof g);
        struct timespec delay = {0, (long)(1e9 * 2 * save_s * qkv_rng_uniform(&rng))};
        while (nanosleep(&delay, &delay) != 0 && errno == EINTR)
            ;
        ck_assert_int_eq(kill(c.pid, SIGKILL), 0);
        int st = qkv_child_wait(&c, -1);
        ck_assert_msg(st == QKV_CHILD_KILLED(SIGKILL), "the saver %s", qkv_child_describe(st));
        int64_t done = g;
        while (read(sv.fds[0], &g, sizeof g) == (ssize_t)sizeof g)
            done = g;
        close(sv.fds[0]);
        int left = remove_temporaries(dir); /* killed between creating one and the rename */
        ck_assert_int_le(left, 1);
        mid_write += left;
        last = check_whole(path, &s);
        ck_assert_msg(last == done || last == done + 1,
                      "round %d (seed %llu): the file holds generation %lld, the saver had "
                      "finished %lld",
                      round, (unsigned long long)seed, (long long)last, (long long)done);
    }
    printf("kill-during-save: %d SIGKILLs (%d in the middle of writing; one save of %.1f MB "
           "takes %.0f ms): the last checkpoint loaded whole every time\n",
           ROUNDS, mid_write, (double)s.p->total * 12 / 1e6, 1e3 * save_s);
    ck_assert_msg(mid_write > 0, "no kill landed during a save (seed %llu)",
                  (unsigned long long)seed);
    state_free(&s);
    ck_assert_int_eq(unlink(path), 0);
    unlink(lock);
    ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

static Suite *crash_suite(void)
{
    Suite *s = suite_create("crash");
    TCase *tc = tcase_create("save");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sigkill_during_save_keeps_the_last_checkpoint);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(crash_suite)
