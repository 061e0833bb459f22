/* GPT-2's tokenizer (qkv_bpe_load_gpt2) against its definition, without node:
 * the pre-split compared with a plain matcher of the pattern written here (the
 * text cut into code points first, each alternative tried as a backtracking
 * regex engine tries it, `\s+(?!\S)` by trying every length from the longest);
 * encoding compared with GPT-2's own bpe() loop (the lowest-ranked pair of the
 * word merged everywhere, again and again) on small hand-made vocab.json and
 * merges.txt files whose ids are shuffled; the files' round trip through
 * qkv_bpe_save; and bad files named. */
#include <stdlib.h>

#include "qkv/bpe.h"
#include "qkv/rng.h"
#include "data/bpe_gpt2.h"
#include "gpt2_files.h"
#include "testing.h"

static char tmpdir[64];

static void make_tmpdir(void) { qkv_test_make_tmpdir(tmpdir, sizeof tmpdir, "qkv_gpt2"); }

static void remove_tmpdir(void) { qkv_test_remove_tmpdir(tmpdir); }

/* ---- the pre-split, plainly ---- */

/* The code points the tests use, each with its class by hand: L letter, N
 * number, S white space, P anything else; X stands for an invalid byte. */
static const struct {
    const char *utf8;
    char cls;
} ALPHABET[] = {
    {"a", 'L'}, {"Z", 'L'}, {"s", 'L'}, {"t", 'L'}, {"r", 'L'}, {"e", 'L'}, {"v", 'L'}, {"l", 'L'},
    {"m", 'L'}, {"d", 'L'}, {"S", 'L'}, {"\xc3\xa9", 'L'} /* é */, {"\xce\xbb", 'L'} /* λ */,
    {"\xe4\xb8\xad", 'L'} /* 中 */, {"\xca\xb0", 'L'} /* ʰ, Lm */, {"7", 'N'}, {"0", 'N'},
    {"\xc2\xbd", 'N'} /* ½, No */, {"\xd9\xa3", 'N'} /* ٣, Nd */, {"\xe2\x85\xa7", 'N'} /* Ⅷ, Nl */,
    {" ", 'S'}, {" ", 'S'}, {" ", 'S'}, {"\t", 'S'}, {"\n", 'S'}, {"\r", 'S'},
    {"\xc2\xa0", 'S'} /* no-break space */, {"\xe3\x80\x80", 'S'} /* ideographic space */,
    {"\xc2\x85", 'S'} /* next line */, {"'", 'P'}, {"'", 'P'}, {"!", 'P'}, {",", 'P'},
    {"\xf0\x9f\x98\x80", 'P'} /* 😀, So */, {"\xcc\x81", 'P'} /* combining acute, Mn */,
    {"\x01", 'P'}, {"\xef\xbb\xbf", 'P'} /* BOM, Cf: not \s here */, {"\xff", 'X'},
    {"\x80", 'X'}, {"\xe4\xb8", 'X'} /* 中 cut short */, {"\xc1\x81", 'X'} /* overlong A */,
    {"\xed\xa0\x80", 'X'} /* a surrogate */,
};
#define N_ALPHABET (sizeof ALPHABET / sizeof ALPHABET[0])

/* A code point of the text: its bytes and class. */
typedef struct unit {
    size_t at, len;
    char cls;
} unit;

/* The text of random code points of ALPHABET, their units in u (X's bytes one
 * unit each). A lone continuation byte never follows the cut-short sequence
 * (the two would be a valid letter). The number of units. */
static size_t random_text(qkv_rng *rng, size_t n_points, char *text, size_t *len, unit *u)
{
    size_t n = 0;
    *len = 0;
    for (size_t i = 0; i < n_points; i++) {
        size_t k = qkv_rng_below(rng, N_ALPHABET), m = strlen(ALPHABET[k].utf8);
        while (*len >= 2 && memcmp(text + *len - 2, "\xe4\xb8", 2) == 0 &&
               strcmp(ALPHABET[k].utf8, "\x80") == 0)
            k = qkv_rng_below(rng, N_ALPHABET), m = strlen(ALPHABET[k].utf8);
        for (size_t j = 0; j < m; j++) {
            int one = ALPHABET[k].cls == 'X';
            if (one || j == 0)
                u[n++] = (unit){*len + j, one ? 1 : m, one ? 'P' : ALPHABET[k].cls};
        }
        memcpy(text + *len, ALPHABET[k].utf8, m);
        *len += m;
    }
    return n;
}

/* text[0, len) with every byte outside printable ASCII as \xHH, for messages
 * (a log of raw bytes would be binary to grep). */
static const char *shown(const char *text, size_t len)
{
    static char out[4 * 512 + 1];
    size_t m = 0;
    for (size_t i = 0; i < len && m + 4 < sizeof out; i++) {
        unsigned char c = (unsigned char)text[i];
        m += (size_t)(c >= 0x20 && c < 0x7f ? sprintf(out + m, "%c", c)
                                            : sprintf(out + m, "\\x%02x", c));
    }
    out[m] = '\0';
    return out;
}

static int is(const unit *u, size_t n, size_t i, char cls) { return i < n && u[i].cls == cls; }

static int is_byte(const char *text, const unit *u, size_t n, size_t i, char c)
{
    return i < n && u[i].len == 1 && text[u[i].at] == c;
}

/* The units the pattern's first match at unit i takes. */
static size_t ref_match(const char *text, const unit *u, size_t n, size_t i)
{
    static const char *const contractions[] = {"s", "t", "re", "ve", "m", "ll", "d"};
    if (is_byte(text, u, n, i, '\''))
        for (int c = 0; c < 7; c++) {
            size_t k = strlen(contractions[c]), j = 0;
            while (j < k && is_byte(text, u, n, i + 1 + j, contractions[c][j]))
                j++;
            if (j == k)
                return 1 + k;
        }
    static const char classes[] = "LNP"; /* ` ?\p{L}+`, ` ?\p{N}+`, ` ?[^\s\p{L}\p{N}]+` */
    for (int c = 0; c < 3; c++) {
        size_t j = is_byte(text, u, n, i, ' ') && is(u, n, i + 1, classes[c]) ? i + 1 : i;
        size_t start = j;
        while (is(u, n, j, classes[c]))
            j++;
        if (j > start)
            return j - i;
    }
    size_t run = 0; /* `\s+(?!\S)`: the longest run of spaces not followed by a non-space */
    while (is(u, n, i + run, 'S'))
        run++;
    for (size_t k = run; k >= 1; k--)
        if (i + k == n || u[i + k].cls == 'S')
            return k;
    return run; /* `\s+` */
}

START_TEST(test_split_as_the_pattern)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 36);
    char text[4 * 64];
    unit u[4 * 64];
    for (int trial = 0; trial < 3000; trial++) {
        size_t len, n = random_text(&rng, 1 + qkv_rng_below(&rng, 40), text, &len, u);
        for (size_t i = 0, pos = 0; i < n;) {
            size_t k = ref_match(text, u, n, i);
            size_t want = i + k < n ? u[i + k].at : len;
            size_t got = qkv__bpe_gpt2_chunk_end((const unsigned char *)text, len, pos);
            ck_assert_msg(got == want, "trial %d: the chunk at byte %zu of \"%s\" ends at %zu, "
                          "not %zu", trial, pos, shown(text, len), got, want);
            i += k, pos = want;
        }
    }
}
END_TEST

/* Some cases by hand, each chunk after a '|'. */
START_TEST(test_split_by_hand)
{
    static const char *const cases[] = {
        "Hello|,| world| 42|!|\n", "it|'s", "I|'m| you|'re", "don|'t", "it|'|S", "''|s",
        "x|'s|y", "a| | b", "a|  | b", "a|\t|b", "\n\n|\n|Hello", "end|   ", " \n| x",
        "x| \t| y", " !!!", "caf\xc3\xa9| cr\xc3\xa8me", "\xce\xb1\xce\xb2|12|\xce\xb3",
        "abc|123|def", "3|.|14", " \xf0\x9f\x98\x80\xf0\x9f\x98\x80| x", "a|\xff\xfe|b",
        "\xc2\xa0|x", "x| \xc2\xa0| y", "\xc2\xbd| \xe2\x85\xa7",
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char text[64], want[128], got[128];
        size_t len = 0;
        for (const char *p = cases[c]; *p; p++)
            if (*p != '|')
                text[len++] = *p;
        snprintf(want, sizeof want, "%s", cases[c]);
        size_t g = 0;
        for (size_t pos = 0; pos < len;) {
            size_t end = qkv__bpe_gpt2_chunk_end((const unsigned char *)text, len, pos);
            if (pos)
                got[g++] = '|';
            memcpy(got + g, text + pos, end - pos);
            g += end - pos, pos = end;
        }
        got[g] = '\0';
        ck_assert_msg(strcmp(got, want) == 0, "split \"%s\"", shown(got, g));
    }
}
END_TEST

/* ---- hand-made files and GPT-2's bpe() ---- */

/* A tokenizer's tokens as GPT-2 files: bytes, merges, then "<|endoftext|>",
 * the ids a random permutation. */
typedef struct files {
    int n_merges, size;
    int32_t *merges; /* in token numbers: bytes, then 256 + i */
    char **bytes;    /* each token's bytes */
    size_t *len;
    int32_t *id;     /* each token's id in the files */
} files;

/* Whether bytes b[0, n) are those of one of the first t tokens of f. */
static int spelt_before(const files *f, int t, const char *b, size_t n)
{
    for (int k = 0; k < t; k++)
        if (f->len[k] == n && memcmp(f->bytes[k], b, n) == 0)
            return 1;
    return 0;
}

/* Files of the merges a BPE trained on text learnt (up to 300 tokens), written
 * to tmpdir as vocab.json and merges.txt. A merge that makes bytes an earlier
 * token has ((a, bc) after (ab, c)) is left out, with every merge that uses its
 * token: GPT-2's files name tokens by their text, so each text is one token. */
static files make_files(qkv_rng *rng, const char *text, size_t len)
{
    qkv_bpe *trained = qkv_bpe_train(text, len, 300);
    ck_assert_qkv(trained);
    int size = qkv_bpe_size(trained) + 1, *kept = malloc((size_t)size * sizeof *kept);
    files f = {0};
    f.merges = malloc(2 * (size_t)size * sizeof *f.merges);
    f.bytes = malloc((size_t)size * sizeof *f.bytes);
    f.len = malloc((size_t)size * sizeof *f.len);
    f.id = malloc((size_t)size * sizeof *f.id);
    for (int t = 0; t < size - 1; t++) {
        size_t n;
        const char *b = qkv_bpe_token(trained, t, &n);
        int32_t l = -1, r = -1;
        if (t >= 256)
            qkv_bpe_merge(trained, t - 256, &l, &r);
        kept[t] = -1;
        if (t >= 256 && (kept[l] < 0 || kept[r] < 0 || spelt_before(&f, 256 + f.n_merges, b, n)))
            continue;
        int k = t < 256 ? t : 256 + f.n_merges;
        if (t >= 256)
            f.merges[2 * f.n_merges] = kept[l], f.merges[2 * f.n_merges + 1] = kept[r],
            f.n_merges++;
        f.bytes[k] = malloc(n + 1), f.len[k] = n;
        memcpy(f.bytes[k], b, n);
        kept[t] = k;
    }
    f.size = 256 + f.n_merges + 1;
    f.bytes[f.size - 1] = malloc(14), f.len[f.size - 1] = 13;
    memcpy(f.bytes[f.size - 1], "<|endoftext|>", 13);
    qkv_test_random_perm(rng, f.size, f.id);
    qkv_bpe_free(trained);
    free(kept);
    FILE *v = fopen(qkv_test_path(tmpdir, "vocab.json"), "w");
    FILE *m = fopen(qkv_test_path(tmpdir, "merges.txt"), "w");
    ck_assert(v && m);
    char buf[4096];
    fprintf(v, "{");
    for (int t = 0; t < f.size; t++) { /* in a shuffled order: the ids say which is which */
        int k = (t * 7919) % f.size;
        size_t n = qkv_test_gpt2_spell(f.bytes[k], f.len[k], buf, 1);
        fprintf(v, "%s\"%.*s\": %d", t ? ",\n " : "", (int)n, buf, (int)f.id[k]);
    }
    fprintf(v, "}\n");
    fprintf(m, "#version: 0.2\n");
    for (int i = 0; i < f.n_merges; i++) {
        int32_t l = f.merges[2 * i], r = f.merges[2 * i + 1];
        size_t nl = qkv_test_gpt2_spell(f.bytes[l], f.len[l], buf, 0);
        size_t nr = qkv_test_gpt2_spell(f.bytes[r], f.len[r], buf + nl + 1, 0);
        buf[nl] = ' ';
        fprintf(m, "%.*s\n", (int)(nl + 1 + nr), buf);
    }
    fclose(v), fclose(m);
    return f;
}

static void free_files(files *f)
{
    for (int t = 0; t < f->size; t++)
        free(f->bytes[t]);
    free(f->merges), free(f->bytes), free(f->len), free(f->id);
}

/* GPT-2's bpe() on one chunk: its bytes as tokens; while some neighbouring pair
 * is a merge, the one of lowest rank is merged everywhere, left to right. The
 * ids, appended to out at *n. */
static void ref_bpe(const files *f, const char *chunk, size_t len, int32_t *out, size_t *n)
{
    int32_t *w = malloc((len + 1) * sizeof *w);
    size_t m = len;
    for (size_t i = 0; i < len; i++)
        w[i] = (unsigned char)chunk[i];
    for (;;) {
        int best = -1;
        for (size_t i = 0; i + 1 < m; i++)
            for (int r = 0; r < f->n_merges; r++)
                if (w[i] == f->merges[2 * r] && w[i + 1] == f->merges[2 * r + 1] &&
                    (best < 0 || r < best))
                    best = r;
        if (best < 0)
            break;
        size_t k = 0;
        for (size_t i = 0; i < m; i++)
            if (i + 1 < m && w[i] == f->merges[2 * best] && w[i + 1] == f->merges[2 * best + 1])
                w[k++] = 256 + best, i++;
            else
                w[k++] = w[i];
        m = k;
    }
    for (size_t i = 0; i < m; i++)
        out[(*n)++] = f->id[w[i]];
    free(w);
}

/* The training text: words of every class the alphabet has, control bytes and
 * bytes >= 0x80 among them, so merges hold bytes GPT-2 spells from U+0100 on. */
static size_t training_text(qkv_rng *rng, char *text)
{
    static const char *const words[] = {
        "the", " the", " cat", "'s", " don't", " 42", " 2026", "\n\n", "\t", "  ", "caf\xc3\xa9",
        " \xce\xbb\xcf\x8c\xce\xb3\xce\xbf\xcf\x82", "\xe4\xb8\xad\xe6\x96\x87", "\x01\x02\x7f",
        " !!",
        "\xc2\xa0", "\xf0\x9f\x98\x80", "\xff\xfe", " \"q\"", "\\n", " <|endoftext|>",
    };
    size_t len = 0;
    for (int i = 0; i < 3000; i++) {
        const char *w = words[qkv_rng_below(rng, sizeof words / sizeof words[0])];
        memcpy(text + len, w, strlen(w));
        len += strlen(w);
    }
    return len;
}

/* Hand-made files of a training text (into *corpus, malloc'd, *len bytes)
 * from rng, in tmpdir and in *f; the tokenizer qkv_bpe_load_gpt2 makes of them. */
static qkv_bpe *hand_made(qkv_rng *rng, char **corpus, size_t *len, files *f)
{
    *corpus = malloc(3000 * 16); /* no word is longer than 16 bytes */
    *len = training_text(rng, *corpus);
    *f = make_files(rng, *corpus, *len);
    ck_assert_int_gt(f->n_merges, 30);
    qkv_bpe *bpe = qkv_bpe_load_gpt2(qkv_test_path(tmpdir, "vocab.json"),
                                     qkv_test_path(tmpdir, "merges.txt"));
    ck_assert_qkv(bpe);
    return bpe;
}

START_TEST(test_encode_as_gpt2s_bpe)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 3636);
    char *corpus;
    size_t corpus_len;
    files f;
    qkv_bpe *bpe = hand_made(&rng, &corpus, &corpus_len, &f);
    ck_assert_int_eq(qkv_bpe_size(bpe), f.size);
    for (int t = 0; t < f.size; t++) { /* every token's bytes under its id */
        size_t n;
        const char *b = qkv_bpe_token(bpe, f.id[t], &n);
        ck_assert(b && n == f.len[t] && memcmp(b, f.bytes[t], n) == 0);
    }
    for (int i = 0; i < f.n_merges; i++) {
        int32_t l, r;
        ck_assert_int_eq(qkv_bpe_merge(bpe, i, &l, &r), 0);
        ck_assert(l == f.id[f.merges[2 * i]] && r == f.id[f.merges[2 * i + 1]]);
    }
    char text[4 * 64 + 200], back[sizeof text];
    unit u[sizeof text];
    int32_t want[sizeof text], got[sizeof text];
    for (int trial = 0; trial < 2000; trial++) {
        size_t len, n_want = 0;
        if (trial % 2) { /* a piece of the training text, where the merges apply */
            size_t at = qkv_rng_below(&rng, corpus_len - 200);
            len = 1 + qkv_rng_below(&rng, 200);
            memcpy(text, corpus + at, len);
        } else {
            random_text(&rng, 1 + qkv_rng_below(&rng, 40), text, &len, u);
        }
        for (size_t pos = 0; pos < len;) {
            size_t end = qkv__bpe_gpt2_chunk_end((const unsigned char *)text, len, pos);
            ref_bpe(&f, text + pos, end - pos, want, &n_want);
            pos = end;
        }
        long long n = qkv_bpe_encode(bpe, text, len, got);
        ck_assert_msg(n == (long long)n_want && memcmp(got, want, n_want * sizeof *want) == 0,
                      "trial %d: \"%s\" encodes to %lld ids, not the %zu of GPT-2's bpe()",
                      trial, shown(text, len), n, n_want);
        ck_assert_int_eq(qkv_bpe_decode(bpe, got, (size_t)n, back, len), (long long)len);
        ck_assert(memcmp(back, text, len) == 0);
    }
    /* <|endoftext|> decodes to its text, and encoding never makes it. */
    int32_t eot = f.id[f.size - 1];
    ck_assert_int_eq(qkv_bpe_decode(bpe, &eot, 1, back, sizeof back), 13);
    ck_assert(memcmp(back, "<|endoftext|>", 13) == 0);
    long long n = qkv_bpe_encode(bpe, "<|endoftext|>", 13, got);
    for (long long i = 0; i < n; i++)
        ck_assert_int_ne(got[i], eot);
    qkv_bpe_free(bpe);
    free_files(&f);
    free(corpus);
}
END_TEST

/* A GPT-2 tokenizer saved and loaded (as a checkpoint carries it) is the same:
 * its ids, its tokens, its pre-split. */
START_TEST(test_save_keeps_everything)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    char *corpus;
    size_t len;
    files f;
    qkv_bpe *bpe = hand_made(&rng, &corpus, &len, &f);
    const char *path = qkv_test_path(tmpdir, "gpt2.bpe");
    ck_assert_msg(qkv_bpe_save(bpe, path) == 0, "%s", qkv_last_error());
    qkv_bpe *back = qkv_bpe_load(path);
    ck_assert_qkv(back);
    ck_assert_int_eq(qkv_bpe_size(back), qkv_bpe_size(bpe));
    for (int32_t id = 0; id < qkv_bpe_size(bpe); id++) {
        size_t n1, n2;
        const char *a = qkv_bpe_token(bpe, id, &n1), *b = qkv_bpe_token(back, id, &n2);
        ck_assert(n1 == n2 && memcmp(a, b, n1) == 0);
    }
    int32_t *x = malloc(len * sizeof *x), *y = malloc(len * sizeof *y);
    long long n = qkv_bpe_encode(bpe, corpus, len, x);
    ck_assert_int_eq(qkv_bpe_encode(back, corpus, len, y), n);
    ck_assert(memcmp(x, y, (size_t)n * sizeof *x) == 0);
    /* "it's" is two chunks under GPT-2's pre-split: 's is never merged with it. */
    static const char its[] = "it's it's it's";
    ck_assert_int_eq(qkv_bpe_encode(back, its, sizeof its - 1, y),
                     qkv_bpe_encode(bpe, its, sizeof its - 1, x));
    /* Any one damaged byte of the file is refused. */
    size_t file_len;
    unsigned char *bytes = (unsigned char *)qkv_test_read_file(path, &file_len);
    const char *bad = qkv_test_path(tmpdir, "bad.bpe");
    for (size_t i = 0; i < file_len; i += 1 + i / 64) {
        bytes[i] ^= 0x10;
        qkv_test_write_file(bad, bytes, file_len);
        qkv_bpe *b = qkv_bpe_load(bad);
        ck_assert_msg(!b, "byte %zu of %zu damaged, and the file loads", i, file_len);
        bytes[i] ^= 0x10;
    }
    free(bytes), free(x), free(y), free(corpus);
    qkv_bpe_free(bpe), qkv_bpe_free(back);
    free_files(&f);
}
END_TEST

/* Loading vocab and merges (written to tmpdir) fails naming the file, and the
 * message holds want. */
static void refused(const char *vocab, const char *merges, const char *file, const char *want)
{
    const char *vp = qkv_test_path(tmpdir, "v.json");
    qkv_test_write_file(vp, vocab, strlen(vocab));
    char mp[256];
    snprintf(mp, sizeof mp, "%s", qkv_test_path(tmpdir, "m.txt"));
    qkv_test_write_file(mp, merges, strlen(merges));
    qkv_clear_error();
    ck_assert_ptr_null(qkv_bpe_load_gpt2(vp, mp));
    const char *msg = qkv_last_error();
    ck_assert_msg(strstr(msg, "qkv_bpe_load_gpt2") && strstr(msg, file) && strstr(msg, want),
                  "message \"%s\" lacks %s or \"%s\"", msg, file, want);
}

START_TEST(test_bad_files_say_what_is_wrong)
{
    char *ok = qkv_test_gpt2_byte_vocab("\"ab\": 256, \"abc\": 257");
    refused("[1, 2]", "", "vocab.json", "byte 0");
    refused("{\"a\": 1", "", "vocab.json", "'}'");
    refused("{\"a\": -1}", "", "vocab.json", "non-negative integer");
    refused("{\"\\u12\": 1}", "", "vocab.json", "\\u escape");
    refused("{\"\\ud800x\": 1}", "", "vocab.json", "surrogate");
    refused("{\"a\": 0, \"b\": 0}", "", "vocab.json", "each once");
    refused("{\"a\": 0, \"\\u4e2d\": 1}", "", "vocab.json", "stands for no byte");
    refused("{\"a\": 0, \"a\": 1}", "", "vocab.json", "same bytes");
    refused("{\"a\": 0}", "", "vocab.json", "byte 0x00");
    refused(ok, "#version: 0.2\nab\n", "merges.txt", "line 2");
    refused(ok, "a b\nab c d\n", "merges.txt", "line 2");
    refused(ok, "a b\nab x\n", "merges.txt", "vocab.json does not have");
    refused(ok, "ab c\na b\n", "merges.txt", "line 1");
    refused(ok, "a b\na b\n", "merges.txt", "an earlier line makes");
    refused(ok, "a b\nab \xe4\xb8\xad\n", "merges.txt", "stands for no byte");
    char *gap = qkv_test_gpt2_byte_vocab("\"ab\": 256, \"abc\": 258");
    refused(gap, "a b\n", "vocab.json", "each once");
    free(gap);
    /* The same files, right, load: CRLF lines and no #version line are fine. */
    const char *vp = qkv_test_path(tmpdir, "v.json");
    qkv_test_write_file(vp, ok, strlen(ok));
    char mp[256];
    snprintf(mp, sizeof mp, "%s", qkv_test_path(tmpdir, "m.txt"));
    qkv_test_write_file(mp, "a b\r\nab c\r\n", 11);
    qkv_bpe *bpe = qkv_bpe_load_gpt2(vp, mp);
    ck_assert_qkv(bpe);
    int32_t ids[8];
    ck_assert_int_eq(qkv_bpe_encode(bpe, "abcab", 5, ids), 2);
    ck_assert(ids[0] == 257 && ids[1] == 256);
    qkv_bpe_free(bpe);
    free(ok);
}
END_TEST

/* Damaged files (a random byte changed, or the file cut short) load or are
 * refused with a message, and what loads still round-trips any bytes: the
 * reader never reads past a file's end (the sanitizers' runs say so). */
START_TEST(test_damaged_files_load_or_are_refused)
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 99);
    char *corpus;
    size_t len;
    files f;
    qkv_bpe_free(hand_made(&rng, &corpus, &len, &f));
    static const char *const names[] = {"vocab.json", "merges.txt"};
    char *orig[2], path[2][256];
    size_t n[2];
    for (int k = 0; k < 2; k++) {
        snprintf(path[k], sizeof path[k], "%s", qkv_test_path(tmpdir, names[k]));
        orig[k] = qkv_test_read_file(path[k], &n[k]);
    }
    static const char bytes[] = "\"\\{}:, 0a\xc4\xa0\n\xff";
    int loaded = 0;
    for (int trial = 0; trial < 400; trial++) {
        int k = trial % 2;
        char *copy = malloc(n[k] + 1);
        memcpy(copy, orig[k], n[k]);
        size_t m = n[k], at = qkv_rng_below(&rng, n[k]);
        if (trial % 5 == 0)
            m = at; /* cut short */
        else
            copy[at] = bytes[qkv_rng_below(&rng, sizeof bytes - 1)];
        qkv_test_write_file(path[k], copy, m);
        qkv_clear_error();
        qkv_bpe *bpe = qkv_bpe_load_gpt2(path[0], path[1]);
        if (bpe) {
            int32_t ids[64];
            char back[64];
            long long t = qkv_bpe_encode(bpe, corpus, 64, ids);
            ck_assert(t > 0 && qkv_bpe_decode(bpe, ids, (size_t)t, back, 64) == 64);
            ck_assert(memcmp(back, corpus, 64) == 0);
            loaded++;
        } else {
            ck_assert_msg(strstr(qkv_last_error(), "qkv_bpe_load_gpt2"), "%s", qkv_last_error());
        }
        qkv_bpe_free(bpe);
        qkv_test_write_file(path[k], orig[k], n[k]);
        free(copy);
    }
    ck_assert_int_lt(loaded, 400); /* the damage is seen, mostly */
    free(orig[0]), free(orig[1]), free(corpus);
    free_files(&f);
}
END_TEST

static Suite *bpe_gpt2_suite(void)
{
    Suite *s = suite_create("bpe_gpt2");
    TCase *tc = tcase_create("gpt2");
    tcase_add_unchecked_fixture(tc, make_tmpdir, remove_tmpdir);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_split_as_the_pattern);
    tcase_add_test(tc, test_split_by_hand);
    tcase_add_test(tc, test_encode_as_gpt2s_bpe);
    tcase_add_test(tc, test_save_keeps_everything);
    tcase_add_test(tc, test_bad_files_say_what_is_wrong);
    tcase_add_test(tc, test_damaged_files_load_or_are_refused);
    suite_add_tcase(s, tc);
    return s;
}

QKV_TEST_MAIN(bpe_gpt2_suite)
