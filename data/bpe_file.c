/* The .bpe file: a tokenizer's merges, versioned and checksummed.
 *
 *   bytes 0-7    "QKVBPE" and two NULs
 *   u32          format version (1)
 *   u32          pre-split (1: the ASCII classes of qkv/bpe.h)
 *   u32          n, the number of merges
 *   n × 2 u32    merge i's left and right token
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
#define SPLIT_ASCII 1
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

unsigned char *qkv__bpe_to_bytes(const qkv_bpe *bpe, size_t *len)
{
    size_t n = (size_t)bpe->n_merges, size = HEADER_BYTES + 8 * n + 4;
    unsigned char *p = qkv_alloc(size);
    if (!p)
        return NULL;
    memcpy(p, MAGIC, 8);
    put_u32(p + 8, VERSION);
    put_u32(p + 12, SPLIT_ASCII);
    put_u32(p + 16, (uint32_t)n);
    for (size_t i = 0; i < 2 * n; i++)
        put_u32(p + HEADER_BYTES + 4 * i, (uint32_t)bpe->merges[i]);
    put_u32(p + size - 4, qkv__fnv1a(p, size - 4));
    *len = size;
    return p;
}

size_t qkv__bpe_bytes_len(const unsigned char *p, size_t avail)
{
    if (avail < HEADER_BYTES + 4 || memcmp(p, MAGIC, 8) != 0)
        return 0;
    uint32_t n = get_u32(p + 16);
    if (n > QKV_BPE_MAX_VOCAB - 256)
        return 0;
    size_t len = HEADER_BYTES + 8 * (size_t)n + 4;
    return len <= avail ? len : 0;
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
    if (split != SPLIT_ASCII) {
        qkv_set_error("pre-split %u; this qkv knows pre-split %d (ASCII classes)", split,
                      SPLIT_ASCII);
        return NULL;
    }
    if (n > QKV_BPE_MAX_VOCAB - 256) {
        qkv_set_error("%u merges; a tokenizer has at most %d", n, QKV_BPE_MAX_VOCAB - 256);
        return NULL;
    }
    size_t want = HEADER_BYTES + 8 * (size_t)n + 4;
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
