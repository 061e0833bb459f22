/* The run-time choice of vector path (see qkv/cpu.h and cpu.h). */
#include "cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if QKV__CPU_X86
#include <cpuid.h>
#endif
#if QKV__CPU_AARCH64 && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP2_BF16
#define HWCAP2_BF16 (1UL << 14) /* Linux's arch/arm64/include/uapi/asm/hwcap.h */
#endif
#endif

#include "tensor/check.h"

static const char *const names[QKV__CPU_N_PATHS] = {
    [QKV__CPU_AVX512] = "avx512",
    [QKV__CPU_AVX2] = "avx2",
    [QKV__CPU_NEON] = "neon",
    [QKV__CPU_PORTABLE] = "portable",
};

/* Set before main by choose_at_load; qkv_cpu_use changes it. */
qkv__cpu_path qkv__cpu_current = QKV__CPU_PORTABLE;

/* Whether path is a path's id; if not, a message naming fn. */
static bool is_path(const char *fn, int path)
{
    if (path >= 0 && path < QKV__CPU_N_PATHS)
        return true;
    qkv_set_error("%s: path %d is no path's id (0 to %d, qkv/cpu.h)", fn, path,
                  QKV__CPU_N_PATHS - 1);
    return false;
}

const char *qkv_cpu_name(int path) { return is_path("qkv_cpu_name", path) ? names[path] : NULL; }

/* Whether this CPU (and build) can run the path id p (in range). */
static bool runs(int p)
{
    switch (p) {
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

bool qkv_cpu_supported(int path) { return is_path("qkv_cpu_supported", path) && runs(path); }

int qkv_cpu_active(void) { return qkv__cpu_current; }

bool qkv_cpu_avx512_halved(void)
{
#if QKV__CPU_X86
    unsigned a, b, c, d;
    if (!runs(QKV__CPU_AVX512) || !__get_cpuid(1, &a, &b, &c, &d))
        return false;
    unsigned family = (a >> 8 & 0xF) == 0xF ? 0xF + (a >> 20 & 0xFF) : a >> 8 & 0xF;
    return __builtin_cpu_is("amd") && family == 0x19; /* Zen 4; Zen 3 has no AVX-512 */
#else
    return false;
#endif
}

/* Whether the CPU has AVX512_BF16 (and the avx512 path runs). */
static bool detect_avx512_bf16(void)
{
#if QKV__CPU_X86
    unsigned a, b, c, d; /* CPUID leaf 7, subleaf 1: EAX bit 5 is AVX512_BF16 */
    return runs(QKV__CPU_AVX512) && __builtin_cpu_supports("avx512bw") &&
           __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 5 & 1);
#else
    return false;
#endif
}

/* Whether the CPU has ARM's BF16 (Linux's hwcap). */
static bool detect_arm_bf16(void)
{
#if QKV__CPU_AARCH64 && defined(__linux__)
    return runs(QKV__CPU_NEON) && (getauxval(AT_HWCAP2) & HWCAP2_BF16);
#else
    return false;
#endif
}

/* The answers of detect_*, found once at load: every bf16 product asks (a
 * CPUID under a hypervisor traps to it: microseconds, more than a generated
 * token's small products take). */
static bool has_avx512_bf16, has_arm_bf16;

bool qkv__cpu_has_avx512_bf16(void) { return has_avx512_bf16; }

bool qkv__cpu_has_arm_bf16(void) { return has_arm_bf16; }

/* The path named name, or -1 (name NULL or unknown), without a message. */
static int parse(const char *name)
{
    for (int p = 0; name && p < QKV__CPU_N_PATHS; p++)
        if (strcmp(name, names[p]) == 0)
            return p;
    return -1;
}

int qkv_cpu_find(const char *name)
{
    if (qkv__null("qkv_cpu_find", "name", name))
        return -1;
    int p = parse(name);
    if (p < 0)
        qkv_set_error("qkv_cpu_find: no path is called '%s' (avx512, avx2, neon or portable)",
                      name);
    return p;
}

const char *qkv_cpu_list(char *buf, int size)
{
    if (qkv__null("qkv_cpu_list", "buf", buf))
        return NULL;
    if (size < 1) {
        qkv_set_error("qkv_cpu_list: size %d leaves no room (at least 1)", size);
        return NULL;
    }
    int used = 0;
    buf[0] = 0;
    for (int p = 0; p < QKV__CPU_N_PATHS && used < size; p++)
        if (runs(p))
            used += snprintf(buf + used, (size_t)(size - used), "%s%s", used ? " " : "", names[p]);
    return buf;
}

/* The widest path the CPU supports. */
static qkv__cpu_path widest(void)
{
    int p = 0;
    while (!runs(p))
        p++;
    return (qkv__cpu_path)p;
}

/* QKV_CPU's path when it names one this CPU supports, else the widest (the
 * qkv program refuses such a QKV_CPU with a message). */
static qkv__cpu_path default_path(void)
{
    int p = parse(getenv("QKV_CPU"));
    return p >= 0 && runs(p) ? (qkv__cpu_path)p : widest();
}

/* Choose before main (and before any thread), so every reader sees one value. */
__attribute__((constructor)) static void choose_at_load(void)
{
#if QKV__CPU_X86
    __builtin_cpu_init(); /* __builtin_cpu_supports in a constructor needs it */
#endif
    has_avx512_bf16 = detect_avx512_bf16();
    has_arm_bf16 = detect_arm_bf16();
    qkv__cpu_current = default_path();
}

int qkv_cpu_use(int path)
{
    const char *fn = "qkv_cpu_use";
    if (path == QKV_CPU_DEFAULT) {
        qkv__cpu_current = default_path();
        return 0;
    }
    if (!is_path(fn, path))
        return -1;
    if (!runs(path)) {
        char list[64];
        return qkv_set_error("%s: this CPU does not run %s (it runs: %s)", fn, names[path],
                             qkv_cpu_list(list, sizeof list));
    }
    qkv__cpu_current = (qkv__cpu_path)path;
    return 0;
}
