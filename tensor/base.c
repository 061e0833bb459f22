/* Error messages, the allocation hook, the precision guard and the version
 * (see qkv/base.h and qkv/version.h). */
#include "qkv/base.h"
#include "qkv/version.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one precision symbol this build of the library defines (see base.h). */
const int QKV_PRECISION_SYMBOL = 1;

const char *qkv_version(void) { return QKV_VERSION_STRING; }

static _Thread_local char last_error[512];

const char *qkv_last_error(void) { return last_error; }

void qkv_clear_error(void) { last_error[0] = '\0'; }

int qkv_set_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return -1;
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
void *qkv_alloc(size_t size)
{
    if (size > SIZE_MAX - QKV_ALIGN - sizeof(void *)) {
        qkv_set_error("allocation of %zu bytes is too large", size);
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
        qkv_set_error("out of memory allocating %zu bytes", size);
        return NULL;
    }
#pragma omp atomic
    n_allocs++;
    return p;
}

void *qkv_calloc(size_t size)
{
    void *p = qkv_alloc(size);
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
