/* Internal: the kernels' side of the vector path (qkv/cpu.h): the active
 * path as a plain load, and the macros that compile a kernel once per path.
 * Not installed. Tests and `qkv bench --cpu` switch paths with qkv_cpu_use.
 *
 * A row kernel is written once, as an always-inlined body, and QKV__KERNEL
 * compiles it once per path (each with that path's target) behind a switch
 * on the active path. A new path is one more id in qkv/cpu.h, one more case
 * in cpu.c and, where it has its own code, in QKV__KERNEL. */
#ifndef QKV_KERNELS_CPU_H
#define QKV_KERNELS_CPU_H

#include <stdbool.h>

#include "qkv/cpu.h"

/* The paths, widest first (their ids are qkv/cpu.h's): the default is the
 * first one the CPU supports. */
typedef enum qkv__cpu_path {
    QKV__CPU_AVX512 = QKV_CPU_AVX512,
    QKV__CPU_AVX2 = QKV_CPU_AVX2,
    QKV__CPU_NEON = QKV_CPU_NEON,
    QKV__CPU_PORTABLE = QKV_CPU_PORTABLE,
    QKV__CPU_N_PATHS = QKV_CPU_PATHS
} qkv__cpu_path;

/* The path every kernel uses now (read on every kernel call: a plain load). */
extern qkv__cpu_path qkv__cpu_current;
static inline qkv__cpu_path qkv__cpu_active(void) { return qkv__cpu_current; }

/* Whether the CPU has AVX512_BF16 (vdpbf16ps: bf16 pairs multiplied into
 * fp32 sums) beside the avx512 path's AVX-512F and AVX512BW: a capability of
 * the bf16 GEMM (gemm_bf16.h), not a path of its own. */
bool qkv__cpu_has_avx512_bf16(void);

/* Whether the CPU has ARM's FEAT_BF16 (bfdot, bfmmla; Linux's HWCAP2_BF16):
 * a capability of the bf16 GEMM beside the neon path, like AVX512_BF16. */
bool qkv__cpu_has_arm_bf16(void);

/* ---- one kernel body, compiled once per path ---- */

#if defined(__x86_64__) && defined(__GNUC__) && !defined(QKV_DOUBLE)
#define QKV__CPU_X86 1
#else
#define QKV__CPU_X86 0
#endif
#if defined(__aarch64__) && !defined(QKV_DOUBLE)
#define QKV__CPU_AARCH64 1 /* the NEON GEMM kernel; the row kernels are compiled once */
#else
#define QKV__CPU_AARCH64 0
#endif

/* The path of the one copy a kernel has where only one is compiled. */
#if QKV__CPU_AARCH64
#define QKV__CPU_OWN QKV__CPU_NEON
#else
#define QKV__CPU_OWN QKV__CPU_PORTABLE
#endif
#define QKV__UNPAREN(...) __VA_ARGS__

/* What a kernel body is: inlined into each path's copy, which then compiles
 * it for that path's vectors. The Makefile builds with -fno-trapping-math
 * (without it GCC keeps a select like `x < lo ? lo : x` a branch on AVX2 and
 * SSE2, which have no masked operations, and the loop stays scalar; the
 * optimize attribute does not reach the inlined helpers) and -fno-math-errno
 * (so sqrt vectorizes). Neither changes a value. -std=c11 keeps the compiler
 * from contracting a·b + c into one FMA, so elementwise results are bit for
 * bit the same on every path; the copies differ only in the order in which
 * a reduction adds its lanes' partial sums, and where a body asks for its
 * path (QKV__KERNEL_BY_PATH below): the AVX2 copy's GELU. */
#define QKV__KERNEL_BODY static inline __attribute__((always_inline))

#if QKV__CPU_X86
/* QKV__KERNEL(name, (params), (args)) defines `static void name(params)`,
 * running name##_body(args) compiled for the active path. */
#define QKV__KERNEL(name, params, args) QKV__KERNEL_COPIES(name, params, args, args, args, args)
/* The same for a body whose first parameter is the path it is compiled for,
 * a constant in each copy: name##_body(path, args). For a body that computes
 * something differently on one path (GELU's tanh on AVX2, op_activation.c). */
#define QKV__KERNEL_BY_PATH(name, params, args)                                                    \
    QKV__KERNEL_COPIES(name, params, args, (QKV__CPU_AVX512, QKV__UNPAREN args),                   \
                       (QKV__CPU_AVX2, QKV__UNPAREN args), (QKV__CPU_PORTABLE, QKV__UNPAREN args))
/* Both: each path's copy calls name##_body with its own arguments. */
#define QKV__KERNEL_COPIES(name, params, args, args_avx512, args_avx2, args_portable)              \
    static __attribute__((target("avx512f,fma"))) void name##_avx512 params                        \
    {                                                                                              \
        name##_body args_avx512;                                                                   \
    }                                                                                              \
    static __attribute__((target("avx2,fma"))) void name##_avx2 params                             \
    {                                                                                              \
        name##_body args_avx2;                                                                     \
    }                                                                                              \
    static void name##_portable params { name##_body args_portable; }                              \
    static void name params                                                                        \
    {                                                                                              \
        switch (qkv__cpu_active()) {                                                               \
        case QKV__CPU_AVX512:                                                                      \
            name##_avx512 args;                                                                    \
            break;                                                                                 \
        case QKV__CPU_AVX2:                                                                        \
            name##_avx2 args;                                                                      \
            break;                                                                                 \
        default:                                                                                   \
            name##_portable args;                                                                  \
        }                                                                                          \
    }
#else
/* One copy: the build's own vectors (NEON is aarch64's baseline), and the
 * double build, whose gradient checks want plain C. */
#define QKV__KERNEL(name, params, args)                                                            \
    static void name params { name##_body args; }
#define QKV__KERNEL_BY_PATH(name, params, args)                                                    \
    static void name params { name##_body(QKV__CPU_OWN, QKV__UNPAREN args); }
#endif

#endif
