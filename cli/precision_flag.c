/* --precision for the generating commands (precision_flag.h). */
#include "precision_flag.h"

#include <stdio.h>

#include "qkv/qkv.h"

int precision_flag_check(const arg_cmd *cmd, const char *name)
{
    if (name && qkv_precision_find(name) < 0)
        return args_error(cmd, "--precision: '%s' is not a precision (fp32 or bf16)", name);
    return -1;
}

int precision_flag_use(const arg_cmd *cmd, const char *name)
{
    int rc = precision_flag_check(cmd, name);
    if (rc >= 0)
        return rc;
    int p = name ? qkv_precision_find(name) : QKV_PRECISION_FP32;
    if (qkv_precision_use(p) < 0) {
        fprintf(stderr, "qkv %s: --precision %s: %s\n", cmd->name, name, qkv_last_error());
        return 1;
    }
    return 0;
}
