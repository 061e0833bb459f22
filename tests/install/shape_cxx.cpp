// QKV_SHAPE in C++ (tests/install/build_examples.sh builds this with g++
// and clang++, -Wall -Wextra -Wnarrowing -pedantic -Werror): extents of any
// integer type, each evaluated once, and one beyond INT_MAX refused rather
// than wrapped. Exits 1, saying which check failed, on a wrong answer.
#include <qkv/qkv.h>

#include <cstdio>
#include <cstring>
#include <vector>

static int failures = 0;

static void expect(bool ok, const char *what)
{
    if (!ok) {
        std::fprintf(stderr, "QKV_SHAPE in C++: %s\n", what);
        failures++;
    }
}

int main()
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    std::vector<qkv_real> values(6);
    size_t rows = values.size() / 3; // size_t, long, unsigned short, int
    long cols = 3;
    unsigned short one = 1;
    qkv_tensor *t = qkv_zeros(a, QKV_SHAPE(rows, cols, one));
    expect(t && t->ndim == 3 && t->shape[0] == 2 && t->shape[1] == 3 && t->shape[2] == 1,
           "size_t, long and unsigned short extents give shape (2,3,1)");
    int calls = 0;
    qkv_tensor *u = qkv_zeros(a, QKV_SHAPE(++calls, values.size()));
    expect(calls == 1, "each extent is evaluated once");
    expect(u && u->ndim == 2 && u->shape[0] == 1 && u->shape[1] == 6, "(++calls, 6) is (1,6)");
    size_t huge = static_cast<size_t>(INT_MAX) + 3;
    expect(!qkv_zeros(a, QKV_SHAPE(huge)) && std::strstr(qkv_last_error(), "is -1"),
           "an extent beyond INT_MAX is refused, not wrapped to 2");
    qkv_arena_free(&a);
    return failures ? 1 : 0;
}
