/* The .bpe file: a tokenizer's merges, versioned and checksummed.
 *
 *   bytes 0-7    "QKVBPE" and two NULs
 *   u32          format version (1)
 *   u32          pre-split (1: the ASCII classes of qkv/bpe.h)
 *   u32          n, the number of merges
 *   n × 2 u32    merge i's left and right token
 *   and with pre-split 2 (GPT-2's pattern, qkv_bpe_load_gpt2's tokenizers):
 *   u32          e, the number of extra tokens (no merge makes them)
 *   e × (u32 k, k bytes)  each one's bytes
 *   (256+n+e) u32  the public id of each token (bytes, merges, extra tokens)
 *   then
 *   u32          FNV-1a (32-bit) of every byte before it
 *
 * Numbers are little-endian. The same bytes go into a checkpoint that carries
 * a tokenizer. The checksum is FNV-1a, not the checkpoints' CRC-32, because
 * data/ sits below train/; it too catches any one damaged byte. */
#include <stdio.h>
#include <string.h>

#include "tensor/check.h"
#include "data/bpe_internal.h"
#include "qkv/file.h"

static const char MAGIC[8] = "QKVBPE";
#define VERSION 1
#define HEADER_BYTES 20

static void put_u32(unsigned char *p, uint32_t x)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(x >> (8 * i));
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The bytes of the GPT-2 part after the merges: the extra tokens and the ids. */
static size_t gpt2_part_bytes(const qkv_bpe *bpe)
{
    if (bpe->split != QKV__SPLIT_GPT2)
        return 0;
    int made = 256 + bpe->n_merges;
    size_t n = 4 + 4 * (size_t)(made + bpe->n_extra);
    for (int j = 0; j < bpe->n_extra; j++)
        n += 4 + bpe->length[made + j];
    return n;
}

/* Write the GPT-2 part at p. */
static void put_gpt2_part(const qkv_bpe *bpe, unsigned char *p)
{
    int made = 256 + bpe->n_merges, size = made + bpe->n_extra;
    put_u32(p, (uint32_t)bpe->n_extra);
    p += 4;
    for (int j = 0; j < bpe->n_extra; j++) {
        put_u32(p, bpe->length[made + j]);
        memcpy(p + 4, bpe->bytes + bpe->offset[made + j], bpe->length[made + j]);
        p += 4 + bpe->length[made + j];
    }
    for (int k = 0; k < size; k++)
        put_u32(p + 4 * k, (uint32_t)bpe->to_ext[k]);
}

unsigned char *qkv__bpe_to_bytes(const qkv_bpe *bpe, size_t *len)
{
    size_t n = (size_t)bpe->n_merges, size = HEADER_BYTES + 8 * n + gpt2_part_bytes(bpe) + 4;
    unsigned char *p = qkv_alloc(size);
    if (!p)
        return NULL;
    memcpy(p, MAGIC, 8);
    put_u32(p + 8, VERSION);
    put_u32(p + 12, (uint32_t)bpe->split);
    put_u32(p + 16, (uint32_t)n);
    for (size_t i = 0; i < 2 * n; i++)
        put_u32(p + HEADER_BYTES + 4 * i, (uint32_t)bpe->merges[i]);
    if (bpe->split == QKV__SPLIT_GPT2)
        put_gpt2_part(bpe, p + HEADER_BYTES + 8 * n);
    put_u32(p + size - 4, qkv__fnv1a(p, size - 4));
    *len = size;
    return p;
}

/* The length of the GPT-2 part of a tokenizer of n merges at p, avail bytes
 * there; 0 when it would not fit or is not one. */
static size_t gpt2_part_len(const unsigned char *p, size_t avail, uint32_t n)
{
    if (avail < 4)
        return 0;
    uint32_t e = get_u32(p);
    if (e > QKV_BPE_MAX_VOCAB - 256 - n)
        return 0;
    size_t at = 4;
    for (uint32_t j = 0; j < e; j++) {
        if (avail - at < 4 || avail - at - 4 < get_u32(p + at))
            return 0;
        at += 4 + get_u32(p + at);
    }
    size_t ids = 4 * ((size_t)256 + n + e);
    return avail - at >= ids ? at + ids : 0;
}

size_t qkv__bpe_bytes_len(const unsigned char *p, size_t avail)
{
    if (avail < HEADER_BYTES + 4 || memcmp(p, MAGIC, 8) != 0)
        return 0;
    uint32_t n = get_u32(p + 16);
    if (n > QKV_BPE_MAX_VOCAB - 256)
        return 0;
    size_t len = HEADER_BYTES + 8 * (size_t)n;
    if (len + 4 > avail)
        return 0;
    if (get_u32(p + 12) == QKV__SPLIT_GPT2) {
        size_t part = gpt2_part_len(p + len, avail - len - 4, n);
        if (!part)
            return 0;
        len += part;
    }
    return len + 4;
}

/* Give bpe the GPT-2 part at p (its length already checked). */
static int gpt2_part_from_bytes(qkv_bpe *bpe, const unsigned char *p)
{
    uint32_t e = get_u32(p);
    int size = 256 + bpe->n_merges + (int)e;
    uint32_t *extra_len = qkv_alloc(4 * (size_t)e + 1);
    int32_t *to_ext = qkv_alloc(4 * (size_t)size);
    const unsigned char *at = p + 4;
    size_t total = 0;
    for (uint32_t j = 0; j < e; j++)
        total += get_u32(at + total + 4 * j);
    char *extra = qkv_alloc(total + 1);
    int rc = -1;
    if (!extra_len || !to_ext || !extra) {
        qkv_set_error("out of memory for %d tokens", size);
        goto done;
    }
    size_t used = 0;
    for (uint32_t j = 0; j < e; j++) {
        extra_len[j] = get_u32(at);
        memcpy(extra + used, at + 4, extra_len[j]);
        used += extra_len[j], at += 4 + extra_len[j];
    }
    for (int k = 0; k < size; k++) {
        uint32_t x = get_u32(at + 4 * k);
        to_ext[k] = x > INT32_MAX ? -1 : (int32_t)x;
    }
    rc = qkv__bpe_set_vocab(bpe, (int)e, extra, extra_len, to_ext);
done:
    qkv_free(extra_len), qkv_free(to_ext), qkv_free(extra);
    return rc;
}

qkv_bpe *qkv__bpe_from_bytes(const unsigned char *p, size_t len)
{
    if (len < 8 || memcmp(p, MAGIC, 8) != 0) {
        qkv_set_error("not a qkv BPE tokenizer (no QKVBPE at its start)");
        return NULL;
    }
    if (len < HEADER_BYTES + 4) {
        qkv_set_error("cut short: %zu bytes, less than a header", len);
        return NULL;
    }
    uint32_t version = get_u32(p + 8), split = get_u32(p + 12), n = get_u32(p + 16);
    if (version != VERSION) {
        qkv_set_error("format version %u; this qkv reads version %d", version, VERSION);
        return NULL;
    }
    if (split != QKV__SPLIT_ASCII && split != QKV__SPLIT_GPT2) {
        qkv_set_error("pre-split %u; this qkv knows pre-splits %d (ASCII classes) and %d "
                      "(GPT-2's)", split, QKV__SPLIT_ASCII, QKV__SPLIT_GPT2);
        return NULL;
    }
    if (n > QKV_BPE_MAX_VOCAB - 256) {
        qkv_set_error("%u merges; a tokenizer has at most %d", n, QKV_BPE_MAX_VOCAB - 256);
        return NULL;
    }
    size_t want = HEADER_BYTES + 8 * (size_t)n + 4, part = 0;
    if (split == QKV__SPLIT_GPT2 && len > want) {
        part = gpt2_part_len(p + want - 4, len - want, n);
        want = part ? want + part : len + 1; /* no whole GPT-2 part: cut short */
    } else if (split == QKV__SPLIT_GPT2) {
        want++; /* not even the GPT-2 part's count */
    }
    if (len != want) {
        qkv_set_error("%zu bytes where %u merges make %zu (%s)", len, n, want,
                      len < want ? "cut short" : "bytes after the end");
        return NULL;
    }
    uint32_t sum = qkv__fnv1a(p, len - 4);
    if (sum != get_u32(p + len - 4)) {
        qkv_set_error("bad checksum (FNV-1a %08x, the file says %08x): the file is damaged",
                      sum, get_u32(p + len - 4));
        return NULL;
    }
    int32_t *merges = qkv_alloc(8 * (size_t)n + 1);
    if (!merges) {
        qkv_set_error("out of memory for %u merges", n);
        return NULL;
    }
    for (size_t i = 0; i < 2 * (size_t)n; i++) {
        uint32_t x = get_u32(p + HEADER_BYTES + 4 * i);
        merges[i] = x > INT32_MAX ? -1 : (int32_t)x;
    }
    qkv_bpe *bpe = qkv__bpe_make(merges, (int)n);
    qkv_free(merges);
    if (bpe && part && gpt2_part_from_bytes(bpe, p + HEADER_BYTES + 8 * (size_t)n) < 0) {
        qkv_bpe_free(bpe);
        return NULL;
    }
    return bpe;
}

int qkv_bpe_save(const qkv_bpe *bpe, const char *path)
{
    const char *fn = "qkv_bpe_save";
    if (qkv__null(fn, "bpe", bpe) || qkv__null(fn, "path", path))
        return -1;
    size_t len;
    unsigned char *p = qkv__bpe_to_bytes(bpe, &len);
    if (!p)
        return qkv_set_error("%s: out of memory for %s", fn, path);
    qkv_output *o = qkv_output_open(path);
    if (!o) {
        qkv_free(p);
        return qkv__error_prefix("%s", fn);
    }
    fwrite(p, 1, len, qkv_output_file(o)); /* a failed write is caught by the commit */
    qkv_free(p);
    if (qkv_output_commit(o) < 0)
        return qkv__error_prefix("%s", fn);
    return 0;
}

qkv_bpe *qkv_bpe_load(const char *path)
{
    const char *fn = "qkv_bpe_load";
    if (qkv__null(fn, "path", path))
        return NULL;
    size_t len;
    unsigned char *p = qkv_input_read(path, &len);
    if (!p) {
        qkv__error_prefix("%s", fn);
        return NULL;
    }
    qkv_bpe *bpe = qkv__bpe_from_bytes(p, len);
    qkv_free(p);
    if (!bpe)
        qkv__error_prefix("%s: %s", fn, path);
    return bpe;
}
