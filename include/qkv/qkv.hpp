// qkv/qkv.hpp — optional C++17 handles over the C library, header-only: each
// handle frees what it owns (RAII), a failing call throws qkv::error with
// qkv_last_error()'s message instead of returning NULL or -1, and the stack's
// configs are filled by named setters, so a struct that gains a field never
// shifts a positional initializer.
//
//     qkv::params p;
//     qkv::stack lm(p, "lm", qkv::stack_config().vocab(65).context(32).embd(32).heads(2).layers(2));
//     p.alloc(1337);
//     qkv::arena step;
//     qkv_ctx ctx = step.ctx(true);
//     qkv_tensor *loss = lm.loss(ctx, x, y, B, T);            // throws qkv::error on bad input
//     std::vector<int32_t> out = lm.generate(prompt, 1, 20);   // greedy, with a key/value cache
//
// Everything else is the C API, which these handles convert to (get()).
#ifndef QKV_QKV_HPP
#define QKV_QKV_HPP

#include "qkv/qkv.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace qkv {

// What every failing call throws: the library's message ("qkv_stack_init: ...").
struct error : std::runtime_error {
    error() : std::runtime_error(qkv_last_error()) {}
};

// p, or throws qkv::error when the C call gave NULL.
template <class T> T *check(T *p)
{
    if (!p)
        throw error();
    return p;
}

// rc, or throws qkv::error when the C call gave -1.
inline int check(int rc)
{
    if (rc < 0)
        throw error();
    return rc;
}

// A step arena (qkv/arena.h), freed with the handle.
class arena {
  public:
    explicit arena(size_t bytes = 1 << 22) : a_(check(qkv_arena_new(bytes))) {}
    ~arena() { qkv_arena_free(&a_); }
    arena(const arena &) = delete;
    arena &operator=(const arena &) = delete;
    qkv_arena *get() const { return a_; }
    // A forward context in this arena; in training (train) dropout draws from rng.
    qkv_ctx ctx(bool train = false, qkv_rng *rng = nullptr) const
    {
        qkv_ctx c = {};
        c.arena = a_, c.train = train, c.rng = rng;
        return c;
    }

  private:
    qkv_arena *a_;
};

// A parameter list (qkv/params.h), freed with the handle.
class params {
  public:
    params() : p_(check(qkv_params_new())) {}
    ~params() { qkv_params_free(&p_); }
    params(const params &) = delete;
    params &operator=(const params &) = delete;
    qkv_params *get() const { return p_; }
    // Give every declared parameter its values, drawn from seed.
    void alloc(uint64_t seed)
    {
        qkv_rng rng;
        qkv_rng_seed(&rng, seed);
        check(qkv_params_alloc(p_, &rng));
    }

  private:
    qkv_params *p_;
};

// qkv_stack_config with named setters; every field not set is 0, its default.
struct stack_config : qkv_stack_config {
    stack_config() : qkv_stack_config() {}
    stack_config &vocab(int v) { return vocab_size = v, *this; }
    stack_config &context(int t) { return block_size = t, *this; }
    stack_config &embd(int c) { return block.n_embd = c, *this; }
    stack_config &heads(int h) { return block.n_head = h, *this; }
    stack_config &layers(int l) { return block.n_layer = l, *this; }
    stack_config &dropout(qkv_real p) { return block.dropout = p, *this; }
    stack_config &options(const qkv_model_options &o) { return block.opts = o, *this; }
};

// A decoder-only stack (qkv/stack.h) declared into a params list that
// outlives it; its values exist once that list's alloc has run.
class stack {
  public:
    stack(params &p, const std::string &prefix, const stack_config &cfg)
    {
        check(qkv_stack_init(&s_, p.get(), prefix.c_str(), &cfg));
    }
    ~stack() { qkv_stack_free(&s_); }
    stack(const stack &) = delete;
    stack &operator=(const stack &) = delete;
    const qkv_stack *get() const { return &s_; }
    // Logits (B,T,V) of ids (B,T).
    qkv_tensor *forward(const qkv_ctx &ctx, const int32_t *ids, int B, int T) const
    {
        return check(qkv_stack_forward(&s_, &ctx, ids, B, T));
    }
    // The mean next-token cross-entropy against targets (B,T).
    qkv_tensor *loss(const qkv_ctx &ctx, const int32_t *ids, const int32_t *targets, int B,
                     int T) const
    {
        return check(qkv_stack_loss(&s_, &ctx, ids, targets, B, T));
    }
    // n_new tokens after each of the B prompts (B, n_prompt), drawn under opts
    // (greedy by default) with a key/value cache: (B, n_new).
    std::vector<int32_t> generate(const std::vector<int32_t> &prompts, int B, int n_new,
                                  const qkv_sample_opts &opts = qkv_sample_opts(),
                                  qkv_rng *rng = nullptr, int32_t stop = -1) const
    {
        if (B < 1 || n_new < 1 || prompts.size() % static_cast<size_t>(B))
            throw std::invalid_argument("qkv::stack::generate: B rows of prompts, n_new >= 1");
        std::unique_ptr<qkv_lm, void (*)(qkv_lm *)> lm(check(qkv_stack_lm_new(&s_, true)),
                                                       qkv_stack_lm_free);
        std::vector<int32_t> out(static_cast<size_t>(B) * static_cast<size_t>(n_new));
        int n_prompt = static_cast<int>(prompts.size() / static_cast<size_t>(B));
        check(qkv_generate_batch(lm.get(), B, prompts.data(), n_prompt, n_new, &opts, rng, stop,
                                 out.data()));
        return out;
    }

  private:
    qkv_stack s_ = {};
};

} // namespace qkv
#endif
