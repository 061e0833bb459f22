/* Small assertions shared by the test programs. */
#include "testing.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

void qkv_test_assert_close(const qkv_tensor *t, const qkv_real *expected, double tol)
{
    for (size_t i = 0; i < t->size; i++)
        ck_assert_msg(fabs((double)t->data[i] - (double)expected[i]) <= tol,
                      "value %zu: got %.9g, expected %.9g (tolerance %g)", i, (double)t->data[i],
                      (double)expected[i], tol);
}

void qkv_test_random_shape(qkv_rng *rng, int ndim, int max_extent, int *shape)
{
    for (int i = 0; i < ndim; i++)
        shape[i] = 1 + (int)qkv_rng_below(rng, (uint64_t)max_extent);
}

void qkv_test_random_perm(qkv_rng *rng, int n, int *perm)
{
    for (int i = 0; i < n; i++)
        perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)qkv_rng_below(rng, (uint64_t)i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

void qkv_test_fill_pipe(int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int w = open(path, O_WRONLY | O_NONBLOCK);
    ck_assert_int_ge(w, 0);
    while (write(w, ".", 1) == 1)
        ;
    ck_assert_int_eq(errno, EAGAIN);
    close(w);
    close(fd);
}

void qkv_test_program(char *path, size_t len)
{
    const char *build = getenv("QKV_TEST_BUILD");
    char cwd[2048] = "";
    if (!build || build[0] != '/')
        ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
    snprintf(path, len, "%s%s%s/qkv", cwd, cwd[0] ? "/" : "", build ? build : "build");
    ck_assert_msg(access(path, X_OK) == 0, "no program at %s (set QKV_TEST_BUILD)", path);
}

qkv_model_options qkv_test_every_option(void)
{
    return (qkv_model_options){
#define ON(field, flag, help) .field = true,
#define FIRST_PAST_GPT2(field, alias, values, help) .field = 1,
        QKV_MODEL_OPTIONS(ON, FIRST_PAST_GPT2)
#undef ON
#undef FIRST_PAST_GPT2
    };
}

qkv_test_env qkv_test_env_new(uint64_t seed)
{
    qkv_test_env env = {.a = qkv_arena_new(1 << 22)};
    ck_assert_ptr_nonnull(env.a);
    qkv_rng_seed(&env.rng, seed);
    return env;
}

static int refused;

static void *refuse(size_t size)
{
    (void)size;
#pragma omp atomic
    refused++;
    return NULL;
}

void qkv_test_without_memory(void (*fn)(void *arg), void *arg)
{
    refused = 0;
    qkv_set_allocator(refuse, free);
    fn(arg);
    qkv_set_allocator(NULL, NULL);
    const char *own_process = getenv("CK_FORK"); /* Check's default: a process per test */
    if (!own_process || strcmp(own_process, "no") != 0)
        ck_assert_int_gt(refused, 0);
}
