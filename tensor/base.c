/* Error messages, the allocation hook, the precision guard and the version
 * (see qkv/base.h and qkv/version.h). */
#include "qkv/base.h"
#include "qkv/version.h"
#include "check.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one precision symbol this build of the library defines (see base.h). */
const int QKV_PRECISION_SYMBOL = 1;

const char *qkv_version(void) { return QKV_VERSION_STRING; }

/* The ABI guard this build of the library defines (see version.h). */
const int QKV_ABI_SYMBOL = QKV_VERSION_MAJOR;

int qkv_check_version(int major, int minor)
{
    if (major < 0 || minor < 0)
        return qkv_set_error("qkv_check_version: major %d and minor %d must be >= 0", major, minor);
    /* Before 1.0 every minor version is an ABI version of its own. */
    bool fits = major == QKV_VERSION_MAJOR &&
                (major == 0 ? minor == QKV_VERSION_MINOR : minor <= QKV_VERSION_MINOR);
    if (!fits)
        return qkv_set_error("qkv_check_version: the program was built for qkv %d.%d, but runs with "
                             "libqkv %s: rebuild it against this library, or install a qkv whose "
                             "ABI fits %d.%d", major, minor, QKV_VERSION_STRING, major, minor);
    return 0;
}

static _Thread_local char last_error[1024];
/* Where the first failure's message starts in last_error: 0, or past the
 * "fn: input x is NULL: an earlier call failed: " of a NULL passed on. */
static _Thread_local size_t cause_at;

const char *qkv_last_error(void) { return last_error; }

void qkv_clear_error(void) { last_error[0] = '\0', cause_at = 0; }

int qkv_set_error(const char *fmt, ...)
{
    cause_at = 0;
    if (!fmt) {
        snprintf(last_error, sizeof last_error, "qkv_set_error: fmt is NULL");
        return -1;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return -1;
}

int qkv__null_input(const char *fn, const char *arg)
{
    char cause[sizeof last_error];
    snprintf(cause, sizeof cause, "%s", last_error + cause_at);
    int n = snprintf(last_error, sizeof last_error, "%s: input %s is NULL%s", fn, arg,
                     cause[0] ? ": an earlier call failed: " : "");
    n = n < 0 ? 0 : n >= (int)sizeof last_error ? (int)sizeof last_error - 1 : n;
    snprintf(last_error + n, sizeof last_error - (size_t)n, "%s", cause);
    cause_at = (size_t)n;
    return -1;
}

int qkv__fail_in(const char *fn)
{
    size_t n = strlen(fn);
    if (strncmp(last_error, fn, n) == 0 && last_error[n] == ':')
        return -1;
    char why[sizeof last_error];
    snprintf(why, sizeof why, "%s", last_error);
    int k = snprintf(last_error, sizeof last_error, "%s: %s", fn, why);
    if (k > 0 && (size_t)k < sizeof last_error)
        cause_at += n + 2;
    else
        cause_at = 0;
    return -1;
}

bool qkv__null(const char *fn, const char *arg, const void *p)
{
    if (!p)
        qkv_set_error("%s: %s is NULL", fn, arg);
    return !p;
}

bool qkv__not_finite(const char *fn, const char *arg, double x)
{
    if (!isfinite(x))
        qkv_set_error("%s: %s is %g; it must be a finite number", fn, arg, x);
    return !isfinite(x);
}

static void *(*hook_alloc)(size_t) = malloc;
static void (*hook_release)(void *) = free;
static uint64_t n_allocs;

void qkv_set_allocator(void *(*alloc)(size_t), void (*release)(void *))
{
    hook_alloc = alloc ? alloc : malloc;
    hook_release = release ? release : free;
}

uint64_t qkv_alloc_count(void)
{
    uint64_t n;
#pragma omp atomic read
    n = n_allocs;
    return n;
}

/* With the default hook, C11's aligned_alloc gives the aligned block itself,
 * so leak checkers see every live block as reachable. A custom hook need
 * not align, so over-allocate and keep the raw pointer just below the
 * aligned block for qkv_free. */
/* qkv_alloc, with fn naming the public function in a message. */
static void *alloc_in(const char *fn, size_t size)
{
    if (size > SIZE_MAX - 2 * QKV_ALIGN - sizeof(void *)) {
        qkv_set_error("%s: %zu bytes is too large an allocation", fn, size);
        return NULL;
    }
    void *p;
    if (hook_alloc == malloc) {
        p = aligned_alloc(QKV_ALIGN, (size + QKV_ALIGN - 1) / QKV_ALIGN * QKV_ALIGN + QKV_ALIGN * !size);
    } else {
        unsigned char *raw = hook_alloc(size + QKV_ALIGN + sizeof(void *));
        p = raw ? (void *)(((uintptr_t)raw + sizeof(void *) + QKV_ALIGN - 1) &
                           ~(uintptr_t)(QKV_ALIGN - 1))
                : NULL;
        if (p)
            ((void **)p)[-1] = raw;
    }
    if (!p) {
        qkv_set_error("%s: out of memory allocating %zu bytes", fn, size);
        return NULL;
    }
#pragma omp atomic
    n_allocs++;
    return p;
}

void *qkv_alloc(size_t size) { return alloc_in("qkv_alloc", size); }

void *qkv_calloc(size_t size)
{
    void *p = alloc_in("qkv_calloc", size);
    if (p)
        memset(p, 0, size);
    return p;
}

void qkv_free(void *p)
{
    if (!p)
        return;
    /* The same test qkv_alloc made: only a custom alloc hook stored a raw pointer. */
    hook_release(hook_alloc == malloc ? p : ((void **)p)[-1]);
}

int qkv__error_prefix(const char *fmt, ...)
{
    char prefix[512], why[512];
    snprintf(why, sizeof why, "%s", qkv_last_error());
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    return qkv_set_error("%s: %s", prefix, why);
}
