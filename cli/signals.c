/* SIGINT, SIGTERM and SIGHUP: stop at the next step boundary; SIGPIPE
 * ignored, so a closed output is an error the loop sees (see signals.h). */
#include "signals.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

volatile sig_atomic_t cli_interrupted;
static volatile sig_atomic_t in_save; /* only changes what a second signal says */

/* Write a message from a signal handler: write(2) is async-signal-safe, stdio is not. */
static void say(const char *msg)
{
    ssize_t rc = write(STDERR_FILENO, msg, strlen(msg));
    (void)rc; /* nothing to do about a failed message here */
}

static void on_signal(int sig)
{
    if (!cli_interrupted) {
        cli_interrupted = sig;
        say("\nqkv: stopping: the run saves and ends after this step\n");
    } else {
        say(in_save ? "\nqkv: saving the checkpoint; the run ends as soon as it is safe\n"
                    : "\nqkv: already stopping: the run saves and ends after this step (SIGKILL "
                      "ends it at once, losing the steps since the last save)\n");
    }
}

void cli_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART; /* a signal must not make a write of the save fail with EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL); /* a closed terminal or ssh session */
    /* A reader gone (`| head`) must not kill the run before it saves: the
     * write fails with EPIPE instead, and the loop stops on it. */
    signal(SIGPIPE, SIG_IGN);
}

void cli_output_failed(int err)
{
    static bool said;
    if (said || (err != EPIPE && err != EIO))
        return;
    said = true;
    if (!cli_interrupted)
        cli_interrupted = SIGPIPE;
    fprintf(stderr, "\nqkv: standard output is gone (%s): the run saves and ends after this "
            "step\n", strerror(err));
}

void cli_saving(bool on) { in_save = on; }

int cli_signal_status(void) { return 128 + (cli_interrupted ? cli_interrupted : SIGINT); }
