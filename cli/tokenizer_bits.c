/* Losses in bits per byte (see tokenizer_bits.h). */
#include "tokenizer_bits.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double bits_per_byte(double nats_per_token, double bytes_per_token)
{
    return nats_per_token / (log(2.0) * bytes_per_token);
}

void append_bits_per_byte(char *buf, size_t size, double train, double val,
                          double bytes_per_token)
{
    size_t n = strlen(buf);
    if (n + 1 < size)
        snprintf(buf + n, size - n, "; bits per byte: train %.4f, val %.4f",
                 bits_per_byte(train, bytes_per_token), bits_per_byte(val, bytes_per_token));
}
