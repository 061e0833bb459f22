/* The qkv program: one binary, one subcommand per job. */
#include "args.h"
#include "commands.h"
#include "cpu_path.h"
#include "dist.h"
#include "output.h"
#include "ranks_agree.h"

#include <stdio.h>
#include <stdlib.h>

static const cli_command commands[] = {
    {"train", cmd_train, "train the character GPT on a text file"},
    {"sample", cmd_sample, "generate text from a trained checkpoint"},
    {"eval", cmd_eval, "train and validation loss of a checkpoint"},
    {"s2s", cmd_s2s, "the encoder-decoder: train, eval, run on dates (human-written to ISO)"},
    {"attn", cmd_attn, "attention weights of a checkpoint as an SVG heatmap"},
    {"bench", cmd_bench, "speed on this machine: GEMM, training steps, sampling, memory"},
    {"lab", cmd_lab, "attention step by step: the worked example, the sqrt(d) scaling, the causal mask"},
};

/* Hand the command line to the subcommand argv[1] names. */
int main(int argc, char **argv)
{
    static const cli_menu menu = {.prog = "qkv", .noun = "command", .cmds = commands,
                                  .n_cmds = (int)(sizeof commands / sizeof commands[0])};
    if (QKV_CHECK_VERSION() < 0 || dist_init(&argc, &argv) < 0) {
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
        return 1;
    }
    /* The library alone would run its widest path instead: the program says so and stops. */
    if (cli_cpu_use("QKV_CPU=", getenv("QKV_CPU")) < 0) {
        fprintf(stderr, "qkv: %s\n", qkv_last_error());
        dist_finish();
        return 1;
    }
    int status = cli_dispatch(&menu, argc, argv);
    /* Whatever the command printed must have been written (a full disk, /dev/full). */
    if (status == 0 && cli_check_stdout(argc > 1 ? argv[1] : "") < 0)
        status = 1;
    ranks_leave(argc > 1 ? argv[1] : "", status); /* if it never met the others */
    dist_finish();
    return status;
}
