/* The program's outputs: every file a command writes is claimed here, under
 * one rule, before any work; and stdout is checked at the end.
 *
 * The rule, for each file (a checkpoint, its loss log and plot, a picture, a
 * page): it must be writable (qkv_output_check: not a device, a FIFO, a
 * directory or an input the command reads); it must not be the same file as
 * another output of the command, under any name, nor another output's lock
 * file; it must not be a lock file another process holds; an existing file is
 * never replaced unless the user says so (--force) or the run continues it
 * (a resume writing over the checkpoint it resumed, and its log); and its lock
 * (PATH.lock, see qkv/file.h) is taken until cli_release_outputs, so a second
 * process writing the same file fails at once. */
#ifndef QKV_CLI_OUTPUT_H
#define QKV_CLI_OUTPUT_H

#include <stdbool.h>

/* Claim path, named by the option flag ("--html"), as an output of `qkv CMD`
 * under the rule above; force (--force) lets it replace an existing file.
 * 0, or -1 after printing "qkv CMD: FLAG: <why>" (what was claimed before
 * stays claimed: cli_release_outputs gives it back). */
int cli_claim(const char *cmd, const char *flag, const char *path, bool force);

/* The files of a training run's log beside its checkpoint CKPT: CKPT.csv
 * (the losses) and CKPT.svg (their plot), claimed and replaced with it. */
extern const char *const cli_log_suffixes[2];

/* Claim the outputs of a training run of `qkv CMD`: the checkpoint out and
 * its loss log OUT.csv and plot OUT.svg, as one set. They may replace existing
 * files with replace (--force), or when out is the checkpoint resumed (resumed,
 * or NULL): a resume continues its own log. 0, or -1 after printing why, with
 * nothing claimed. */
int cli_claim_outputs(const char *cmd, const char *out, bool replace, const char *resumed);

/* Whether path was claimed while a file of another run stood there, which the
 * command will replace (a --force run over an old checkpoint). */
bool cli_replaces(const char *path);

/* Give back every claimed output's lock (removing PATH.lock) and forget them. */
void cli_release_outputs(void);

/* Flush stdout and check that everything printed to it was written: 0, or -1
 * after printing "qkv CMD: cannot write to standard output: <why>". */
int cli_check_stdout(const char *cmd);

#endif
