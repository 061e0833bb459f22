/* qkv/checkpoint.h — save a training run to one file, and resume it exactly.
 *
 * Saving goes through qkv/file.h's safe-output path: it refuses a PATH that
 * is not a regular file or is a protected input, takes PATH's lock (another
 * process saving there fails at once), writes a fresh temporary beside PATH,
 * fsyncs it and renames it onto PATH (and fsyncs the directory): a crash, a
 * kill or a full disk never destroys the last good checkpoint. Save refuses
 * what the loader would refuse (non-finite values, negative steps, all-zero
 * RNG states, a vocabulary that is not 0..256 strictly ascending bytes: one
 * check for both). Loading is in two phases, so a program can build the
 * model the file describes before loading the weights into it:
 *
 *     // save: a model's parameters, its optimizer, its sizes and random streams
 *     qkv_rng init, batches;
 *     qkv_rng_seed(&init, 1);
 *     qkv_rng_seed(&batches, 2);
 *     qkv_params *params = qkv_params_new();
 *     qkv_params_add(params, "w", QKV_SHAPE(4, 4), QKV_INIT_NORMAL, 0.02);
 *     qkv_params_alloc(params, &init);
 *     qkv_optim_config oc = qkv_adamw_defaults();
 *     qkv_optim *opt = qkv_optim_new(params, &oc);
 *     uint8_t sizes[2] = {4, 4};                    // the model's config, packed by the model
 *     qkv_rng *streams[] = {&batches};
 *     qkv_ckpt_progress prog = {.step = 100, .n_rngs = 1, .rngs = streams};
 *     qkv_ckpt_model model = {.kind = "mine", .config = sizes, .config_len = sizeof sizes};
 *     if (qkv_checkpoint_save("run.ckpt", &model, params, opt, &prog) < 0)
 *         fprintf(stderr, "qkv: %s\n", qkv_last_error());
 *
 *     // load: header first (kind, config, vocabulary), then the state
 *     qkv_checkpoint *ck = qkv_checkpoint_open("run.ckpt", "mine");
 *     if (!ck) fprintf(stderr, "qkv: %s\n", qkv_last_error());
 *     // ... build the parameters of the model ck->config describes ...
 *     if (ck && qkv_checkpoint_load(ck, params, opt, &prog) < 0)
 *         fprintf(stderr, "qkv: %s\n", qkv_last_error());
 *     qkv_checkpoint_close(ck);
 *     qkv_optim_free(opt);
 *     qkv_params_free(&params);
 *
 * File format, version 1 (fp32) or 2 (another precision). Integers are unsigned little-endian, f32 is an
 * IEEE-754 float32 little-endian whatever qkv_real is (a double build
 * rounds its values to float32 when saving).
 *
 *     bytes       field
 *     8           magic "QKVCKPT\0"
 *     4           u32 format version: 1 when saved in fp32, 2 otherwise
 *     8           u64 size of the whole file in bytes, checksum included
 *     4 + K       u32 K, then the model kind: K (1..31) printable ASCII bytes, "gpt"
 *     8 + C       u64 C, then the model's config blob: C bytes, opaque to qkv
 *     4 + V       u32 V (0..256, 0 = none), then the vocabulary: V strictly ascending bytes
 *     4           u32 P, the number of parameters; then for each, in the params' order:
 *       4 + L       u32 L, then the name: L (1..63) bytes
 *       4 + 4·D     u32 D (1..4), then D u32 extents
 *       4·N         N f32 values, N = product of the extents
 *     4           u32 optimizer kind: 0 none, 1 AdamW, 2 SGD, 3 Muon (qkv_optim_kind)
 *     8           u64 optimizer step
 *     4·M·ΣN      M moment buffers (AdamW: m then v; SGD: velocity; Muon: m, its
 *                 matrices' momentum and the rest's AdamW mean, then v; none: 0),
 *                 each as f32 values of every parameter in the order above
 *     8           u64 training step
 *     4 + 32·R    u32 R, then R RNG states, four u64 each
 *     4           (version 2 only) u32 the precision of the products when
 *                 saved (qkv_precision_active, qkv/precision.h): 1 bf16
 *     4           u32 CRC-32 (IEEE 802.3, as zlib) of every byte before it
 *
 * Loading checks, in order: the magic, the version, the size against the
 * file's (a short file names the field it was cut in), the checksum, then
 * every length against the bytes left before anything is allocated, and
 * then every value: printable kind and names, steps >= 0, RNG states not all
 * zero, finite weights and moments (AdamW's second moments >= 0).
 * Hyperparameters (learning rate, betas, weight decay, batch size) are not
 * stored: they are the program's, and may change on resume.
 */
#ifndef QKV_CHECKPOINT_H
#define QKV_CHECKPOINT_H

#include "qkv/data.h"
#include "qkv/optim.h"
#include "qkv/params.h"

QKV_BEGIN_DECLS

/* The newest format version this build reads and writes (it writes 1, which
 * every qkv reads, for a run saved in fp32). */
#define QKV_CKPT_VERSION 2

/* Longest model kind, in bytes. */
#define QKV_CKPT_KIND_MAX 31

/* What a program needs to rebuild the model before loading its weights. */
typedef struct qkv_ckpt_model {
    const char *kind;           /* model kind, 1..31 printable ASCII: "gpt", "seq2seq" */
    const void *config;         /* the model's config blob, opaque to qkv (or NULL if empty) */
    size_t config_len;          /* its length in bytes */
    const qkv_tokenizer *vocab; /* the vocabulary, or NULL for none */
} qkv_ckpt_model;

/* Where training stands, besides the weights and the optimizer: saved from,
 * and loaded into, the caller's own variables. */
typedef struct qkv_ckpt_progress {
    int64_t step;         /* training steps completed */
    int n_rngs;           /* number of random streams in rngs */
    qkv_rng *const *rngs; /* every stream the run draws from (dropout, each data
                             sampler's rng), always in the same order */
} qkv_ckpt_progress;

/* Save a checkpoint to path atomically (see above). opt and progress may be
 * NULL (no optimizer state; step 0 and no RNGs). 0, or -1 with a message
 * naming the path and the failing call; the old file at path is untouched. */
int qkv_checkpoint_save(const char *path, const qkv_ckpt_model *model, const qkv_params *p,
                        const qkv_optim *opt, const qkv_ckpt_progress *progress);

/* An opened checkpoint: its header, validated, plus the rest of the file. */
typedef struct qkv_checkpoint {
    char kind[QKV_CKPT_KIND_MAX + 1]; /* the model kind */
    const void *config;               /* the config blob (inside the checkpoint's memory) */
    size_t config_len;                /* its length in bytes */
    qkv_tokenizer vocab;              /* the vocabulary (size 0 when saved without one) */
    int n_params;                     /* number of parameters stored */
    size_t n_values;                  /* number of values over all of them */
    int optim_kind;                   /* 0 for none, or the qkv_optim_kind of the stored moments */
    int64_t optim_step;               /* the optimizer's step */
    int64_t step;                     /* training steps completed */
    int n_rngs;                       /* number of RNG states stored */
    struct qkv_checkpoint_body *body; /* private: the file's bytes and where each field is */
} qkv_checkpoint;

/* Phase one: read the checkpoint at path, check its format and checksum, and
 * parse its header. With kind not NULL, a different model kind is an error
 * (naming both). NULL on failure, with a message saying exactly what is
 * wrong. */
qkv_checkpoint *qkv_checkpoint_open(const char *path, const char *kind);

/* Like qkv_checkpoint_open, from len bytes in memory (copied); name stands
 * for the path in messages. */
qkv_checkpoint *qkv_checkpoint_open_bytes(const void *bytes, size_t len, const char *name,
                                          const char *kind);

/* Phase two: copy the stored parameters into p (matched by name; the sets of
 * names and every shape must agree), the moments and step into opt (unless
 * NULL; its kind must match the stored one), the training step and RNG
 * states into progress (unless NULL; the number of RNGs must match). Checks
 * everything before writing anything: on -1 nothing was changed. */
int qkv_checkpoint_load(const qkv_checkpoint *ck, qkv_params *p, qkv_optim *opt,
                        qkv_ckpt_progress *progress);

/* The precision of the model's products when ck was saved (qkv/precision.h:
 * QKV_PRECISION_FP32 for a version-1 file), or -1 with a message when ck is
 * NULL. Loading does not change the active precision: the program chooses
 * (a bf16 run may go on in fp32 and the other way round). */
int qkv_checkpoint_precision(const qkv_checkpoint *ck);

/* Free an opened checkpoint (NULL is fine). */
void qkv_checkpoint_close(qkv_checkpoint *ck);

/* The CRC-32 (IEEE 802.3, as zlib's crc32) of n bytes, continuing from crc
 * (start with 0): qkv_crc32(0, "123456789", 9) == 0xCBF43926. */
uint32_t qkv_crc32(uint32_t crc, const void *data, size_t n);

QKV_END_DECLS
#endif
