/* The WebAssembly build's <omp.h> (make wasm puts this folder first on its
 * include path): the module runs in one thread, emscripten has no OpenMP,
 * and without -fopenmp the pragmas are ignored, so the library's few OpenMP
 * calls get the answers of a one-thread team. Nothing else sees this file. */
#ifndef QKV_LIVE_OMP_H
#define QKV_LIVE_OMP_H

static inline int omp_get_max_threads(void) { return 1; }
static inline int omp_get_num_threads(void) { return 1; }
static inline int omp_get_thread_num(void) { return 0; }
static inline int omp_get_thread_limit(void) { return 1; }
static inline int omp_get_num_procs(void) { return 1; }
static inline int omp_in_parallel(void) { return 0; }
static inline void omp_set_num_threads(int n) { (void)n; }

#endif
