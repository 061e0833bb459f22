/* Muon (see qkv/optim.h): Nesterov momentum whose update for each hidden
 * weight matrix is orthogonalised by Newton–Schulz iterations; the
 * parameters outside its group (embeddings, the output head, gains, biases)
 * take AdamW's update in optim.c. References: Keller Jordan, "Muon: An
 * optimizer for hidden layers" (2024), the quintic and its coefficients;
 * Moonshot AI, "Muon is Scalable for LLM Training" (2025), the RMS scale. */
#include <math.h>
#include <string.h>

#include "tensor/check.h"
#include "tensor/kernels/gemm.h"
#include "train/internal.h"

/* The quintic X ← aX + (bA + cA²)X, A = XXᵀ, and its published coefficients:
 * chosen so that small singular values grow fast, at the price of ending in
 * a band around 1 (about 0.7 to 1.2) rather than at 1 exactly. */
static const qkv_real NS_A = (qkv_real)3.4445, NS_B = (qkv_real)-4.7750, NS_C = (qkv_real)2.0315;
enum { NS_STEPS = 5 };

/* The Frobenius norm below which a matrix is taken as 0 (torch.optim.Muon's eps). */
static const double NS_EPS = 1e-7;

/* Moonshot's scale: an orthogonal r×c update has RMS 1/√max(r, c); times
 * 0.2·√max(r, c) it has RMS 0.2, about what AdamW's updates have, so one
 * learning rate (and one weight decay) serves both groups. */
static const double RMS_MATCH = 0.2;

qkv_optim_config qkv_muon_defaults(void)
{
    return (qkv_optim_config){.kind = QKV_OPTIM_MUON, .beta1 = 0.9, .beta2 = 0.99, .eps = 1e-8,
                              .momentum = 0.95, .weight_decay = 0.1};
}

/* qkv_real values a Newton–Schulz of an r×c matrix needs besides its input:
 * X and the next X (m×n each), A and B (m×m), m = min(r, c), n = max(r, c). */
static size_t ns_work(int rows, int cols)
{
    size_t m = (size_t)(rows < cols ? rows : cols), n = (size_t)(rows < cols ? cols : rows);
    return 2 * m * n + 2 * m * m;
}

void qkv__newton_schulz(int count, const qkv_real *g, int rows, int cols, qkv_real *out,
                        qkv_real *work)
{
    /* On the wide orientation: A = XXᵀ is then the small m×m Gram matrix. */
    const bool tall = rows > cols;
    const int m = tall ? cols : rows, n = tall ? rows : cols;
    const size_t mn = (size_t)m * (size_t)n, mm = (size_t)m * (size_t)m, all = (size_t)count * mn;
    qkv_real *x = work, *y = x + all, *a = y + all, *b = a + (size_t)count * mm;
    for (int e = 0; e < count; e++) {
        const qkv_real *ge = g + (size_t)e * mn;
        qkv_real *xe = x + (size_t)e * mn;
        double ss = 0; /* in one fixed order: the same at every thread count */
        for (size_t i = 0; i < mn; i++)
            ss += (double)ge[i] * (double)ge[i];
        const qkv_real inv = (qkv_real)(1 / fmax(sqrt(ss), NS_EPS)); /* singular values now <= 1 */
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++)
                xe[tall ? (size_t)j * (size_t)rows + (size_t)i : (size_t)i * (size_t)cols + (size_t)j] =
                    ge[(size_t)i * (size_t)cols + (size_t)j] * inv;
    }
    /* The count matrices go through each product together: one parallel
     * region shares whole matrices out to the threads, where one small
     * matrix at a time would be cut into pieces too small to run at speed. */
    for (int s = 0; s < NS_STEPS; s++) {
        qkv__gemm(count, false, true, m, m, n, 1, x, n, mn, x, n, mn, 0, a, m, mm); /* A = XXᵀ */
        memcpy(b, a, (size_t)count * mm * sizeof *b);
        qkv__gemm(count, false, false, m, m, m, NS_C, a, m, mm, a, m, mm, NS_B, b, m, mm); /* B = bA + cA² */
        memcpy(y, x, all * sizeof *y);
        qkv__gemm(count, false, false, m, n, m, 1, b, m, mm, x, n, mn, NS_A, y, n, mn); /* Y = aX + BX */
        qkv_real *t = x;
        x = y;
        y = t;
    }
    for (int e = 0; e < count; e++) {
        const qkv_real *xe = x + (size_t)e * mn;
        qkv_real *oe = out + (size_t)e * mn;
        for (int i = 0; i < rows; i++)
            for (int j = 0; j < cols; j++)
                oe[(size_t)i * (size_t)cols + (size_t)j] =
                    xe[tall ? (size_t)j * (size_t)rows + (size_t)i : (size_t)i * (size_t)cols + (size_t)j];
    }
}

int qkv_newton_schulz(const qkv_real *g, int rows, int cols, qkv_real *out)
{
    const char *fn = "qkv_newton_schulz";
    if (qkv__null(fn, "g", g) || qkv__null(fn, "out", out))
        return -1;
    double m = rows < cols ? rows : cols; /* the scratch's size in double: it cannot wrap */
    if (rows < 1 || cols < 1 ||
        (2.0 * rows * cols + 2 * m * m) * sizeof *out > (double)(SIZE_MAX / 2))
        return qkv_set_error("%s: a %d x %d matrix; rows and cols must be >= 1 and the "
                             "matrix within memory's reach", fn, rows, cols);
    qkv_real *work = qkv_alloc(ns_work(rows, cols) * sizeof *work);
    if (!work)
        return qkv__fail_in(fn);
    qkv__newton_schulz(1, g, rows, cols, out, work);
    qkv_free(work);
    return 0;
}

/* Whether name is module's weight: "module.weight" or "<prefix>.module.weight". */
static bool weight_of(const char *name, const char *module)
{
    size_t n = strlen(name), k = strlen(module), w = strlen(".weight");
    if (n < k + w || strcmp(name + n - w, ".weight") != 0 ||
        strncmp(name + n - w - k, module, k) != 0)
        return false;
    return n == k + w || name[n - w - k - 1] == '.';
}

/* The grouping rule (see qkv/optim.h): a 2-D weight that is not an
 * embedding table or the output head, whose rows are looked up or scored
 * one by one rather than acting as one linear map. */
static bool hidden_matrix(const qkv_param *it)
{
    return it->t->ndim == 2 && !weight_of(it->name, "wte") && !weight_of(it->name, "wpe") &&
           !weight_of(it->name, "lm_head");
}

/* The extension of a Muon optimizer (o is one, see internal.h). */
static qkv__optim_ext *ext(const qkv_optim *o) { return (qkv__optim_ext *)o; }

/* Whether parameters j and k are matrices of one shape (one Newton–Schulz batch). */
static bool same_shape(const qkv_params *p, int j, int k)
{
    const qkv_tensor *a = p->items[j].t, *b = p->items[k].t;
    return a->ndim == 2 && b->ndim == 2 && a->shape[0] == b->shape[0] && a->shape[1] == b->shape[1];
}

int qkv__muon_init(qkv_optim *o, const qkv_params *p)
{
    qkv__optim_ext *e = ext(o);
    size_t work = 0;
    if (!(e->muon = qkv_calloc(((size_t)p->count + 1) * sizeof *e->muon)) ||
        !(e->batch = qkv_calloc(((size_t)p->count + 1) * sizeof *e->batch)))
        return -1;
    for (int k = 0; k < p->count; k++) {
        const qkv_tensor *t = p->items[k].t;
        e->muon[k] = hidden_matrix(&p->items[k]);
        size_t count = 0; /* the matrices of its shape: any 2-D one, as qkv_optim_set_muon may add it */
        for (int j = 0; j < p->count; j++)
            count += same_shape(p, j, k);
        size_t need = count ? count * (t->size + ns_work(t->shape[0], t->shape[1])) : 0;
        work = need > work ? need : work;
    }
    if (work && !(e->work = qkv_alloc(work * sizeof *e->work)))
        return -1;
    return 0;
}

void qkv__muon_free(qkv_optim *o)
{
    qkv_free(ext(o)->muon);
    qkv_free(ext(o)->batch);
    qkv_free(ext(o)->work);
}

bool qkv__muon_takes(const qkv_optim *o, int k)
{
    return o->cfg.kind == QKV_OPTIM_MUON && ext(o)->muon[k];
}

/* The index of the parameter named name in p, or -1 (with a message naming fn). */
static int find(const char *fn, const qkv_params *p, const char *name)
{
    for (int k = 0; k < p->count; k++)
        if (strcmp(p->items[k].name, name) == 0)
            return k;
    return qkv_set_error("%s: no parameter is named '%s'", fn, name);
}


int qkv_optim_is_muon(const qkv_optim *o, const qkv_params *p, const char *name)
{
    const char *fn = "qkv_optim_is_muon";
    if (qkv__null(fn, "o", o) || qkv__null(fn, "p", p) || qkv__null(fn, "name", name))
        return -1;
    if (qkv__optim_made_for(fn, o, p) < 0)
        return -1;
    int k = find(fn, p, name);
    return k < 0 ? -1 : qkv__muon_takes(o, k);
}

int qkv_optim_set_muon(qkv_optim *o, const qkv_params *p, const char *prefix, bool on)
{
    const char *fn = "qkv_optim_set_muon";
    if (qkv__null(fn, "o", o) || qkv__null(fn, "p", p) || qkv__null(fn, "prefix", prefix) ||
        qkv__optim_made_for(fn, o, p) < 0)
        return -1;
    if (o->cfg.kind != QKV_OPTIM_MUON)
        return qkv_set_error("%s: o is not a Muon optimizer (kind %d)", fn, (int)o->cfg.kind);
    int matched = 0;
    for (int k = 0; k < p->count; k++)
        if (strncmp(p->items[k].name, prefix, strlen(prefix)) == 0) {
            if (on && p->items[k].t->ndim != 2)
                return qkv_set_error("%s: '%s' has %d dimensions; Muon takes matrices only", fn,
                                     p->items[k].name, p->items[k].t->ndim);
            matched++;
        }
    if (!matched)
        return qkv_set_error("%s: no parameter's name starts with prefix '%s'", fn, prefix);
    /* Checked first, set after: a refusal leaves the grouping as it was. */
    for (int k = 0; k < p->count; k++)
        if (strncmp(p->items[k].name, prefix, strlen(prefix)) == 0)
            ext(o)->muon[k] = on;
    return matched;
}

/* Nesterov momentum over n values: m ← μm + g, u = g + μm (g scaled by the
 * clipping's factor). */
static void nesterov(qkv_real *restrict m, qkv_real *restrict u, const qkv_real *restrict g,
                     size_t n, qkv_real mu, qkv_real scale)
{
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < n; i++) {
        qkv_real gi = g[i] * scale;
        m[i] = mu * m[i] + gi;
        u[i] = gi + mu * m[i];
    }
}

/* w ← w·decay − step·o over n values. */
static void apply(qkv_real *restrict w, const qkv_real *restrict o, size_t n, qkv_real decay,
                  qkv_real step)
{
#pragma omp parallel for simd schedule(static)
    for (size_t i = 0; i < n; i++)
        w[i] = w[i] * decay - step * o[i];
}

/* Whether parameter k takes a Muon update this step. */
static bool muon_now(const qkv_optim *o, const qkv_params *p, int k)
{
    return p->items[k].t->requires_grad && ext(o)->muon[k];
}

void qkv__muon_step(qkv_optim *o, qkv_params *p, double lr, qkv_real grad_scale)
{
    qkv__optim_ext *e = ext(o);
    int *batch = e->batch;
    for (int k = 0; k < p->count; k++) {
        if (!muon_now(o, p, k))
            continue;
        /* k and the later matrices of its shape, unless an earlier one took them. */
        int count = 0;
        for (int j = 0; j < p->count && count >= 0; j++)
            if (muon_now(o, p, j) && same_shape(p, j, k))
                count = j < k ? -1 : (batch[count] = j, count + 1);
        if (count <= 0)
            continue;
        const int rows = p->items[k].t->shape[0], cols = p->items[k].t->shape[1];
        const size_t n = p->items[k].t->size;
        qkv_real *u = e->work, *work = u + (size_t)count * n;
        for (int i = 0; i < count; i++)
            nesterov(o->m + p->items[batch[i]].offset, u + (size_t)i * n,
                     p->grad + p->items[batch[i]].offset, n, (qkv_real)o->cfg.momentum, grad_scale);
        qkv__newton_schulz(count, u, rows, cols, u, work);
        const double scale = RMS_MATCH * sqrt(rows > cols ? rows : cols);
        for (int i = 0; i < count; i++) {
            const int j = batch[i];
            const double lr_j = lr * o->lr_scale[j], wd = o->decay[j];
            apply(p->data + p->items[j].offset, u + (size_t)i * n, n,
                  wd > 0 ? (qkv_real)(1 - lr_j * wd) : 1, (qkv_real)(lr_j * scale));
        }
    }
}
