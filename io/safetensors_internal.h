/* Internal to io/safetensors*.c: the reader's object and its header parser. Not installed. */
#ifndef QKV_SAFETENSORS_INTERNAL_H
#define QKV_SAFETENSORS_INTERNAL_H

#include "qkv/safetensors.h"

struct qkv_safetensors {
    unsigned char *bytes;   /* the whole file */
    size_t len;             /* its length */
    const unsigned char *data; /* the data section, after the header */
    size_t data_len;        /* its length */
    qkv_st_tensor *t;       /* the tensors, in the header's order */
    int n;                  /* how many */
    char **meta;            /* "__metadata__": key, value, key, value, ... */
    int n_meta;             /* pairs in meta */
};

/* Parse the JSON header of len bytes at json into st's tensors and metadata
 * (data_len already set, to check the offsets against). 0, or -1 with a
 * message giving the byte of the header where it went wrong. (safetensors_header.c) */
int qkv__st_parse_header(qkv_safetensors *st, const char *json, size_t len);

#endif
