#!/bin/sh
# Is the double library installed beside the float one, and usable? A
# versioned libqkv64.so with its SONAME and links; qkv64.pc giving
# -DQKV_DOUBLE and -lqkv64; a program built through it sees 8-byte
# qkv_real; a float program against libqkv64 is refused at link time by the
# precision guard; and a gradient check built with qkv64 passes a right
# custom backward at double's tolerance (1e-6), fails one off by 1e-4 that
# float's tolerance lets through, and fails one that assigns (=) its gradient.
#
#     tests/install/check_double.sh PREFIX WORKDIR     (make test-install runs it)
set -eu
prefix=$1 work=$2
lib=$prefix/lib
cc=${CC:-cc}
mkdir -p "$work"
fail() { echo "install check (double): FAILED: $*" >&2; exit 1; }
pc() { PKG_CONFIG_PATH=$lib/pkgconfig pkg-config "$@" qkv64; }

version=$(pc --modversion) || fail "no qkv64.pc in $lib/pkgconfig"
major=${version%%.*}
minor=${version#*.}; minor=${minor%%.*}
if [ "$major" = 0 ]; then abi=0.$minor; else abi=$major; fi
real=$lib/libqkv64.so.$version
[ -f "$real" ] && [ ! -L "$real" ] || fail "no file $real"
[ -f "$lib/libqkv64.a" ] || fail "no $lib/libqkv64.a"
[ "$(readlink "$lib/libqkv64.so.$abi")" = "libqkv64.so.$version" ] || fail "libqkv64.so.$abi is not a link to libqkv64.so.$version"
[ "$(readlink "$lib/libqkv64.so")" = "libqkv64.so.$abi" ] || fail "libqkv64.so is not a link to libqkv64.so.$abi"
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libqkv64.so.$abi" ] || fail "readelf -d: SONAME '$soname', expected libqkv64.so.$abi"
case " $(pc --cflags) " in *" -DQKV_DOUBLE "*) ;; *) fail "pkg-config --cflags qkv64 lacks -DQKV_DOUBLE: $(pc --cflags)" ;; esac
echo "install check (double): SONAME [$soname]; libqkv64.so -> libqkv64.so.$abi -> libqkv64.so.$version; qkv64.pc: $(pc --cflags) $(pc --libs)"

# The same program as float's precision check: 8 bytes a value here.
printf '#include <qkv/qkv.h>\n#include <stdio.h>\nint main(void) { printf("%%d %%s\\n", (int)sizeof(qkv_real), qkv_version()); return 0; }\n' > "$work/precision.c"
$cc -Wall -Wextra -pedantic -Werror ${SAN:-} $(pc --cflags) "$work/precision.c" -o "$work/precision" $(pc --libs) \
    -Wl,-rpath,"$(pc --variable=libdir)" || fail "the double program did not build"
seen=$("$work/precision") || fail "the double program did not run"
[ "$seen" = "8 $version" ] || fail "the double program saw '$seen', expected '8 $version'"
if $cc ${SAN:-} -I"$prefix/include" "$work/precision.c" -o "$work/precision32" -L"$lib" -lqkv64 2> "$work/precision32.err"; then
    fail "a float program (no -DQKV_DOUBLE) linked against libqkv64"
fi
grep -q "undefined reference to .qkv_library_built_without_QKV_DOUBLE" "$work/precision32.err" ||
    fail "a float program failed to link against libqkv64, but not for its precision: $(cat "$work/precision32.err")"
echo "install check (double): sizeof(qkv_real) = 8; a float program against libqkv64: $(grep -o "undefined reference to .qkv_library_built_without_QKV_DOUBLE." "$work/precision32.err" | head -1)"

# A custom op checked with qkv_gradcheck in double: x·x·c elementwise, its
# backward 2·x·c·g, or off by (1 + 1e-4), or assigning.
cat > "$work/gradcheck.c" <<'PROGRAM'
#include <qkv/qkv.h>
#include <stdio.h>
#include <string.h>

static int forward(qkv_tensor *out, qkv_tensor *const *in, int n, void *user)
{
    (void)n, (void)user;
    for (size_t i = 0; i < out->size; i++)
        out->data[i] = 1.5 * in[0]->data[i] * in[0]->data[i];
    return 0;
}

/* user: "right", "off" (a factor 1 + 1e-4 too much) or "assign" (= for +=). */
static void backward(const qkv_tensor *out, const qkv_real *g, qkv_tensor *const *in,
                     qkv_real *const *grad_in, int n, void *user)
{
    (void)n;
    double k = strcmp(user, "off") == 0 ? 1 + 1e-4 : 1;
    for (size_t i = 0; i < out->size; i++) {
        qkv_real d = k * 3 * in[0]->data[i] * g[i];
        grad_in[0][i] = strcmp(user, "assign") == 0 ? d : grad_in[0][i] + d;
    }
}

static const qkv_custom_op square = {"square", forward, backward};

static qkv_tensor *f(qkv_arena *a, qkv_tensor **in, void *user)
{
    return qkv_custom(a, &square, in, 1, in[0]->ndim, in[0]->shape, user);
}

int main(void)
{
    qkv_arena *a = qkv_arena_new(1 << 16);
    qkv_rng rng;
    qkv_rng_seed(&rng, 1);
    qkv_tensor *x = qkv_randn(a, QKV_SHAPE(3, 4), 1, &rng);
    qkv_set_requires_grad(x, true);
    const char *kinds[3] = {"right", "off", "assign"};
    for (int k = 0; k < 3; k++)
        printf("%s %s %.3g\n", kinds[k],
               qkv_gradcheck(f, &x, 1, (void *)kinds[k]) <= QKV_GRADCHECK_TOL ? "passes" : "fails",
               qkv_gradcheck(f, &x, 1, (void *)kinds[k]));
    qkv_arena_free(&a);
    return 0;
}
PROGRAM
$cc -Wall -Wextra -pedantic -Werror ${SAN:-} $(pc --cflags) "$work/gradcheck.c" -o "$work/gradcheck" $(pc --libs) \
    -Wl,-rpath,"$(pc --variable=libdir)" || fail "the gradient-check program did not build against qkv64"
"$work/gradcheck" > "$work/gradcheck.out" || fail "the gradient-check program did not run"
verdicts=$(cut -d' ' -f1,2 "$work/gradcheck.out" | paste -sd' ' -)
[ "$verdicts" = "right passes off fails assign fails" ] ||
    fail "qkv_gradcheck in double: '$verdicts', expected 'right passes off fails assign fails' ($(paste -sd' ' "$work/gradcheck.out"))"
echo "install check (double): qkv_gradcheck through qkv64, relative errors: $(paste -sd' ' "$work/gradcheck.out" | sed 's/ passes//; s/ fails//g')"
