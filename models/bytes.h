/* Internal: little-endian fields for the models' config blobs, the same
 * bytes on every machine. Not installed. */
#ifndef QKV_BYTES_H
#define QKV_BYTES_H

#include <stdint.h>
#include <string.h>

static inline void qkv__put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t qkv__get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void qkv__put_u64(uint8_t *p, uint64_t v)
{
    qkv__put_u32(p, (uint32_t)v);
    qkv__put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint64_t qkv__get_u64(const uint8_t *p)
{
    return qkv__get_u32(p) | (uint64_t)qkv__get_u32(p + 4) << 32;
}

static inline void qkv__put_f64(uint8_t *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    qkv__put_u64(p, bits);
}

static inline double qkv__get_f64(const uint8_t *p)
{
    uint64_t bits = qkv__get_u64(p);
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* A size field read back: values above 2^30 become -1 so range checks reject them. */
static inline int qkv__get_size(const uint8_t *p)
{
    uint32_t v = qkv__get_u32(p);
    return v > (1u << 30) ? -1 : (int)v;
}

#endif
