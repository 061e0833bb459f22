/* Misuse cases for qkv/gradcheck.h: the gradient checker. */
#include "misuse.h"

static qkv_tensor *identity(qkv_arena *a, qkv_tensor **in, void *user)
{
    (void)a, (void)user;
    return in[0];
}

static qkv_tensor *fails(qkv_arena *a, qkv_tensor **in, void *user)
{
    (void)in, (void)user;
    return qkv_tensor_new(a, 0, NULL);
}

/* A leaf that wants a gradient. */
static qkv_tensor *leaf(void)
{
    qkv_tensor *x = tensor(SHAPE23);
    qkv_set_requires_grad(x, true);
    return x;
}

MISUSE(qkv_gradcheck, null_f)
{
    FAILS_NAN(qkv_gradcheck(NULL, (qkv_tensor *[]){leaf()}, 1, NULL), "f is NULL");
}
MISUSE(qkv_gradcheck, null_inputs)
{
    FAILS_NAN(qkv_gradcheck(identity, NULL, 1, NULL), "inputs is NULL");
}
MISUSE(qkv_gradcheck, no_inputs)
{
    FAILS_NAN(qkv_gradcheck(identity, (qkv_tensor *[]){leaf()}, 0, NULL), "n_inputs is 0");
}
MISUSE(qkv_gradcheck, null_input)
{
    FAILS_NAN(qkv_gradcheck(identity, (qkv_tensor *[]){NULL}, 1, NULL), "inputs[0] is NULL");
}
MISUSE(qkv_gradcheck, nothing_requires_grad)
{
    FAILS_NAN(qkv_gradcheck(identity, (qkv_tensor *[]){tensor(SHAPE23)}, 1, NULL),
              "no input requires grad");
}
MISUSE(qkv_gradcheck, computed_input)
{
    qkv_tensor *x = leaf();
    FAILS_NAN(qkv_gradcheck(identity, (qkv_tensor *[]){qkv_add(arena(), x, x)}, 1, NULL),
              "inputs[0] is the result of an op");
}
MISUSE(qkv_gradcheck, f_fails)
{
    FAILS_NAN(qkv_gradcheck(fails, (qkv_tensor *[]){leaf()}, 1, NULL), "not 0");
}

static qkv_tensor *product(qkv_arena *a, qkv_tensor **in, void *user)
{
    (void)user;
    return qkv_mul(a, in[0], in[1]);
}
/* The same tensor twice is f(x, x): checked, and x's gradient is the one it had. */
MISUSE(qkv_gradcheck, same_input_twice)
{
    qkv_tensor *x = leaf();
    qkv_real *own = x->grad;
    double err = qkv_gradcheck(product, (qkv_tensor *[]){x, x}, 2, NULL);
    MISUSE_ASSERT(err <= QKV_GRADCHECK_TOL);
    MISUSE_ASSERT(x->grad == own);
}
/* Fails only with gradients off: the documented NAN, naming what failed. */
static qkv_tensor *fails_without_grad(qkv_arena *a, qkv_tensor **in, void *user)
{
    (void)user;
    return qkv_grad_enabled() ? qkv_mul(a, in[0], in[0]) : qkv_tensor_new(a, 0, NULL);
}
MISUSE(qkv_gradcheck, f_fails_with_gradients_off)
{
    FAILS_NAN(qkv_gradcheck(fails_without_grad, (qkv_tensor *[]){leaf()}, 1, NULL),
              "f failed with gradients off", "inputs[0] value 0");
}
