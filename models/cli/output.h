/* The program's outputs: claimed before any work, and stdout checked at the end. */
#ifndef QKV_CLI_OUTPUT_H
#define QKV_CLI_OUTPUT_H

#include <stdbool.h>

/* Before any work, for the run of `qkv CMD` that saves to out and its log
 * OUT.csv and OUT.svg: each must be writable (qkv_output_check); an existing
 * out is refused unless it is the checkpoint being resumed (resumed, or NULL)
 * or replace (--force) is given, so a new run never overwrites a trained model;
 * and out's lock is taken for the whole run, so a second run writing the same
 * checkpoint fails here, at once. 0, or -1 after printing why. */
int cli_claim_outputs(const char *cmd, const char *out, bool replace, const char *resumed);

/* Flush stdout and check that everything printed to it was written: 0, or -1
 * after printing "qkv CMD: cannot write to standard output: <why>". */
int cli_check_stdout(const char *cmd);

#endif
