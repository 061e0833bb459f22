/* Misuse cases for qkv/precision.h: the precision of the model's products. */
#include "misuse.h"

MISUSE(qkv_precision_name, negative) { FAILS_NULL(qkv_precision_name(-1), "precision -1"); }
MISUSE(qkv_precision_name, past_the_last)
{
    FAILS_NULL(qkv_precision_name(QKV_PRECISIONS), "precision 2");
}
MISUSE(qkv_precision_find, null_name) { FAILS_INT(qkv_precision_find(NULL), "name is NULL"); }
MISUSE(qkv_precision_find, unknown_name)
{
    FAILS_INT(qkv_precision_find("fp16"), "\"fp16\"", "fp32 or bf16");
}
MISUSE(qkv_precision_active, takes_no_arguments)
{
    int p = qkv_precision_active();
    MISUSE_ASSERT(p >= 0 && p < QKV_PRECISIONS);
}
MISUSE(qkv_precision_use, out_of_range)
{
    int before = qkv_precision_active();
    FAILS_INT(qkv_precision_use(QKV_PRECISIONS), "precision 2");
    FAILS_INT(qkv_precision_use(-1), "precision -1");
    MISUSE_ASSERT(qkv_precision_active() == before); /* a refused one changes nothing */
}
MISUSE(qkv_precision_use, failed_find_is_refused)
{
    FAILS_INT(qkv_precision_use(qkv_precision_find("fp8")), "precision -1");
    MISUSE_ASSERT(qkv_precision_active() == QKV_PRECISION_FP32);
}
MISUSE(qkv_precision_kernel, takes_no_arguments)
{
    const char *k = qkv_precision_kernel();
    MISUSE_ASSERT(k && (strcmp(k, "avx512_bf16") == 0 || strcmp(k, "portable") == 0 ||
                        strcmp(k, "none") == 0));
}
