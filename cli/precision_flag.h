/* --precision for the commands that generate (qkv sample, qkv s2s eval and
 * run): the products of generation in fp32 (the default) or bf16, whose
 * weights are then rounded to bf16 once per generation and read at half the
 * bytes per token (qkv/precision.h). Training's flag is run_options.c's. */
#ifndef QKV_CLI_PRECISION_FLAG_H
#define QKV_CLI_PRECISION_FLAG_H

#include "args.h"

/* The flag's help line. */
#define PRECISION_FLAG_HELP                                                                      \
    "fp32, or bf16: generation's products in bf16 with fp32 sums, each weight rounded to bf16 " \
    "once per generation (default: fp32, whatever precision the checkpoint was trained in)"

/* Check --precision's name (NULL: not given): -1 when it names a precision
 * or is NULL, else args_error's exit code after saying so. Training's flag
 * is checked here too, so both say the same. */
int precision_flag_check(const arg_cmd *cmd, const char *name);

/* Make name (NULL: fp32) the products' precision: 0, or the command's exit
 * code after saying why (args_error's for an unknown name, 1 where this build
 * cannot run it: bf16 in the double build). */
int precision_flag_use(const arg_cmd *cmd, const char *name);

#endif
