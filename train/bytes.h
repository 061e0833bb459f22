/* Internal: little-endian fields, the same bytes on every machine, for
 * checkpoints and the models' config blobs. Not installed. */
#ifndef QKV_BYTES_H
#define QKV_BYTES_H

#include <stdint.h>
#include <string.h>

/* Store v at p[0..3], least significant byte first. */
static inline void qkv__put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* The uint32 stored at p[0..3] by qkv__put_u32. */
static inline uint32_t qkv__get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Store v at p[0..7], least significant byte first. */
static inline void qkv__put_u64(uint8_t *p, uint64_t v)
{
    qkv__put_u32(p, (uint32_t)v);
    qkv__put_u32(p + 4, (uint32_t)(v >> 32));
}

/* The uint64 stored at p[0..7] by qkv__put_u64. */
static inline uint64_t qkv__get_u64(const uint8_t *p)
{
    return qkv__get_u32(p) | (uint64_t)qkv__get_u32(p + 4) << 32;
}

/* Store the IEEE-754 bits of v at p[0..3], so a float round-trips exactly. */
static inline void qkv__put_f32(uint8_t *p, float v)
{
    uint32_t bits;
    memcpy(&bits, &v, sizeof bits);
    qkv__put_u32(p, bits);
}

/* The float stored at p[0..3] by qkv__put_f32. */
static inline float qkv__get_f32(const uint8_t *p)
{
    uint32_t bits = qkv__get_u32(p);
    float v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* Store the IEEE-754 bits of v at p[0..7], so a double round-trips exactly. */
static inline void qkv__put_f64(uint8_t *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    qkv__put_u64(p, bits);
}

/* The double stored at p[0..7] by qkv__put_f64. */
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
