/* Stopping a long run cleanly on Ctrl-C (SIGINT) or SIGTERM. */
#ifndef QKV_CLI_SIGNALS_H
#define QKV_CLI_SIGNALS_H

#include <signal.h>
#include <stdbool.h>

/* 0, or the first SIGINT/SIGTERM that arrived once cli_catch_signals ran:
 * long loops check it after each step, save, and end with cli_signal_status. */
extern volatile sig_atomic_t cli_interrupted;

/* Route SIGINT and SIGTERM to cli_interrupted. The first says at once that
 * the run is stopping; later ones only say so again (or, during a save, that
 * it is saving): once a run has begun to stop, nothing but SIGKILL keeps it
 * from saving, so a second Ctrl-C can never cut a save short. */
void cli_catch_signals(void);

/* Mark a save as running (true) or done (false), for what a second signal says. */
void cli_saving(bool on);

/* The exit status of a run that a signal stopped and that saved cleanly:
 * 128 + the signal (130 for SIGINT, 143 for SIGTERM), the shells' convention,
 * so a script sees that the run did not finish though its checkpoint is good.
 * A rank stopped by another rank's signal ends with 130 too. */
int cli_signal_status(void);

#endif
