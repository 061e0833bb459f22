/* Packing for the gemm driver: copy a block of op(A) or op(B) into the
 * contiguous, zero-padded layout the micro-kernels read (see gemm_kernel.h).
 * Packing is where the transposes are absorbed, so one kernel serves all four
 * forms. */
#include <string.h>

#include "gemm_kernel.h"

void qkv__gemm_pack_a(qkv_real *dst, const qkv_real *a, int lda, bool trans, int m, int kc,
                      int mr)
{
    const int panels = (m + mr - 1) / mr;
    for (int p = 0; p < kc; p++) /* p outermost: a transposed A is read row by row */
        for (int r = 0; r < panels; r++) {
            qkv_real *d = dst + ((size_t)r * kc + p) * mr;
            const int rows = m - r * mr < mr ? m - r * mr : mr;
            if (trans)
                for (int i = 0; i < rows; i++)
                    d[i] = a[(size_t)p * lda + r * mr + i];
            else
                for (int i = 0; i < rows; i++)
                    d[i] = a[(size_t)(r * mr + i) * lda + p];
            for (int i = rows; i < mr; i++)
                d[i] = 0;
        }
}

/* One kc×nr panel of op(B): columns [0, n) of it, n ≤ nr. */
static void pack_b_panel(qkv_real *dst, const qkv_real *b, int ldb, bool trans, int kc, int n,
                         int nr)
{
    if (!trans) {
        for (int p = 0; p < kc; p++) {
            qkv_real *d = dst + (size_t)p * nr;
            memcpy(d, b + (size_t)p * ldb, (size_t)n * sizeof *d);
            for (int j = n; j < nr; j++)
                d[j] = 0;
        }
        return;
    }
    /* op(B)'s column j is a contiguous row of the stored B: read along it. */
    for (int j = 0; j < nr; j++)
        for (int p = 0; p < kc; p++)
            dst[(size_t)p * nr + j] = j < n ? b[(size_t)j * ldb + p] : 0;
}

void qkv__gemm_pack_b(qkv_real *dst, const qkv_real *b, int ldb, bool trans, int kc, int n,
                      int nr)
{
    for (int j0 = 0; j0 < n; j0 += nr) {
        const qkv_real *src = trans ? b + (size_t)j0 * ldb : b + j0;
        pack_b_panel(dst, src, ldb, trans, kc, n - j0 < nr ? n - j0 : nr, nr);
        dst += (size_t)kc * nr;
    }
}
