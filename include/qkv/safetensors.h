/* qkv/safetensors.h — read a .safetensors file: named tensors, as Hugging Face saves them.
 *
 * The format: an 8-byte little-endian length N, N bytes of JSON (each
 * tensor's name -> {"dtype", "shape", "data_offsets": [begin, end]}, and
 * an optional "__metadata__" object of strings), then the tensors' raw
 * little-endian bytes, begin and end counted from the first byte after the
 * JSON. The reader is strict: a header over 100 MB, offsets outside the data
 * or overlapping, a byte count that does not match dtype and shape, a
 * duplicate name or any JSON it does not expect is an error naming the file
 * and the place. F32, F16, BF16 and F64 tensors convert to qkv_real; other
 * dtypes (integers, bool, fp8) are listed but not converted.
 *
 *     qkv_safetensors *st = qkv_safetensors_open("model.safetensors");
 *     const qkv_st_tensor *t = st ? qkv_safetensors_find(st, "wte.weight") : NULL;
 *     qkv_real *w = t ? qkv_alloc(t->count * sizeof *w) : NULL;
 *     if (w && qkv_safetensors_read(st, t, w, t->count) == 0)
 *         printf("%s: %lld x %lld, first %g\n", t->name, (long long)t->shape[0],
 *                (long long)t->shape[1], (double)w[0]);
 *     else
 *         fprintf(stderr, "%s\n", qkv_last_error());
 *     qkv_free(w);
 *     qkv_safetensors_free(st);
 */
#ifndef QKV_SAFETENSORS_H
#define QKV_SAFETENSORS_H

#include "qkv/base.h"

QKV_BEGIN_DECLS

/* The most dimensions a tensor of the file may have. */
#define QKV_ST_MAX_DIMS 8

/* The largest JSON header accepted (the format's own limit): 100 MB. */
#define QKV_ST_MAX_HEADER 100000000

/* A tensor's element type: the ones qkv converts, and every other. */
typedef enum qkv_st_dtype {
    QKV_ST_F32,  /* IEEE single */
    QKV_ST_F16,  /* IEEE half */
    QKV_ST_BF16, /* bfloat16: the top half of a single */
    QKV_ST_F64,  /* IEEE double */
    QKV_ST_OTHER /* integers, bool, fp8: listed, not converted */
} qkv_st_dtype;

/* One tensor of a file, as its header describes it. */
typedef struct qkv_st_tensor {
    const char *name;                 /* its key in the header (UTF-8), owned by the file */
    const char *dtype_name;           /* the header's word for its dtype ("F32", "I64", ...) */
    qkv_st_dtype dtype;               /* that dtype, when qkv converts it */
    int ndim;                         /* dimensions, 0 (a scalar) to QKV_ST_MAX_DIMS */
    int64_t shape[QKV_ST_MAX_DIMS];   /* sizes, shape[0] the slowest */
    size_t count;                     /* elements: the product of the sizes */
    size_t begin, end;                /* its bytes in the data section */
} qkv_st_tensor;

/* A file's header read and checked, and its data. Opaque. */
typedef struct qkv_safetensors qkv_safetensors;

/* The file at path, read whole and checked. NULL with a message naming the
 * path and what is wrong. */
qkv_safetensors *qkv_safetensors_open(const char *path);

/* As qkv_safetensors_open, from the len bytes at bytes (copied). */
qkv_safetensors *qkv_safetensors_parse(const void *bytes, size_t len);

/* Free it (NULL is fine); its tensors' names go with it. */
void qkv_safetensors_free(qkv_safetensors *st);

/* How many tensors the file holds; -1 with a message for a NULL st. */
int qkv_safetensors_count(const qkv_safetensors *st);

/* The i-th tensor in the header's order, i in [0, count); NULL with a message. */
const qkv_st_tensor *qkv_safetensors_tensor(const qkv_safetensors *st, int i);

/* The tensor called name, or NULL with a message saying it is not there. */
const qkv_st_tensor *qkv_safetensors_find(const qkv_safetensors *st, const char *name);

/* The metadata value of key, or NULL (with a message) when there is none. */
const char *qkv_safetensors_meta(const qkv_safetensors *st, const char *key);

/* t's values converted to qkv_real into out, which holds n >= t->count; t
 * must come from st. 0, or -1 with a message (a dtype qkv does not convert). */
int qkv_safetensors_read(const qkv_safetensors *st, const qkv_st_tensor *t, qkv_real *out,
                         size_t n);

QKV_END_DECLS
#endif
