/* The misuse suite's machinery: running each case in a child process of its
 * own, checking its message, and the objects cases misuse (see misuse.h). */
#include "misuse.h"

#include <dirent.h>
#include <omp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testing.h"

enum { MISUSE_MAX_CASES = 2000 };

static misuse_case cases[MISUSE_MAX_CASES];
static int n_cases;
const char *misuse_fn = "";

static int fail_fd = -1;  /* where a failing case writes why */
static char case_dir[64]; /* the case's temporary directory */

/* Cases are kept in order of function and label, so that the suite runs them
 * in one order whatever order the linker gives the case files' constructors.
 * A case defined twice (each file's cases are static, so two files can) is
 * refused rather than run twice. */
void misuse_add(const char *fn, const char *label, void (*run)(void))
{
    if (n_cases == MISUSE_MAX_CASES) {
        fprintf(stderr, "misuse: more than %d cases; raise MISUSE_MAX_CASES\n", MISUSE_MAX_CASES);
        exit(1);
    }
    int i = n_cases;
    for (; i > 0; i--) {
        int order = strcmp(cases[i - 1].fn, fn);
        if (order == 0)
            order = strcmp(cases[i - 1].label, label);
        if (order == 0) {
            fprintf(stderr, "misuse: the case %s (%s) is defined twice\n", fn, label);
            exit(1);
        }
        if (order < 0)
            break;
        cases[i] = cases[i - 1];
    }
    cases[i] = (misuse_case){fn, label, run};
    n_cases++;
}

int misuse_count(void) { return n_cases; }

static void remove_case_dir(void)
{
    if (!case_dir[0])
        return;
    DIR *d = opendir(case_dir);
    char path[sizeof case_dir + 256];
    for (struct dirent *e; d && (e = readdir(d));)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof path, "%s/%s", case_dir, e->d_name);
            remove(path);
        }
    if (d)
        closedir(d);
    rmdir(case_dir);
}

_Noreturn void misuse_fail(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n > (int)sizeof msg - 1)
        n = (int)sizeof msg - 1;
    if (fail_fd >= 0 && write(fail_fd, msg, (size_t)n) < 0)
        perror("misuse");
    remove_case_dir();
    _exit(1);
}

void misuse_check_message(const char *call, int n, const char *const *parts)
{
    const char *msg = qkv_last_error();
    size_t n_fn = strlen(misuse_fn);
    /* "qkv_fn: ...", or "qkv_fn 'module name': ..." for a module's init */
    if (strncmp(msg, misuse_fn, n_fn) != 0 || (msg[n_fn] != ':' && msg[n_fn] != ' '))
        misuse_fail("%s: the message does not start with %s: \"%s\"", call, misuse_fn, msg);
    for (int i = 0; i < n; i++)
        if (!strstr(msg, parts[i]))
            misuse_fail("%s: the message does not say \"%s\": \"%s\"", call, parts[i], msg);
}

/* ---- the objects cases misuse, made on first use ---- */

static qkv_arena *the_arena;
static qkv_rng the_rng;
static bool rng_seeded;
static qkv_ctx the_ctx;
static qkv_params *the_params;
static qkv_optim *the_optim;
static qkv_tokenizer the_tok;
static bool tok_built;
static char the_text_path[128];
static qkv_corpus *the_corpus;
static qkv_gpt *the_gpt;
static qkv_seq2seq *the_s2s;
static qkv_seq2seq_batch *the_batch;
static test_run *the_gpt_run, *the_s2s_run;
static qkv_batcher the_batcher;
static bool batcher_made;
static char the_ckpt[128], the_s2s_ckpt[128];
static qkv_block_config the_block_config = {.n_embd = 8, .n_head = 2, .n_layer = 1};

/* Fail the case when a fixture cannot be made: that is not the misuse under test. */
static void *made(void *p, const char *what)
{
    if (!p)
        misuse_fail("could not make %s: %s", what, qkv_last_error());
    return p;
}

qkv_arena *arena(void)
{
    if (!the_arena)
        the_arena = made(qkv_arena_new(1 << 20), "the arena");
    return the_arena;
}

qkv_tensor *tensor(int ndim, const int *shape)
{
    qkv_tensor *t = made(qkv_tensor_new(arena(), ndim, shape), "a tensor");
    for (size_t i = 0; i < t->size; i++)
        t->data[i] = (qkv_real)(0.1 * (double)(i % 7 + 1));
    return t;
}

qkv_rng *rng(void)
{
    if (!rng_seeded)
        qkv_rng_seed(&the_rng, 7), rng_seeded = true;
    return &the_rng;
}

qkv_ctx *ctx(void)
{
    the_ctx = (qkv_ctx){.arena = arena(), .train = false, .rng = rng()};
    return &the_ctx;
}

qkv_params *params(void)
{
    if (!the_params) {
        the_params = made(qkv_params_new(), "params");
        made(qkv_params_add(the_params, "w", QKV_SHAPE(2, 3), QKV_INIT_NORMAL, 0.02), "w");
        made(qkv_params_add(the_params, "b", QKV_SHAPE(3), QKV_INIT_ZEROS, 0), "b");
        if (qkv_params_alloc(the_params, rng()) < 0)
            misuse_fail("could not allocate params: %s", qkv_last_error());
    }
    return the_params;
}

qkv_optim *optim(void)
{
    if (!the_optim) {
        qkv_optim_config cfg = qkv_adamw_defaults();
        the_optim = made(qkv_optim_new(params(), &cfg), "the optimizer");
    }
    return the_optim;
}

qkv_tokenizer *tok(void)
{
    if (!tok_built)
        qkv_tokenizer_build(&the_tok, "abc", 3), tok_built = true;
    return &the_tok;
}

const char *tmp_path(const char *name)
{
    static char path[8][256];
    static int next;
    if (!case_dir[0]) {
        snprintf(case_dir, sizeof case_dir, "/tmp/qkv_misuse_XXXXXX");
        if (!mkdtemp(case_dir))
            case_dir[0] = '\0', misuse_fail("mkdtemp failed");
    }
    char *p = path[next++ % 8];
    snprintf(p, sizeof path[0], "%s/%s", case_dir, name);
    return p;
}

const char *text_path(void)
{
    if (!the_text_path[0]) {
        snprintf(the_text_path, sizeof the_text_path, "%s", tmp_path("text.txt"));
        FILE *f = fopen(the_text_path, "w");
        if (!f)
            misuse_fail("cannot write %s", the_text_path);
        for (int i = 0; i < 20; i++)
            fputs("the quick brown fox jumps over the lazy dog.\n", f);
        fclose(f);
    }
    return the_text_path;
}

qkv_corpus *corpus(void)
{
    if (!the_corpus)
        the_corpus = made(qkv_corpus_load(text_path(), NULL), "the corpus");
    return the_corpus;
}

qkv_gpt *gpt(void)
{
    if (!the_gpt) {
        qkv_gpt_config cfg = {
            .vocab_size = 5, .block_size = 8, .n_layer = 1, .n_head = 2, .n_embd = 8};
        the_gpt = made(qkv_gpt_new(&cfg, 1), "the GPT");
    }
    return the_gpt;
}

qkv_seq2seq *s2s(void)
{
    if (!the_s2s) {
        const qkv_seq2seq_task *task = made((void *)qkv_seq2seq_task_find("dates"), "the task");
        qkv_seq2seq_config cfg = qkv_seq2seq_config_for(task, 1, 2, 16, 0);
        qkv_tokenizer chars;
        const char *alphabet = task->alphabet();
        qkv_tokenizer_build(&chars, alphabet, strlen(alphabet));
        the_s2s = made(qkv_seq2seq_new(&cfg, &chars, 1), "the seq2seq model");
    }
    return the_s2s;
}

qkv_seq2seq_batch *s2s_batch(void)
{
    if (!the_batch) {
        the_batch = made(qkv_seq2seq_batch_new(s2s(), 2), "a seq2seq batch");
        const char *in[2] = {"3 March 1998", "1.2.2003"}, *out[2] = {"1998-03-03", "2003-02-01"};
        if (qkv_seq2seq_batch_fill(s2s(), the_batch, 2, in, out) < 0)
            misuse_fail("could not fill a seq2seq batch: %s", qkv_last_error());
    }
    return the_batch;
}

static qkv_train_config tiny_train(void)
{
    qkv_train_config tc = qkv_train_defaults();
    tc.iters = 4, tc.batch_size = 2, tc.warmup = 1, tc.eval_iters = 1;
    return tc;
}

test_run *gpt_run(void)
{
    if (!the_gpt_run) {
        qkv_gpt_config mc = {.vocab_size = corpus()->tok.size,
                             .block_size = 8,
                             .n_layer = 1,
                             .n_head = 2,
                             .n_embd = 8};
        qkv_train_config tc = tiny_train();
        the_gpt_run = made(gpt_run_new(&mc, &tc, corpus()), "the GPT's run");
    }
    return the_gpt_run;
}

test_run *s2s_run(void)
{
    if (!the_s2s_run) {
        const qkv_seq2seq_task *task = made((void *)qkv_seq2seq_task_find("dates"), "the task");
        qkv_seq2seq_config mc = qkv_seq2seq_config_for(task, 1, 2, 16, 0);
        qkv_train_config tc = tiny_train();
        the_s2s_run = made(s2s_run_new(&mc, &tc, task), "the seq2seq run");
    }
    return the_s2s_run;
}

qkv_training_model borrowed(void)
{
    qkv_training_model tm = gpt_run()->run->model;
    tm.release = NULL;
    return tm;
}

qkv_batcher *batcher(void)
{
    if (!batcher_made && qkv_batcher_init(&the_batcher, corpus(), QKV_SPLIT_VAL, 2, 8, 1) < 0)
        misuse_fail("could not make a batcher: %s", qkv_last_error());
    batcher_made = true;
    return &the_batcher;
}

const char *ckpt_path(void)
{
    if (!the_ckpt[0]) {
        snprintf(the_ckpt, sizeof the_ckpt, "%s", tmp_path("gpt.ckpt"));
        if (qkv_training_save(gpt_run()->run, the_ckpt) < 0)
            misuse_fail("could not save the GPT's run: %s", qkv_last_error());
    }
    return the_ckpt;
}

const char *s2s_ckpt_path(void)
{
    if (!the_s2s_ckpt[0]) {
        snprintf(the_s2s_ckpt, sizeof the_s2s_ckpt, "%s", tmp_path("s2s.ckpt"));
        if (qkv_seq2seq_save(s2s(), the_s2s_ckpt, 0) < 0)
            misuse_fail("could not save the seq2seq model: %s", qkv_last_error());
    }
    return the_s2s_ckpt;
}

qkv_block_config *block_config(void) { return &the_block_config; }

const qkv_sample_opts OPTS = {.temperature = 1, .top_k = 0, .top_p = 1};

/* FLAT's forward: uniform logits, or NULL when its model pointer is set (a
 * model that fails). */
static qkv_tensor *flat_logits(void *model, const qkv_ctx *ctx, const int32_t *ids, int B, int n,
                               int pos)
{
    (void)ids, (void)n, (void)pos;
    if (model) {
        qkv_set_error("flat: asked to fail");
        return NULL;
    }
    return qkv_zeros(ctx->arena, QKV_SHAPE(B, 5));
}
const qkv_lm FLAT = {.logits = flat_logits, .vocab_size = 5, .context = 4};

/* Free every fixture: a case that left one broken crashes here, in its own process. */
static void free_fixtures(void)
{
    test_run_free(the_s2s_run);
    test_run_free(the_gpt_run);
    qkv_seq2seq_batch_free(the_batch);
    qkv_seq2seq_free(the_s2s);
    qkv_gpt_free(the_gpt);
    qkv_corpus_free(the_corpus);
    qkv_optim_free(the_optim);
    qkv_params_free(&the_params);
    qkv_arena_free(&the_arena);
}

/* ---- running one case ---- */

void misuse_run(int i)
{
    const misuse_case *c = &cases[i];
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        fail_fd = fds[1];
        alarm(30); /* a case that hangs ends as SIGALRM */
        omp_set_num_threads(1);
        misuse_fn = c->fn;
        c->run();
        free_fixtures();
        remove_case_dir();
        _exit(0);
    }
    close(fds[1]);
    char why[1024];
    ssize_t n = 0, got;
    while (n < (ssize_t)sizeof why - 1 &&
           (got = read(fds[0], why + n, sizeof why - 1 - (size_t)n)) > 0)
        n += got;
    why[n] = '\0';
    close(fds[0]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    if (WIFSIGNALED(status))
        ck_abort_msg("%s (%s): CRASHED, signal %d (%s)", c->fn, c->label, WTERMSIG(status),
                     strsignal(WTERMSIG(status)));
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s (%s): %s", c->fn, c->label,
                  n ? why : "exited with an error");
}
