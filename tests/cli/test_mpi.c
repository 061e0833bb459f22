/* Data-parallel training over MPI: 2 ranks at a global batch of 8 compute the
 * same run as one process at batch 8 (up to the order of float sums), resume
 * exactly, stop together on a signal to one rank, and end together, saying
 * which rank and why, when one cannot start or differs in what must match.
 * Runs $QKV_TEST_BUILD/qkv-mpi (made by make test when $(MPICC) and
 * $(MPIRUN) exist) under the launcher $QKV_MPIRUN (default mpirun): Open
 * MPI's or MPICH's (Hydra). Without them every case says SKIPPED. */
#define _GNU_SOURCE
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing.h"

static char qkv[4096], qkv_mpi[4200]; /* the default program and its MPI flavour */
static char dir[64];                  /* the suite's temporary directory */
static bool have_mpi;
static const char *launcher; /* $QKV_MPIRUN, else mpirun */
static char mpirun[1024];    /* the launcher's command line, up to the ranks' -np */
static char mpirun_quick[1024]; /* the same, for runs that end before a step: a hang fails sooner */
#define MODEL "--layers 2 --embd 32 --heads 2 --block 16 --batch 8 --eval-iters 2 " \
              "--eval-every 10 --log-every 1 --threads 1"

/* What the launcher needs beyond the MPI standard's `-np N prog : -np M prog`.
 * Open MPI's mpirun refuses root and more ranks than cores unless told;
 * MPICH's Hydra (and any other) runs as root and oversubscribes as it is. */
static const char *launcher_flags(void)
{
    char cmd[1100], line[256];
    snprintf(cmd, sizeof cmd, "'%s' --version 2>&1", launcher);
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    bool open_mpi = false;
    while (fgets(line, sizeof line, p))
        open_mpi |= strstr(line, "Open MPI") != NULL || strstr(line, "OpenRTE") != NULL;
    pclose(p);
    return open_mpi ? "--allow-run-as-root --oversubscribe" : "";
}

static void setup(void)
{
    const char *build = getenv("QKV_TEST_BUILD") ? getenv("QKV_TEST_BUILD") : "build";
    ck_assert_ptr_nonnull(realpath(build, qkv));
    snprintf(qkv_mpi, sizeof qkv_mpi, "%s/qkv-mpi", qkv);
    strcat(qkv, "/qkv");
    launcher = getenv("QKV_MPIRUN") ? getenv("QKV_MPIRUN") : "mpirun";
    char probe[1100];
    snprintf(probe, sizeof probe, "command -v '%s' >/dev/null", launcher);
    have_mpi = access(qkv_mpi, X_OK) == 0 && system(probe) == 0;
    if (have_mpi) {
        const char *flags = launcher_flags();
        snprintf(mpirun, sizeof mpirun, "OMP_NUM_THREADS=1 timeout -k 10 120 '%s' %s", launcher,
                 flags);
        snprintf(mpirun_quick, sizeof mpirun_quick, "OMP_NUM_THREADS=1 timeout -k 5 60 '%s' %s",
                 launcher, flags);
    }
    qkv_test_make_tmpdir(dir, sizeof dir, "qkv_mpi");
    char path[128];
    snprintf(path, sizeof path, "%s/text.txt", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 400; i++)
        fprintf(f, "%d: the quick brown fox jumps over the lazy dog, and the dog sleeps on.\n", i);
    ck_assert_int_eq(fclose(f), 0);
}

static void teardown(void) { qkv_test_remove_tmpdir(dir); }

/* Run a shell command in the suite's directory; its exit status. */
static int sh(const char *fmt, ...)
{
    char cmd[8192];
    int n = snprintf(cmd, sizeof cmd, "cd %s && ", dir);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(cmd + n, sizeof cmd - (size_t)n, fmt, ap);
    va_end(ap);
    int rc = system(cmd);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
}

/* Say once per case that it cannot run here, and why. */
#define SKIP_WITHOUT_MPI()                                                                  \
    do {                                                                                    \
        if (!have_mpi) {                                                                    \
            if (access(qkv_mpi, X_OK) != 0)                                                 \
                printf("%s: SKIPPED: no %s (make test builds it when mpicc and mpirun, or " \
                       "MPICC= and MPIRUN=, exist, except in the sanitizer run: apt-get "   \
                       "install openmpi-bin libopenmpi-dev)\n", __func__, qkv_mpi);         \
            else                                                                            \
                printf("%s: SKIPPED: no launcher '%s'\n", __func__, launcher);              \
            return;                                                                         \
        }                                                                                   \
    } while (0)

/* The run of LOG had 2 ranks: rank 0 says so first. A qkv-mpi built with
 * another MPI than the launcher's runs as 2 unrelated 1-rank processes. */
static void assert_two_ranks(const char *log)
{
    ck_assert_msg(sh("head -1 %s | grep -q '^2 ranks'", log) == 0,
                  "%s: not a 2-rank run (is qkv-mpi built with the launcher's MPI?)", log);
}

/* The training losses of CKPT.csv (one row per step), into loss[0..n). */
static int read_losses(const char *csv, double *loss, int cap)
{
    char path[256], line[256];
    snprintf(path, sizeof path, "%s/%s", dir, csv);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no %s", path);
    int n = 0;
    while (fgets(line, sizeof line, f) && n < cap) {
        char *comma = strchr(line, ',');
        if (comma && line[0] >= '0' && line[0] <= '9')
            loss[n++] = strtod(comma + 1, NULL);
    }
    fclose(f);
    return n;
}

/* The exit status a shell wrote to FILE with `echo $? > FILE`. */
static int read_status(const char *file)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no %s", path);
    int status = -1;
    ck_assert_int_eq(fscanf(f, "%d", &status), 1);
    fclose(f);
    return status;
}

/* The parameters of a checkpoint (the caller frees the model), and into *bpe
 * its BPE tokenizer (NULL for a character model) when bpe is not NULL. */
static qkv_gpt *load_bpe(const char *ckpt, qkv_bpe **bpe)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, ckpt);
    qkv_tokenizer vocab;
    qkv_bpe *tok = NULL;
    qkv_gpt *m = qkv_gpt_load_bpe(path, &vocab, &tok);
    ck_assert_msg(m != NULL, "%s: %s", path, qkv_last_error());
    if (bpe)
        *bpe = tok;
    else
        qkv_bpe_free(tok);
    return m;
}

static qkv_gpt *load(const char *ckpt) { return load_bpe(ckpt, NULL); }

/* Whether a and b (either NULL: a character model) are one tokenizer. */
static bool same_tokenizer(const qkv_bpe *a, const qkv_bpe *b)
{
    if (!a || !b)
        return a == b;
    if (qkv_bpe_size(a) != qkv_bpe_size(b))
        return false;
    for (int i = 0; i < qkv_bpe_size(a) - 256; i++) {
        int32_t la, ra, lb, rb;
        if (qkv_bpe_merge(a, i, &la, &ra) < 0 || qkv_bpe_merge(b, i, &lb, &rb) < 0 || la != lb ||
            ra != rb)
            return false;
    }
    return true;
}

/* The largest |a - b| over the parameters, relative to the largest |a|. */
static double params_rel_diff(const qkv_gpt *a, const qkv_gpt *b)
{
    ck_assert_uint_eq(a->params->total, b->params->total);
    double diff = 0, scale = 0;
    for (size_t i = 0; i < a->params->total; i++) {
        diff = fmax(diff, fabs((double)a->params->data[i] - (double)b->params->data[i]));
        scale = fmax(scale, fabs((double)a->params->data[i]));
    }
    return diff / scale;
}

/* The character model, and a model of BPE tokens: each rank trains the
 * tokenizer on the same text, and they must be the one process's. */
START_TEST(test_two_ranks_compute_the_one_process_run)
{
    SKIP_WITHOUT_MPI();
    const char *tokenizers[] = {"chars", "bpe:300"};
    for (int t = 0; t < 2; t++) {
        const char *tok = tokenizers[t];
        ck_assert_int_eq(sh("%s train --data text.txt " MODEL " --tokenizer %s --iters 20 --out "
                            "one.ckpt --force > one.log 2>&1", qkv, tok), 0);
        ck_assert_int_eq(sh("%s -np 2 %s train --data text.txt " MODEL " --tokenizer %s --iters 20 "
                            "--out two.ckpt --force > two.log 2>&1", mpirun, qkv_mpi, tok), 0);
        assert_two_ranks("two.log");
        double one[32], two[32];
        int n1 = read_losses("one.ckpt.csv", one, 32), n2 = read_losses("two.ckpt.csv", two, 32);
        ck_assert_int_eq(n1, 20);
        ck_assert_int_eq(n2, 20);
        for (int i = 0; i < n1; i++)
            ck_assert_msg(fabs(one[i] - two[i]) <= 1e-5 * fabs(one[i]),
                          "%s, step %d: loss %.6f vs %.6f", tok, i + 1, one[i], two[i]);
        qkv_bpe *bpe_a, *bpe_b;
        qkv_gpt *a = load_bpe("one.ckpt", &bpe_a), *b = load_bpe("two.ckpt", &bpe_b);
        ck_assert_msg((bpe_a != NULL) == (t == 1), "%s: the checkpoint's tokenizer", tok);
        ck_assert_msg(same_tokenizer(bpe_a, bpe_b), "%s: the 2-rank run's tokenizer is another",
                      tok);
        double d = params_rel_diff(a, b);
        ck_assert_msg(d <= 1e-5, "%s: parameters differ by %g (relative)", tok, d);
        qkv_bpe_free(bpe_a);
        qkv_bpe_free(bpe_b);
        qkv_gpt_free(a);
        qkv_gpt_free(b);
    }
}
END_TEST

START_TEST(test_two_rank_resume_continues_exactly)
{
    SKIP_WITHOUT_MPI();
    ck_assert_int_eq(sh("%s -np 2 %s train --data text.txt " MODEL " --iters 20 --out full.ckpt "
                        "> full.log 2>&1", mpirun, qkv_mpi), 0);
    /* Half the run, then the rest from its checkpoint. */
    ck_assert_int_eq(sh("%s -np 2 %s train --data text.txt " MODEL
                        " --iters 10 --out half.ckpt > half1.log 2>&1", mpirun, qkv_mpi), 0);
    ck_assert_int_eq(sh("%s -np 2 %s train --resume half.ckpt --data text.txt --iters 20 "
                        "--threads 1 > half2.log 2>&1", mpirun, qkv_mpi), 0);
    assert_two_ranks("full.log");
    assert_two_ranks("half1.log");
    assert_two_ranks("half2.log");
    qkv_gpt *a = load("full.ckpt"), *b = load("half.ckpt");
    ck_assert_msg(memcmp(a->params->data, b->params->data,
                         a->params->total * sizeof *a->params->data) == 0,
                  "the resumed 2-rank run differs from the straight one");
    qkv_gpt_free(a);
    qkv_gpt_free(b);
    /* The checkpoint does not depend on the number of ranks: one process resumes it too. */
    ck_assert_int_eq(sh("%s train --resume half.ckpt --data text.txt --iters 22 --threads 1 "
                        "--out other.ckpt > other.log 2>&1", qkv), 0);
}
END_TEST

/* The whole of the suite's file LOG, NUL-terminated (the caller frees it). */
static char *read_log(const char *log)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, log);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "no %s", path);
    size_t cap = 1 << 16, n = 0;
    char *text = malloc(cap);
    ck_assert_ptr_nonnull(text);
    for (size_t got; (got = fread(text + n, 1, cap - 1 - n, f)) > 0;) {
        n += got;
        if (n == cap - 1) {
            text = realloc(text, cap *= 2);
            ck_assert_ptr_nonnull(text);
        }
    }
    fclose(f);
    text[n] = '\0';
    return text;
}

/* Rank 0 runs `qkv-mpi ARGS0`, rank 1 `qkv-mpi ARGS1`, into LOG: both must end
 * on their own (not by the timeout) with a failure, LOG must say EXPECT (which
 * rank, and in what), and no lock nor any rank may be left behind. */
static void assert_ranks_refuse(const char *log, const char *args0, const char *args1,
                                const char *expect)
{
    int rc = sh("unset QKV_DATA; %s -np 1 %s %s : -np 1 %s %s > %s 2>&1", mpirun_quick, qkv_mpi,
                args0, qkv_mpi, args1, log);
    ck_assert_msg(rc != 124 && rc != 137, "%s: the ranks did not end (killed by the timeout)", log);
    ck_assert_msg(rc != 0, "%s: the run succeeded", log);
    char *text = read_log(log);
    ck_assert_msg(strstr(text, expect) != NULL, "%s: no \"%s\" in:\n%s", log, expect, text);
    free(text);
    ck_assert_msg(sh("ls *.lock > /dev/null 2>&1") != 0, "%s: a lock was left behind", log);
    ck_assert_msg(sh("pgrep -f '^%s '", qkv_mpi) != 0, "%s: a rank is still running", log);
}

START_TEST(test_a_rank_that_cannot_start_ends_them_all)
{
    SKIP_WITHOUT_MPI();
    /* Rank 1 is given a text that does not exist: rank 0 says so, and both end. */
    assert_ranks_refuse("bad.log", "train --data text.txt " MODEL " --iters 20 --out bad.ckpt",
                        "train --data missing.txt " MODEL " --iters 20 --out bad.ckpt",
                        "qkv train: rank 1 could not start: qkv_corpus_load: cannot open "
                        "'missing.txt'");
}
END_TEST

START_TEST(test_ranks_with_different_vocabularies_refuse_to_train)
{
    SKIP_WITHOUT_MPI();
    /* As many symbols (the same parameters: it would train, silently wrong), then one more. */
    ck_assert_int_eq(sh("tr a-z A-Z < text.txt > upper.txt && sed 's/fox/fox?/' text.txt > "
                        "more.txt"), 0);
    assert_ranks_refuse("vocab.log", "train --data text.txt " MODEL " --iters 20 --out v.ckpt",
                        "train --data upper.txt " MODEL " --iters 20 --out v.ckpt",
                        "qkv train: rank 1's vocabulary (");
    ck_assert_int_eq(sh("grep -q \"rank 1's vocabulary (\\([0-9]*\\) symbols, CRC .*) differs "
                        "from rank 0's (\\1 symbols, CRC .*)\" vocab.log"), 0);
    assert_ranks_refuse("more.log", "train --data text.txt " MODEL " --iters 20 --out v.ckpt",
                        "train --data more.txt " MODEL " --iters 20 --out v.ckpt",
                        "qkv train: rank 1's vocabulary (");
    ck_assert_int_eq(sh("grep -q \"rank 1's vocabulary (\\([0-9]*\\) symbols, CRC .*) differs "
                        "from rank 0's (\\1 symbols\" more.log"), 1);
    /* Tokenizers of BPE: of another size; of the same size from another text (upper.txt: the
     * same merges of other bytes give the same ids, so the text's term alone would let it
     * train, silently wrong); none. */
    assert_ranks_refuse("bpe.log", "train --data text.txt " MODEL " --tokenizer bpe:300 --iters "
                        "20 --out v.ckpt", "train --data text.txt " MODEL " --tokenizer bpe:290 "
                        "--iters 20 --out v.ckpt", "qkv train: rank 1's tokenizer (BPE of 290 "
                        "tokens, CRC ");
    assert_ranks_refuse("bpe_text.log", "train --data text.txt " MODEL " --tokenizer bpe:300 "
                        "--iters 20 --out v.ckpt", "train --data upper.txt " MODEL " --tokenizer "
                        "bpe:300 --iters 20 --out v.ckpt", "qkv train: rank 1's tokenizer (BPE of "
                        "300 tokens, CRC ");
    assert_ranks_refuse("bpe_chars.log", "train --data text.txt " MODEL " --tokenizer bpe:300 "
                        "--iters 20 --out v.ckpt", "train --data text.txt " MODEL " --iters 20 "
                        "--out v.ckpt", "qkv train: rank 1's tokenizer (characters) differs from "
                        "rank 0's (BPE of 300 tokens");
}
END_TEST

START_TEST(test_a_usage_error_on_one_rank_ends_them_all)
{
    SKIP_WITHOUT_MPI();
    /* No corpus on rank 1: a usage error before any collective. */
    assert_ranks_refuse("nodata.log", "train --data text.txt " MODEL " --iters 20 --out n.ckpt",
                        "train " MODEL " --iters 20 --out n.ckpt",
                        "qkv train: rank 1 did not join the run: `qkv train` ended with status "
                        "2: no training text");
    /* The same on rank 0: rank 1 speaks for the run. */
    assert_ranks_refuse("badflag.log", "train --data text.txt " MODEL " --embd abc",
                        "train --data text.txt " MODEL " --iters 20 --out n.ckpt",
                        "qkv train: rank 0 did not join the run: `qkv train` ended with status "
                        "2: --embd: 'abc' is not a whole number");
}
END_TEST

/* Rank 1 is given one option more than rank 0, which must match on every rank. */
START_TEST(test_ranks_with_different_options_refuse_to_train)
{
    SKIP_WITHOUT_MPI();
    static const struct { const char *log, *extra, *expect; } cases[] = {
        {"embd.log", "--embd 64",
         "rank 1's model width (--embd 64) differs from rank 0's (--embd 32)"},
        {"iters.log", "--iters 30",
         "rank 1's run length (--iters 30) differs from rank 0's (--iters 20)"},
        {"every.log", "--eval-every 5",
         "rank 1's evaluation interval (--eval-every 5) differs from rank 0's (--eval-every 10)"},
        {"seed.log", "--seed 7", "rank 1's seed (--seed 7) differs from rank 0's (--seed 1337)"},
        {"precision.log", "--precision bf16",
         "rank 1's products' precision (--precision bf16) differs from rank 0's (--precision fp32)"},
    };
    const char *args = "train --data text.txt " MODEL " --iters 20 --out o.ckpt";
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char args1[512];
        snprintf(args1, sizeof args1, "%s %s", args, cases[i].extra);
        assert_ranks_refuse(cases[i].log, args, args1, cases[i].expect);
    }
}
END_TEST

START_TEST(test_ranks_resuming_different_runs_refuse_to_train)
{
    SKIP_WITHOUT_MPI();
    ck_assert_int_eq(sh("%s train --data text.txt " MODEL " --iters 10 --out r.ckpt > r.log 2>&1 "
                        "&& cp r.ckpt r.copy", qkv), 0);
    /* Rank 0 resumes r.ckpt, rank 1 starts afresh with the same options. */
    assert_ranks_refuse("resume.log", "train --resume r.ckpt --data text.txt --iters 20 "
                        "--eval-every 10 --threads 1",
                        "train --data text.txt " MODEL " --iters 20 --out other.ckpt",
                        "qkv train: rank 1's starting step (step 0, a new run) differs from "
                        "rank 0's (step 10, resumed)");
    /* Both resume, from checkpoints at the same step of different runs. */
    ck_assert_int_eq(sh("%s train --data text.txt " MODEL " --iters 10 --seed 7 --out r7.ckpt "
                        "> r7.log 2>&1", qkv), 0);
    assert_ranks_refuse("resume7.log", "train --resume r.ckpt --data text.txt --iters 20 "
                        "--threads 1",
                        "train --resume r7.ckpt --out r.ckpt --data text.txt --iters 20 "
                        "--threads 1",
                        "qkv train: rank 1's seed (--seed 7) differs from rank 0's (--seed 1337)");
    /* The same settings and step, but trained on another order of the text. */
    ck_assert_int_eq(sh("tac text.txt > reversed.txt && %s train --data reversed.txt " MODEL
                        " --iters 10 --out rev.ckpt > rev.log 2>&1", qkv), 0);
    assert_ranks_refuse("resumerev.log", "train --resume r.ckpt --data text.txt --iters 20 "
                        "--threads 1",
                        "train --resume rev.ckpt --out r.ckpt --data text.txt --iters 20 "
                        "--threads 1",
                        "qkv train: rank 1's weights and optimizer state (CRC ");
    ck_assert_int_eq(sh("cmp r.ckpt r.copy"), 0); /* the checkpoint resumed is untouched */
}
END_TEST

START_TEST(test_sigterm_to_one_rank_stops_every_rank_with_a_checkpoint)
{
    SKIP_WITHOUT_MPI();
    /* One step first: 2 processes that are not one job (a qkv-mpi of another
     * MPI than the launcher's) could outlive the launcher of the long run. */
    ck_assert_int_eq(sh("%s -np 2 %s train --data text.txt " MODEL " --iters 1 --out pre.ckpt "
                        "> pre.log 2>&1", mpirun, qkv_mpi), 0);
    assert_two_ranks("pre.log");
    /* A run in the background that only a signal (or the launcher's timeout)
     * ends: it has more steps than it can take in that time. */
    ck_assert_int_eq(sh("(%s -np 2 %s train --data text.txt " MODEL " --iters 1000000000 "
                        "--eval-every 1000000000 --out sig.ckpt > sig.log 2>&1; echo $? > sig.rc) &",
                        mpirun, qkv_mpi), 0);
    /* Until step 30 is logged (both ranks are in the loop, their handlers set)
     * or the run has ended; every wait below ends on the run's own events. */
    ck_assert_int_eq(sh("until grep -q '^step *30/' sig.log 2>/dev/null || [ -s sig.rc ]; do "
                        "sleep 0.1; done; [ ! -s sig.rc ]"), 0);
    /* The ranks' own processes: their command lines start with the program (the
     * shells around them start with sh), and this suite's path is its own. */
    ck_assert_int_eq(sh("p=$(pgrep -f '^%s train'); [ $(echo \"$p\" | wc -l) -eq 2 ] && "
                        "kill -TERM $(echo \"$p\" | tail -1)", qkv_mpi), 0);
    ck_assert_int_eq(sh("until [ -s sig.rc ]; do sleep 0.1; done"), 0);
    /* 143 from the signalled rank, 130 from the other: the launcher passes on either. */
    int status = read_status("sig.rc");
    ck_assert_msg(status == 143 || status == 130, "the run ended with status %d", status);
    ck_assert_int_eq(sh("grep -q 'interrupted at step' sig.log"), 0);
    /* The launcher has reaped every rank before it ends. */
    ck_assert_int_ne(sh("pgrep -f '^%s train'", qkv_mpi), 0);
    qkv_gpt *m = load("sig.ckpt");
    qkv_gpt_free(m);
}
END_TEST

/* The step of the run's last progress line in LOG ("step     N/..."), or -1. */
static long last_step_logged(const char *log)
{
    char *text = read_log(log);
    long last = -1;
    for (const char *at = text; (at = strstr(at, "\nstep ")); at++)
        sscanf(at, "\nstep %ld/", &last);
    free(text);
    return last;
}

/* Rank 1 killed with -9 mid-run: mpirun sends rank 0 SIGTERM (and SIGKILL a
 * second later) while it waits for the dead rank in the step's gradient
 * sum. It must give that collective up, save the last completed step, say
 * how to resume, and leave no lock; the run then resumes on 2 ranks and on
 * 1 from that step. */
START_TEST(test_a_rank_killed_mid_run_leaves_the_last_step_saved)
{
    SKIP_WITHOUT_MPI();
    ck_assert_int_eq(sh("%s -np 2 %s train --data text.txt " MODEL " --iters 1 --out pre.ckpt "
                        "> pre.log 2>&1", mpirun, qkv_mpi), 0);
    assert_two_ranks("pre.log");
    ck_assert_int_eq(sh("(%s -np 2 %s train --data text.txt " MODEL " --iters 1000000000 "
                        "--eval-every 1000000000 --out lost.ckpt > lost.log 2>&1; echo $? > "
                        "lost.rc) &", mpirun, qkv_mpi), 0);
    ck_assert_int_eq(sh("until grep -q '^step *30/' lost.log 2>/dev/null || [ -s lost.rc ]; do "
                        "sleep 0.1; done; [ ! -s lost.rc ]"), 0);
    /* Rank 1 by its launcher's variable (Open MPI's, or MPICH's PMI_RANK). */
    ck_assert_int_eq(sh("for p in $(pgrep -f '^%s train'); do tr '\\0' '\\n' < /proc/$p/environ "
                        "| grep -qx 'OMPI_COMM_WORLD_RANK=1\\|PMI_RANK=1' && kill -KILL $p && "
                        "exit 0; done; exit 1", qkv_mpi), 0);
    ck_assert_int_eq(sh("until [ -s lost.rc ]; do sleep 0.1; done"), 0);
    char *text = read_log("lost.log");
    long saved = -1;
    const char *at = strstr(text, "interrupted at step ");
    const char *tail = text + (strlen(text) > 1500 ? strlen(text) - 1500 : 0);
    ck_assert_msg(at && sscanf(at, "interrupted at step %ld", &saved) == 1,
                  "no save in (the end of lost.log):\n%s", tail);
    ck_assert_msg(strstr(at, ": saved lost.ckpt\nresume with: qkv train --resume lost.ckpt"),
                  "no resume hint in:\n%s", tail);
    ck_assert_msg(strstr(text, "lost contact with the other ranks"), "no reason in:\n%s", tail);
    free(text);
    /* The last completed step: the one whose progress line is the last. */
    ck_assert_int_eq(saved, last_step_logged("lost.log"));
    char path[256];
    snprintf(path, sizeof path, "%s/lost.ckpt", dir);
    qkv_checkpoint *ck = qkv_checkpoint_open(path, "gpt");
    ck_assert_msg(ck != NULL, "%s", qkv_last_error());
    ck_assert_int_eq(ck->step, saved);
    qkv_checkpoint_close(ck);
    ck_assert_msg(sh("ls *.lock > /dev/null 2>&1") != 0, "a lock was left behind");
    ck_assert_int_ne(sh("pgrep -f '^%s train'", qkv_mpi), 0);
    /* It continues, on 2 ranks and on 1. */
    ck_assert_int_eq(sh("cp lost.ckpt one.ckpt && %s -np 2 %s train --resume lost.ckpt --data "
                        "text.txt --iters %ld --threads 1 > again.log 2>&1", mpirun, qkv_mpi,
                        saved + 5), 0);
    assert_two_ranks("again.log");
    ck_assert_int_eq(sh("grep -q '(resumed)' again.log && grep -q '^done: 5 steps' again.log"), 0);
    ck_assert_int_eq(sh("%s train --resume one.ckpt --data text.txt --iters %ld --threads 1 > "
                        "one.log 2>&1 && grep -q '^done: 5 steps' one.log", qkv, saved + 5), 0);
}
END_TEST

static Suite *mpi_suite(void)
{
    Suite *s = suite_create("mpi");
    TCase *tc = tcase_create("mpi");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_two_ranks_compute_the_one_process_run);
    tcase_add_test(tc, test_two_rank_resume_continues_exactly);
    tcase_add_test(tc, test_a_rank_that_cannot_start_ends_them_all);
    tcase_add_test(tc, test_ranks_with_different_vocabularies_refuse_to_train);
    tcase_add_test(tc, test_a_usage_error_on_one_rank_ends_them_all);
    tcase_add_test(tc, test_ranks_with_different_options_refuse_to_train);
    tcase_add_test(tc, test_ranks_resuming_different_runs_refuse_to_train);
    tcase_add_test(tc, test_sigterm_to_one_rank_stops_every_rank_with_a_checkpoint);
    tcase_add_test(tc, test_a_rank_killed_mid_run_leaves_the_last_step_saved);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(mpi_suite)
