/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as zlib's crc32
 * (see qkv/checkpoint.h), a byte at a time from a 256-entry table. */
#include "qkv/checkpoint.h"

#include "tensor/check.h"

#include <pthread.h>

static uint32_t table[256];
static pthread_once_t table_once = PTHREAD_ONCE_INIT;

/* table[b] = the CRC register after shifting byte b through the polynomial
 * eight times, one bit at a time. */
static void make_table(void)
{
    for (uint32_t b = 0; b < 256; b++) {
        uint32_t c = b;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ 0xEDB88320u : c >> 1;
        table[b] = c;
    }
}

uint32_t qkv_crc32(uint32_t crc, const void *data, size_t n)
{
    if (n > 0 && qkv__null("qkv_crc32", "data", data))
        return 0;
    pthread_once(&table_once, make_table);
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < n; i++)
        crc = table[(crc ^ p[i]) & 0xff] ^ (crc >> 8);
    return ~crc;
}
