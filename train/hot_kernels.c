/* Every hot kernel family in one list (see tensor/kernels/hot.h): here, in
 * train/, since AdamW's family lives in this layer and the others below it. */
#include "tensor/kernels/hot.h"

const qkv__hot_kernel *const *qkv__hot_kernels(int *n)
{
    static const qkv__hot_kernel *all[64];
    static int count;
    if (!count) {
        const qkv__hot_kernel *families[] = {qkv__hot_gemm,        qkv__hot_activation,
                                             qkv__hot_layernorm,   qkv__hot_rmsnorm,
                                             qkv__hot_softmax,     qkv__hot_elementwise,
                                             qkv__hot_affine,      qkv__hot_adamw};
        for (size_t f = 0; f < sizeof families / sizeof *families; f++)
            for (const qkv__hot_kernel *k = families[f]; k->name && count < 64; k++)
                all[count++] = k;
    }
    *n = count;
    return all;
}
