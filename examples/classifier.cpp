// A classifier in plain C++17 (no designated initializers), built against
// an installed qkv:
//
//     c++ -std=c++17 classifier.cpp $(pkg-config --cflags --libs qkv) -o classifier
//
// Points in the square [-1.5, 1.5]², labelled 1 inside the unit circle and 0
// outside, held in std::vectors; a two-layer perceptron (2 -> 16 -> 2) learns
// the circle with AdamW. Sizes are size_t, as C++ containers give them:
// QKV_SHAPE takes them as they are.
#include <qkv/qkv.h>

#include <cstdio>
#include <vector>

namespace {

// The data: n points drawn uniformly, with their labels.
struct Points {
    std::vector<qkv_real> xy; // n rows of (x, y)
    std::vector<int32_t> label;
};

Points make_points(size_t n, qkv_rng &rng)
{
    Points p;
    for (size_t i = 0; i < n; i++) {
        double x = 3 * qkv_rng_uniform(&rng) - 1.5, y = 3 * qkv_rng_uniform(&rng) - 1.5;
        p.xy.push_back(static_cast<qkv_real>(x));
        p.xy.push_back(static_cast<qkv_real>(y));
        p.label.push_back(x * x + y * y < 1 ? 1 : 0);
    }
    return p;
}

// The model's parameters, declared by name.
struct Model {
    qkv_tensor *w1, *b1, *w2, *b2;
};

Model declare(qkv_params *params, size_t hidden)
{
    Model m;
    m.w1 = qkv_params_add(params, "fc1.weight", QKV_SHAPE(hidden, 2), QKV_INIT_NORMAL, 0.5);
    m.b1 = qkv_params_add(params, "fc1.bias", QKV_SHAPE(hidden), QKV_INIT_ZEROS, 0);
    m.w2 = qkv_params_add(params, "fc2.weight", QKV_SHAPE(2, hidden), QKV_INIT_NORMAL, 0.5);
    m.b2 = qkv_params_add(params, "fc2.bias", QKV_SHAPE(2), QKV_INIT_ZEROS, 0);
    return m;
}

// Logits (n, 2) of the points: gelu(x·w1ᵀ + b1)·w2ᵀ + b2.
qkv_tensor *logits(qkv_arena *a, const Model &m, qkv_tensor *x)
{
    qkv_tensor *h = qkv_gelu(a, qkv_add(a, qkv_matmul(a, x, m.w1, false, true), m.b1));
    return qkv_add(a, qkv_matmul(a, h, m.w2, false, true), m.b2);
}

// The share of points whose larger logit is their label's.
double accuracy(const qkv_tensor *out, const std::vector<int32_t> &label)
{
    size_t right = 0;
    for (size_t i = 0; i < label.size(); i++) {
        int guess = out->data[2 * i + 1] > out->data[2 * i] ? 1 : 0;
        right += guess == label[i];
    }
    return static_cast<double>(right) / static_cast<double>(label.size());
}

int fail()
{
    std::fprintf(stderr, "qkv: %s\n", qkv_last_error());
    return 1;
}

} // namespace

int main()
{
    qkv_rng rng;
    qkv_rng_seed(&rng, 7);
    const size_t n = 256, hidden = 16;
    Points train = make_points(n, rng), test = make_points(n, rng);

    qkv_params *params = qkv_params_new();
    Model m = declare(params, hidden);
    if (qkv_params_alloc(params, &rng) < 0)
        return fail();
    qkv_optim_config cfg = qkv_adamw_defaults();
    cfg.weight_decay = 0;
    qkv_optim *opt = qkv_optim_new(params, &cfg);
    qkv_arena *step = qkv_arena_new(1 << 20);
    if (!opt || !step)
        return fail();

    for (int it = 0; it <= 300; it++) {
        qkv_arena_reset(step);
        qkv_params_zero_grad(params);
        qkv_tensor *x = qkv_from_array(step, QKV_SHAPE(n, 2), train.xy.data());
        qkv_tensor *loss = qkv_cross_entropy(step, logits(step, m, x), train.label.data(), -1);
        if (!loss || qkv_backward(step, loss) < 0 || qkv_optim_step(opt, params, 2e-2) < 0)
            return fail();
        if (it % 100 == 0)
            std::printf("step %3d: loss %.4f\n", it, static_cast<double>(loss->data[0]));
    }

    // Evaluation: no graph, new points.
    qkv_arena_reset(step);
    bool was = qkv_set_grad_enabled(false);
    qkv_tensor *out = logits(step, m, qkv_from_array(step, QKV_SHAPE(n, 2), test.xy.data()));
    qkv_set_grad_enabled(was);
    if (!out)
        return fail();
    std::printf("accuracy on %zu new points: %.3f\n", n, accuracy(out, test.label));

    qkv_arena_free(&step);
    qkv_optim_free(opt);
    qkv_params_free(&params);
    return 0;
}
