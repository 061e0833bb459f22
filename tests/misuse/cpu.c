/* Misuse cases for qkv/cpu.h: the kernels' vector path. */
#include "misuse.h"

MISUSE(qkv_cpu_name, negative) { FAILS_NULL(qkv_cpu_name(-1), "path -1"); }
MISUSE(qkv_cpu_name, past_the_last) { FAILS_NULL(qkv_cpu_name(QKV_CPU_PATHS), "path 4"); }
MISUSE(qkv_cpu_find, null_name) { FAILS_INT(qkv_cpu_find(NULL), "name is NULL"); }
MISUSE(qkv_cpu_find, unknown_name) { FAILS_INT(qkv_cpu_find("sse9"), "'sse9'", "portable"); }
MISUSE(qkv_cpu_supported, out_of_range) { FAILS_AS(false, qkv_cpu_supported(7), "path 7"); }
MISUSE(qkv_cpu_active, takes_no_arguments)
{
    int p = qkv_cpu_active();
    MISUSE_ASSERT(p >= 0 && p < QKV_CPU_PATHS && qkv_cpu_supported(p));
}
MISUSE(qkv_cpu_use, out_of_range)
{
    int before = qkv_cpu_active();
    FAILS_INT(qkv_cpu_use(QKV_CPU_PATHS), "path 4");
    MISUSE_ASSERT(qkv_cpu_active() == before); /* a refused path changes nothing */
}
MISUSE(qkv_cpu_use, failed_find_is_not_the_default)
{
    MISUSE_ASSERT(qkv_cpu_use(QKV_CPU_PORTABLE) == 0);
    FAILS_INT(qkv_cpu_use(qkv_cpu_find("sse9")), "path -1");
    MISUSE_ASSERT(qkv_cpu_active() == QKV_CPU_PORTABLE);
}
MISUSE(qkv_cpu_use, unsupported)
{
    /* Every build lacks one path: NEON off aarch64, the x86 paths on it. */
    int lacking = qkv_cpu_supported(QKV_CPU_NEON) ? QKV_CPU_AVX2 : QKV_CPU_NEON;
    FAILS_INT(qkv_cpu_use(lacking), "does not run", "portable");
}
MISUSE(qkv_cpu_list, null_buf) { FAILS_NULL(qkv_cpu_list(NULL, 64), "buf is NULL"); }
MISUSE(qkv_cpu_list, zero_size)
{
    char buf[8];
    FAILS_NULL(qkv_cpu_list(buf, 0), "size 0");
}
MISUSE(qkv_cpu_list, short_buffer_truncates)
{
    char buf[3];
    MISUSE_ASSERT(qkv_cpu_list(buf, sizeof buf) == buf && strlen(buf) < sizeof buf);
}
MISUSE(qkv_cpu_avx512_halved, takes_no_arguments)
{
    MISUSE_ASSERT(!qkv_cpu_avx512_halved() || qkv_cpu_supported(QKV_CPU_AVX512));
}
