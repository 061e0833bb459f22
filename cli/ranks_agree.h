/* How the ranks of `mpirun -np N qkv train` make sure they train one model
 * before the first step, and how any rank that cannot ends them all.
 *
 * The ranks meet twice, each time every rank giving a report to every
 * other (one gather), so each takes the same decision from the same reports:
 *   1. ranks_meet, once a rank has read its command line: the first
 *      collective of the run. A rank that ends before it (a usage error,
 *      --help, another command) comes to it from main's ranks_leave instead,
 *      with its exit status and message, so no rank ever waits for it.
 *   2. ranks_agree, once a rank has built its run: whether it could (its
 *      message if not), and every term that must be the same on all ranks
 *      (tokenizer, vocabulary, text, model, schedule, seed, starting step,
 *      weights).
 * After a failed meeting every rank returns from the command: nothing was
 * trained, so nothing is saved; the caller removes its lock. The first rank
 * that took part speaks for the run (rank 0 unless it left), naming the rank
 * that failed or differs and in what. With one rank all of it is a
 * pass-through. */
#ifndef QKV_CLI_RANKS_AGREE_H
#define QKV_CLI_RANKS_AGREE_H

#include "qkv/gpt.h"
#include "run_options.h"

/* The first meeting, by a rank ready to train: 0 when every rank is there
 * too; -1 on every rank when one has left (after prog, e.g. "qkv train",
 * says which and why). Call before any other collective. */
int ranks_meet(const char *prog);

/* At the end of the program: a rank that did not come to ranks_meet (it ran
 * `qkv COMMAND` and ended with status, its message in qkv_last_error()) tells
 * the others, who may be waiting there. Nothing after ranks_meet. */
void ranks_leave(const char *command, int status);

/* The second meeting, by every rank that met, with the run it built (NULL:
 * it could not, qkv_last_error() says why), the run's model and text, and its
 * options: 0 when every rank built the same run; -1 on every rank, after
 * saying why, when one could not or differs in anything that must match. */
int ranks_agree(const char *prog, const qkv_training *run, const qkv_gpt *m,
                const qkv_corpus *text, const run_options *o);

#endif
