/* The tests' custom ops (see custom_ops.h). */
#include "custom_ops.h"

int scaled_product_backwards;

static int forward(qkv_tensor *out, qkv_tensor *const *in, int n, void *user)
{
    if (n != 2 || in[0]->size != out->size || in[1]->size != out->size)
        return qkv_set_error("scaled_product: takes two inputs of the result's size");
    qkv_real s = *(const qkv_real *)user;
    for (size_t i = 0; i < out->size; i++)
        out->data[i] = in[0]->data[i] * in[1]->data[i] * s;
    return 0;
}

/* d/dx = y·s·g, d/dy = x·s·g; the wrong one leaves s out. */
static void backward_with(qkv_real s, const qkv_tensor *out, const qkv_real *g,
                          qkv_tensor *const *in, qkv_real *const *grad_in)
{
    scaled_product_backwards++;
    for (int k = 0; k < 2; k++)
        if (grad_in[k])
            for (size_t i = 0; i < out->size; i++)
                grad_in[k][i] += in[1 - k]->data[i] * s * g[i];
}

static void backward(const qkv_tensor *out, const qkv_real *g, qkv_tensor *const *in,
                     qkv_real *const *grad_in, int n, void *user)
{
    (void)n;
    backward_with(*(const qkv_real *)user, out, g, in, grad_in);
}

static void wrong_backward(const qkv_tensor *out, const qkv_real *g, qkv_tensor *const *in,
                           qkv_real *const *grad_in, int n, void *user)
{
    (void)n, (void)user;
    backward_with(1, out, g, in, grad_in);
}

const qkv_custom_op scaled_product_op = {"scaled_product", forward, backward};
const qkv_custom_op scaled_product_wrong_op = {"scaled_product_wrong", forward, wrong_backward};

/* The right gradients, but assigned: right only when nothing came before. */
static void assigning_backward(const qkv_tensor *out, const qkv_real *g, qkv_tensor *const *in,
                               qkv_real *const *grad_in, int n, void *user)
{
    (void)n;
    qkv_real s = *(const qkv_real *)user;
    scaled_product_backwards++;
    for (int k = 0; k < 2; k++)
        if (grad_in[k])
            for (size_t i = 0; i < out->size; i++)
                grad_in[k][i] = in[1 - k]->data[i] * s * g[i];
}

const qkv_custom_op scaled_product_assigning_op = {"scaled_product_assigning", forward,
                                                   assigning_backward};
