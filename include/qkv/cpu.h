/* qkv/cpu.h — which vector instructions qkv's kernels use: one choice, made
 * at run time, that every kernel (matrix products, activations, norms,
 * softmax, the optimizer) follows, so that any path this CPU runs can be
 * chosen, timed and compared on one machine. A path changes the speed; the
 * results differ between paths only in the order in which a sum adds its
 * vector lanes (and, on avx2, GELU's tanh).
 *
 *     char paths[64];
 *     printf("kernels: %s (this CPU runs: %s)\n", qkv_cpu_name(qkv_cpu_active()),
 *            qkv_cpu_list(paths, sizeof paths));
 *     if (qkv_cpu_use(QKV_CPU_PORTABLE) < 0)        // plain C from here on
 *         fprintf(stderr, "%s\n", qkv_last_error());
 *     qkv_cpu_use(qkv_cpu_find("avx2"));             // -1 (refused) where there is no AVX2
 *     qkv_cpu_use(QKV_CPU_DEFAULT);                  // back to the choice made at load
 *
 * When the library loads it takes the path QKV_CPU names in the environment
 * ("avx512", "avx2", "neon", "portable") if this CPU runs it, else the widest
 * this CPU runs (the qkv program refuses such a QKV_CPU with a message).
 */
#ifndef QKV_CPU_H
#define QKV_CPU_H

#include "qkv/base.h"

QKV_BEGIN_DECLS

/* The paths, widest first; ids 0 to QKV_CPU_PATHS - 1. */
#define QKV_CPU_AVX512 0   /* x86-64 with AVX-512F and FMA: 16 floats per vector */
#define QKV_CPU_AVX2 1     /* x86-64 with AVX2 and FMA: 8 floats */
#define QKV_CPU_NEON 2     /* aarch64 (NEON is its baseline): 4 floats */
#define QKV_CPU_PORTABLE 3 /* plain C at the build's baseline: any CPU */
#define QKV_CPU_PATHS 4
/* For qkv_cpu_use: the path chosen at load. Not -1, so that a failed
 * qkv_cpu_find given to qkv_cpu_use is refused, not taken for it. */
#define QKV_CPU_DEFAULT (-2)

/* The name of path ("avx512", "avx2", "neon", "portable"); NULL with a message for any other id. */
const char *qkv_cpu_name(int path);

/* The id of the path called name, or -1 with a message (name NULL or no path's name). */
int qkv_cpu_find(const char *name);

/* Whether this CPU (and this build of the library) runs path; false, with a
 * message, for an id that is no path's. */
bool qkv_cpu_supported(int path);

/* The id of the path every kernel uses now. */
int qkv_cpu_active(void);

/* Make every kernel use path from now on (QKV_CPU_DEFAULT: the path chosen at
 * load). 0, or -1 with a message when path is no path's id or this CPU lacks
 * it. Not thread-safe: call it while no kernel runs. */
int qkv_cpu_use(int path);

/* The names of the paths this CPU runs, widest first and space-separated,
 * into buf (size bytes, truncated to fit): buf, or NULL with a message when
 * buf is NULL or size < 1. */
const char *qkv_cpu_list(char *buf, int size);

/* Whether this core runs a 512-bit vector as two 256-bit halves (AMD Zen 4):
 * there avx512 does no more arithmetic per cycle than avx2, only in fewer
 * instructions, so a kernel the vector width bounds is not twice as fast. */
bool qkv_cpu_avx512_halved(void);

QKV_END_DECLS
#endif
