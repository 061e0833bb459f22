/* The precision of the model's products (qkv/precision.h): the process-wide
 * choice the mixed products (gemm_mixed.c) read. */
#include "qkv/precision.h"

#include <string.h>

#include "gemm_bf16.h"
#include "gemm_mixed.h"
#include "tensor/check.h"

static const char *const names[QKV_PRECISIONS] = {
    [QKV_PRECISION_FP32] = "fp32",
    [QKV_PRECISION_BF16] = "bf16",
};

/* qkv_precision_use changes it; fp32 until then. */
int qkv__precision_current = QKV_PRECISION_FP32;

/* Whether precision is a precision's id; if not, a message naming fn. */
static bool is_precision(const char *fn, int precision)
{
    if (precision >= 0 && precision < QKV_PRECISIONS)
        return true;
    qkv_set_error("%s: precision %d is no precision's id (0 to %d, qkv/precision.h)", fn, precision,
                  QKV_PRECISIONS - 1);
    return false;
}

const char *qkv_precision_name(int precision)
{
    return is_precision("qkv_precision_name", precision) ? names[precision] : NULL;
}

int qkv_precision_find(const char *name)
{
    if (qkv__null("qkv_precision_find", "name", name))
        return -1;
    for (int p = 0; p < QKV_PRECISIONS; p++)
        if (strcmp(name, names[p]) == 0)
            return p;
    return qkv_set_error("qkv_precision_find: no precision is called \"%s\" (fp32 or bf16)", name);
}

int qkv_precision_active(void) { return qkv__precision_current; }

int qkv_precision_use(int precision)
{
    const char *fn = "qkv_precision_use";
    if (!is_precision(fn, precision))
        return -1;
#ifdef QKV_DOUBLE
    if (precision != QKV_PRECISION_FP32)
        return qkv_set_error("%s: the double build (QKV_DOUBLE) has no %s products", fn,
                             names[precision]);
#endif
    qkv__precision_current = precision;
    return 0;
}

const char *qkv_precision_kernel(void)
{
#ifdef QKV_DOUBLE
    return "none";
#else
    return qkv__gemm_bf16_name(qkv__gemm_bf16_path());
#endif
}
