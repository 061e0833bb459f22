// qkv/qkv.hpp, built as C++17 against the installed library: a stack made
// with named setters learns a repeating sequence (the loss must fall below a
// tenth of its start), generates it back greedily with a key/value cache,
// and a bad config throws qkv::error naming the function and the field.
#include <qkv/qkv.hpp>

#include <cstdio>
#include <cstring>

int main()
{
    const int B = 4, T = 16, V = 5;
    std::vector<int32_t> x(B * T), y(B * T);
    for (int i = 0; i < B * T; i++) // 0 1 2 3 4 0 1 ... in every row, from offsets
        x[i] = (i % T + i / T) % V, y[i] = (x[i] + 1) % V;
    qkv::params p;
    qkv::stack lm(p, "lm", qkv::stack_config().vocab(V).context(T).embd(16).heads(2).layers(1));
    p.alloc(3);
    qkv_optim_config oc = qkv_adamw_defaults();
    std::unique_ptr<qkv_optim, void (*)(qkv_optim *)> opt(qkv::check(qkv_optim_new(p.get(), &oc)),
                                                          qkv_optim_free);
    qkv::arena step;
    double first = 0, last = 0;
    for (int it = 0; it < 100; it++) {
        qkv_arena_reset(step.get());
        qkv_params_zero_grad(p.get());
        qkv_tensor *loss = lm.loss(step.ctx(true), x.data(), y.data(), B, T);
        qkv::check(qkv_backward(step.get(), loss));
        qkv::check(qkv_optim_step(opt.get(), p.get(), 1e-2));
        last = loss->data[0];
        first = it == 0 ? last : first;
    }
    std::vector<int32_t> out = lm.generate({2, 3}, 1, 8);
    std::printf("loss %.3f -> %.4f; after 2 3:", first, last);
    bool right = true;
    for (size_t i = 0; i < out.size(); i++) {
        std::printf(" %d", out[i]);
        right = right && out[i] == static_cast<int32_t>((4 + i) % V);
    }
    std::printf("\n");
    try {
        qkv::stack bad(p, "bad", qkv::stack_config().vocab(V).context(T).embd(16).heads(3));
        return std::fprintf(stderr, "a width of 16 over 3 heads did not throw\n"), 1;
    } catch (const qkv::error &e) {
        if (!std::strstr(e.what(), "qkv_stack_init") || !std::strstr(e.what(), "n_head 3"))
            return std::fprintf(stderr, "unexpected message: %s\n", e.what()), 1;
    }
    return !(last < first / 10 && right);
}
