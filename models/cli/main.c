/* The qkv program: one binary, one subcommand per job. */
#include <stdio.h>
#include <string.h>

#include "commands.h"

typedef struct command {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

static const command commands[] = {
    {"train", cmd_train, "train the character GPT on a text file"},
    {"sample", cmd_sample, "generate text from a trained checkpoint"},
    {"eval", cmd_eval, "train and validation loss of a checkpoint"},
    {"s2s", cmd_s2s, "the encoder-decoder: train, eval, run on dates (human-written to ISO)"},
    {"attn", cmd_attn, "attention weights of a checkpoint as an SVG heatmap"},
    {"bench", cmd_bench, "speed on this machine: GEMM, training steps, sampling, memory"},
    {"lab", cmd_lab, "attention step by step: the worked example, the sqrt(d) scaling, the causal mask"},
};

static void usage(FILE *f)
{
    fprintf(f, "usage: qkv COMMAND [options]   ('qkv COMMAND --help' for its options)\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].summary);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "qkv: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return 2;
}
