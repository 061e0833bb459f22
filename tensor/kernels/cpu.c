/* The run-time choice of vector path (see cpu.h). */
#include "cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if QKV__CPU_X86
#include <cpuid.h>
#endif

#include "qkv/base.h"

static const char *const names[QKV__CPU_N_PATHS] = {
    [QKV__CPU_AVX512] = "avx512",
    [QKV__CPU_AVX2] = "avx2",
    [QKV__CPU_NEON] = "neon",
    [QKV__CPU_PORTABLE] = "portable",
};

/* Set before main by choose_at_load; qkv__cpu_force changes it. */
qkv__cpu_path qkv__cpu_current = QKV__CPU_PORTABLE;

const char *qkv__cpu_name(int path)
{
    return path >= 0 && path < QKV__CPU_N_PATHS ? names[path] : NULL;
}

bool qkv__cpu_supported(int path)
{
    switch (path) {
    case QKV__CPU_PORTABLE:
        return true;
#if QKV__CPU_X86
    case QKV__CPU_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case QKV__CPU_AVX512:
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
#endif
#if QKV__CPU_AARCH64
    case QKV__CPU_NEON:
        return true;
#endif
    default:
        return false;
    }
}

bool qkv__cpu_avx512_halved(void)
{
#if QKV__CPU_X86
    unsigned a, b, c, d;
    if (!qkv__cpu_supported(QKV__CPU_AVX512) || !__get_cpuid(1, &a, &b, &c, &d))
        return false;
    unsigned family = (a >> 8 & 0xF) == 0xF ? 0xF + (a >> 20 & 0xFF) : a >> 8 & 0xF;
    return __builtin_cpu_is("amd") && family == 0x19; /* Zen 4; Zen 3 has no AVX-512 */
#else
    return false;
#endif
}

bool qkv__cpu_has_avx512_bf16(void)
{
#if QKV__CPU_X86
    unsigned a, b, c, d; /* CPUID leaf 7, subleaf 1: EAX bit 5 is AVX512_BF16 */
    return qkv__cpu_supported(QKV__CPU_AVX512) && __builtin_cpu_supports("avx512bw") &&
           __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 5 & 1);
#else
    return false;
#endif
}

int qkv__cpu_parse(const char *name)
{
    for (int p = 0; name && p < QKV__CPU_N_PATHS; p++)
        if (strcmp(name, names[p]) == 0)
            return p;
    return -1;
}

const char *qkv__cpu_list(char *buf, int size)
{
    int used = 0;
    buf[0] = 0;
    for (int p = 0; p < QKV__CPU_N_PATHS && used < size; p++)
        if (qkv__cpu_supported(p))
            used += snprintf(buf + used, (size_t)(size - used), "%s%s", used ? " " : "", names[p]);
    return buf;
}

/* The widest path the CPU supports. */
static qkv__cpu_path widest(void)
{
    int p = 0;
    while (!qkv__cpu_supported(p))
        p++;
    return (qkv__cpu_path)p;
}

/* QKV_CPU's path when it names one this CPU supports, else the widest (the
 * qkv program refuses such a QKV_CPU with a message; see qkv__cpu_use). */
static qkv__cpu_path default_path(void)
{
    int p = qkv__cpu_parse(getenv("QKV_CPU"));
    return p >= 0 && qkv__cpu_supported(p) ? (qkv__cpu_path)p : widest();
}

/* Choose before main (and before any thread), so every reader sees one value. */
__attribute__((constructor)) static void choose_at_load(void)
{
#if QKV__CPU_X86
    __builtin_cpu_init(); /* __builtin_cpu_supports in a constructor needs it */
#endif
    qkv__cpu_current = default_path();
}

int qkv__cpu_force(int path)
{
    if (path == -1) {
        qkv__cpu_current = default_path();
        return 0;
    }
    if (!qkv__cpu_supported(path))
        return -1;
    qkv__cpu_current = (qkv__cpu_path)path;
    return 0;
}

int qkv__cpu_use(const char *what, const char *name)
{
    if (!name || !*name)
        return 0;
    int p = qkv__cpu_parse(name);
    if (p >= 0 && qkv__cpu_force(p) == 0)
        return 0;
    char list[64];
    return qkv_set_error("%s%s: %s (this CPU runs: %s)", what, name,
                         p < 0 ? "no such path (avx512, avx2, neon or portable)"
                               : "this CPU does not support it",
                         qkv__cpu_list(list, sizeof list));
}
