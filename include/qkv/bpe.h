/* qkv/bpe.h — a byte-level BPE tokenizer: trained merges over the 256 bytes.
 *
 * Tokens 0..255 are the bytes themselves, so any input encodes (binary, invalid
 * UTF-8, NUL) and decoding gives back exactly the bytes encoded. Merge i makes
 * token 256 + i out of two earlier tokens (left, right); the vocabulary is
 * 256 + the number of merges. (GPT-2's tokenizer, qkv_bpe_load_gpt2, keeps the
 * ids, pre-split and extra tokens of its files instead: see there.)
 *
 * Before counting pairs the text is cut into chunks, and no merge crosses a
 * chunk's edge (GPT-2's idea, with ASCII classes): a chunk is a run of letters
 * (A-Z, a-z and every byte >= 0x80, so UTF-8 words stay whole), a run of digits,
 * or a run of any other bytes (punctuation, control bytes), each with at most
 * one space before it; or a run of whitespace, less its last byte when that
 * byte is a space a word takes. "Hello, world 42!\n" is "Hello" "," " world" " 42" "!" "\n".
 *
 * Training takes, again and again, the most frequent adjacent pair of tokens
 * inside the chunks (counted at every adjacent position, so "aaa" holds (a, a)
 * twice; ties go to the smallest left id, then the smallest right id) and
 * replaces its occurrences left to right ("aaa" becomes "Z a"); it stops at the
 * asked vocabulary or when no pair is left. Encoding applies, in each chunk, the
 * merge of lowest index present, every occurrence left to right, until none
 * applies: the same tokens as replaying the merges in order.
 *
 *     static const char text[] = "the cat sat on the mat; the cat ate the rat";
 *     size_t len = sizeof text - 1;
 *     qkv_bpe *bpe = qkv_bpe_train(text, len, 300);  // the 256 bytes and up to 44 merges
 *     int32_t ids[sizeof text];                       // never more ids than bytes
 *     char back[sizeof text];
 *     long long n = bpe ? qkv_bpe_encode(bpe, text, len, ids) : -1;
 *     if (n < 0 || qkv_bpe_decode(bpe, ids, (size_t)n, back, len) != (long long)len ||
 *         qkv_bpe_save(bpe, "text.bpe") < 0)
 *         fprintf(stderr, "%s\n", qkv_last_error());
 *     qkv_bpe_free(bpe);
 *
 * A qkv_bpe does not change after it is made: any number of threads may encode
 * and decode with one at once.
 */
#ifndef QKV_BPE_H
#define QKV_BPE_H

#include "qkv/base.h"
#include "qkv/data.h"

QKV_BEGIN_DECLS

/* The largest vocabulary qkv_bpe_train makes and qkv_bpe_load reads. */
#define QKV_BPE_MAX_VOCAB (1 << 20)

/* A trained tokenizer: its merges and every token's bytes. */
typedef struct qkv_bpe qkv_bpe;

/* Merges learnt from the len bytes of text (len may be 0) up to vocab_size
 * tokens (256..QKV_BPE_MAX_VOCAB); fewer when the chunks run out of pairs.
 * NULL with a message (text NULL, vocab_size out of range, no memory). */
qkv_bpe *qkv_bpe_train(const char *text, size_t len, int vocab_size);

/* The tokenizer of n given merges, merges[2i] and merges[2i+1] the left and right
 * token of token 256 + i (each below 256 + i). NULL with a message naming the
 * first bad merge. */
qkv_bpe *qkv_bpe_from_merges(const int32_t *merges, int n);

/* Free a tokenizer (NULL is fine). */
void qkv_bpe_free(qkv_bpe *bpe);

/* The number of tokens, 256 + merges (+ GPT-2's extra tokens); -1 for NULL. */
int qkv_bpe_size(const qkv_bpe *bpe);

/* Merge i's two tokens into *left and *right (token 256 + i; in GPT-2's
 * numbering the token of line i of merges.txt). 0, or -1 when i is not a merge
 * of bpe. */
int qkv_bpe_merge(const qkv_bpe *bpe, int i, int32_t *left, int32_t *right);

/* The bytes of token id (not NUL-terminated; bpe keeps them) and their number in
 * *len. NULL when id is outside [0, size). */
const char *qkv_bpe_token(const qkv_bpe *bpe, int32_t id, size_t *len);

/* The token ids of the len bytes of text into ids, which must hold len values
 * (a token is at least one byte). The number of ids, or -1 (NULL arguments). */
long long qkv_bpe_encode(const qkv_bpe *bpe, const char *text, size_t len, int32_t *ids);

/* The bytes of n token ids into text, which holds cap bytes (no terminator is
 * added); text NULL with cap 0 only counts. The number of bytes, or -1 naming
 * the first id outside [0, size) and its position, or saying how many bytes
 * cap lacks (text is then left partly written). */
long long qkv_bpe_decode(const qkv_bpe *bpe, const int32_t *ids, size_t n, char *text,
                         size_t cap);

/* A corpus of the len bytes of text (len >= 1) encoded with bpe, split 90/10
 * by tokens as qkv_corpus_from_text splits; its tok is empty (size 0): the ids
 * are bpe's, to be decoded with it. Free it with qkv_corpus_free. NULL with a
 * message (NULL arguments, empty text, no memory). */
qkv_corpus *qkv_bpe_corpus(const qkv_bpe *bpe, const char *text, size_t len);

/* Write bpe to path through qkv_output (qkv/file.h): a versioned file with a
 * checksum, the merges only. 0, or -1 naming the path. */
int qkv_bpe_save(const qkv_bpe *bpe, const char *path);

/* GPT-2's tokenizer from its published files: vocab_path a vocab.json (called
 * encoder.json too: {"token": id, ...}) and merges_path a merges.txt (vocab.bpe:
 * an optional "#version" line, then one merge a line, "left right"), both
 * spelling bytes as characters through GPT-2's byte-to-unicode table. The ids
 * are vocab.json's (50,257 for GPT-2: 256 bytes, 50,000 merges, <|endoftext|>,
 * which decodes to its text and which encoding never makes), and encoding
 * pre-splits with GPT-2's pattern (Unicode letters and numbers, contractions);
 * bytes that are not UTF-8 still encode, one token a byte. qkv_bpe_save and a
 * checkpoint keep all of it. NULL with a message naming the file and what is
 * wrong (its line or byte offset). */
qkv_bpe *qkv_bpe_load_gpt2(const char *vocab_path, const char *merges_path);

/* Read a file qkv_bpe_save wrote. NULL with a message naming the path and what is
 * wrong (not a qkv BPE file, a later version, cut short, a bad checksum, a bad merge). */
qkv_bpe *qkv_bpe_load(const char *path);

QKV_END_DECLS

#endif
