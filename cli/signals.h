/* Stopping a long run cleanly on Ctrl-C (SIGINT), SIGTERM, a hang-up
 * (SIGHUP) or a closed output (a broken pipe). */
#ifndef QKV_CLI_SIGNALS_H
#define QKV_CLI_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

/* 0, or the first SIGINT/SIGTERM/SIGHUP that arrived once cli_catch_signals
 * ran (SIGPIPE when the output went first, see cli_output_failed): long loops
 * check it after each step, and evaluations between batches; they save and
 * end with cli_signal_status. */
extern volatile sig_atomic_t cli_interrupted;

/* Route SIGINT, SIGTERM and SIGHUP to cli_interrupted, and ignore SIGPIPE
 * (a write to a closed pipe then fails with EPIPE, for the loop to see).
 * The first signal says at once that the run is stopping; later ones only
 * say so again (or, during a save, that it is saving): once a run has begun
 * to stop, nothing but SIGKILL keeps it from saving, so a second Ctrl-C can
 * never cut a save short. */
void cli_catch_signals(void);

/* Standard output failed with errno err. When it is gone (EPIPE: its
 * reader left; EIO: its terminal hung up), stop as a signal would
 * (SIGPIPE's, unless one came first) and say so on stderr, once. Other
 * errors (a full disk) do not stop the run: the program's status says them
 * at the end (cli_check_stdout). */
void cli_output_failed(int err);

/* Mark a save as running (true) or done (false), for what a second signal says. */
void cli_saving(bool on);

/* The exit status of a run that a signal or a lost output stopped and that
 * saved cleanly: 128 + the signal (130 for SIGINT, 143 for SIGTERM, 129 for
 * SIGHUP, 141 for a closed output), the shells' convention, so a script sees
 * that the run did not finish though its checkpoint is good. A rank stopped
 * by another rank's signal ends with 130 too. */
int cli_signal_status(void);

#endif
