/* The subcommands of the qkv program; each returns the process exit status. */
#ifndef QKV_CLI_COMMANDS_H
#define QKV_CLI_COMMANDS_H

/* qkv lab example|scaling|mask: attention worked through step by step. */
int cmd_lab(int argc, char **argv);

/* qkv train: train the character GPT. */
int cmd_train(int argc, char **argv);

/* qkv sample: generate text from a checkpoint. */
int cmd_sample(int argc, char **argv);

/* qkv eval: train/val loss of a checkpoint. */
int cmd_eval(int argc, char **argv);

/* qkv s2s train|eval|run: the encoder-decoder on a generated task. */
int cmd_s2s(int argc, char **argv);

/* qkv attn: attention weights of a checkpoint as an SVG heatmap. */
int cmd_attn(int argc, char **argv);

/* qkv bench: speed figures for this machine. */
int cmd_bench(int argc, char **argv);

#endif
