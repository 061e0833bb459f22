/* qkv/data.h — a character tokenizer, a text corpus, random batches.
 *
 * The vocabulary is the distinct bytes of the corpus, sorted, and a token
 * is one byte. Plain ASCII text (tiny Shakespeare) is one token per
 * character; a non-ASCII UTF-8 character is two to four tokens, one per
 * byte, and the model learns to emit valid sequences. Text need not be
 * UTF-8 at all: any bytes (Latin-1, binary, NUL) are taken as they are.
 *
 *     qkv_corpus *c = qkv_corpus_load("shakespeare.txt", NULL);   // vocab from the text
 *     // or, from text in memory: qkv_corpus_from_text(text, strlen(text), NULL)
 *     qkv_batcher train;
 *     if (!c || qkv_batcher_init(&train, c, QKV_SPLIT_TRAIN, 12, 64, 1337) < 0) {
 *         fprintf(stderr, "qkv: %s\n", qkv_last_error());
 *         return 1;
 *     }
 *     int32_t x[12 * 64], y[12 * 64];
 *     qkv_batcher_next(&train, x, y);          // y[b][t] = x[b][t+1]: next-token targets
 *     qkv_corpus_free(c);
 *
 * Labelled or paired examples held in memory (a classifier's texts and
 * labels, an encoder-decoder's inputs and outputs) come in shuffled batches
 * from a qkv_examples, every example once per epoch:
 *
 *     int32_t texts[4][3] = {{5, 6, 0}, {7, 0, 0}, {5, 5, 5}, {6, 7, 0}}, labels[4] = {1, 0, 1, 0};
 *     uint8_t valid[4][3] = {{1, 1, 0}, {1, 0, 0}, {1, 1, 1}, {1, 1, 0}};  // 0: padding
 *     qkv_examples ex;
 *     if (qkv_examples_init(&ex, &texts[0][0], &valid[0][0], 3, labels, 1, 4, 2, 7) < 0)
 *         return 1;
 *     int32_t bx[2 * 3], by[2];
 *     uint8_t bvalid[2 * 3];
 *     qkv_examples_next(&ex, bx, bvalid, by);  // 2 of the 4 examples, with their labels
 *     qkv_examples_free(&ex);
 */
#ifndef QKV_DATA_H
#define QKV_DATA_H

#include "qkv/base.h"
#include "qkv/rng.h"

QKV_BEGIN_DECLS

/* ---- tokenizer: one token per byte present in the corpus ---- */

typedef struct qkv_tokenizer {
    int size;          /* number of tokens, 0..256 */
    uint8_t byte[256]; /* token id -> its byte; strictly ascending in id */
    int16_t id[256];   /* byte -> its token id, or -1 when not in the vocabulary */
} qkv_tokenizer;

/* The vocabulary of text: the distinct bytes among its len bytes, sorted. */
void qkv_tokenizer_build(qkv_tokenizer *tok, const char *text, size_t len);

/* The vocabulary made of n bytes (as saved in a checkpoint); they must be
 * strictly ascending. 0, or -1 when they are not. */
int qkv_tokenizer_from_bytes(qkv_tokenizer *tok, const uint8_t *bytes, int n);

/* Token ids of the len bytes of text into ids (len values). 0, or -1 naming
 * the first byte outside the vocabulary (printable form) and its position. */
int qkv_encode(const qkv_tokenizer *tok, const char *text, size_t len, int32_t *ids);

/* The bytes of n token ids into text (n bytes, no terminator added). 0, or
 * -1 naming the first id outside [0, size) and its position. */
int qkv_decode(const qkv_tokenizer *tok, const int32_t *ids, size_t n, char *text);

/* ---- corpus: a text, encoded and split ---- */

typedef enum qkv_split {
    QKV_SPLIT_TRAIN, /* the first 90% of the tokens */
    QKV_SPLIT_VAL,   /* the last 10% */
} qkv_split;

typedef struct qkv_corpus {
    qkv_tokenizer tok; /* the vocabulary the ids use */
    int32_t *ids;      /* the whole text, one id per byte */
    size_t len;        /* number of ids */
    size_t n_train;    /* ids[0, n_train) is the train split, the rest val (nanoGPT's 90/10) */
} qkv_corpus;

/* A corpus of the len bytes at text (len >= 1), which is encoded into the
 * corpus's own ids: the caller keeps the buffer and may free it at once.
 * vocab as for qkv_corpus_load. NULL with a message naming the problem (text
 * NULL, len 0, a byte outside vocab and where). Any text of at least one
 * byte makes a corpus, even one distinct character (a vocabulary of 1); its
 * splits need block_size + 1 tokens each for qkv_batcher_init. */
qkv_corpus *qkv_corpus_from_text(const char *text, size_t len, const qkv_tokenizer *vocab);

/* Read and encode a text file (qkv_corpus_from_text of its bytes). With
 * vocab NULL the vocabulary is built from the text; otherwise the text is
 * encoded with vocab (a resumed run's), and a byte outside it is an error. NULL on failure, with a message naming the
 * path and the reason (missing, unreadable, empty, unknown character). */
qkv_corpus *qkv_corpus_load(const char *path, const qkv_tokenizer *vocab);

/* Free a corpus (NULL is fine). */
void qkv_corpus_free(qkv_corpus *c);

/* ---- batches: random contiguous windows of one split ---- */

typedef struct qkv_batcher {
    const int32_t *ids; /* the split's tokens (the corpus owns them) */
    size_t len;         /* their number, at least block_size + 1 */
    int batch_size;     /* B: windows per batch */
    int block_size;     /* T: tokens per window */
    qkv_rng rng;        /* the batcher's only changing state: save it to resume */
} qkv_batcher;

/* A batcher of (B, T) training batches from one split of c, seeded with
 * seed (qkv_sample_token, not this, samples the next token). -1 when split
 * is not a qkv_split, the split is shorter than block_size + 1 tokens, a
 * size is < 1 or B·T does not fit an int32. */
int qkv_batcher_init(qkv_batcher *s, const qkv_corpus *c, qkv_split split, int batch_size,
                     int block_size, uint64_t seed);

/* The next batch: B windows at uniform random starts (drawn in order), each
 * x[b] = ids[i, i+T) and y[b] = ids[i+1, i+T+1). x and y hold B·T values.
 * A NULL argument or a batcher qkv_batcher_init did not set up leaves x and
 * y untouched and a message. */
void qkv_batcher_next(qkv_batcher *s, int32_t *x, int32_t *y);

/* ---- examples: labelled or paired, in memory, shuffled once per epoch ---- */

typedef struct qkv_examples {
    const int32_t *inputs;  /* n × in_len input ids (the caller keeps them) */
    const uint8_t *valid;   /* NULL (all valid), or n × in_len: 1 an input, 0 padding */
    const int32_t *targets; /* n × out_len: a label (out_len 1) or a target sequence */
    int n;                  /* examples */
    int in_len;             /* ids per input */
    int out_len;            /* ids per target */
    int batch_size;         /* B: examples per batch */
    uint64_t seed;          /* epoch e's order is a shuffle seeded from (seed, e) */
    int64_t epoch;          /* the epoch being given out, from 0 */
    int next;               /* examples of this epoch given out so far; epoch and next are
                               all a resumed run must restore */
    int *order;             /* epoch's order, made when first needed */
    int64_t order_epoch;    /* which epoch order holds (-1: none) */
} qkv_examples;

/* Batches of batch_size examples out of n, each an input of in_len ids (and
 * its validity when valid is not NULL) and a target of out_len ids: each
 * epoch gives every example once, in an order shuffled from (seed, epoch),
 * and a batch may run on into the next epoch. The arrays stay the caller's.
 * 0, or -1 (NULL arrays, sizes < 1, too large). */
int qkv_examples_init(qkv_examples *e, const int32_t *inputs, const uint8_t *valid, int in_len,
                      const int32_t *targets, int out_len, int n, int batch_size, uint64_t seed);

/* The next batch: x (B·in_len ids), x_valid (B·in_len; NULL to skip) and y
 * (B·out_len), example by example as they come in the epoch's order.
 * 0, or -1 (NULL, not set up, no memory) leaving them untouched. */
int qkv_examples_next(qkv_examples *e, int32_t *x, uint8_t *x_valid, int32_t *y);

/* Free the order qkv_examples_init's batches made (NULL is fine); e can be set up again. */
void qkv_examples_free(qkv_examples *e);

QKV_END_DECLS
#endif
