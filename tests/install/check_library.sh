#!/bin/sh
# Is the installed qkv packaged like a C library? A versioned libqkv.so with
# its SONAME and symlinks; only the public API exported (every function the
# installed headers declare, no internal qkv__ name); no qkv__ name in an
# installed header; qkv_version(), QKV_VERSION_STRING and qkv.pc agreeing;
# every header compiling as C++11 (g++, clang++);
# and a program compiled with -DQKV_DOUBLE refused at
# link time by the float library, with the message naming the mismatch.
#
#     tests/install/check_library.sh PREFIX WORKDIR     (make test-install runs it)
set -eu
prefix=$1 work=$2
lib=$prefix/lib
cc=${CC:-cc}
mkdir -p "$work"
fail() { echo "install check: FAILED: $*" >&2; exit 1; }
pc() { PKG_CONFIG_PATH=$lib/pkgconfig pkg-config "$@" qkv; }

# libqkv.so -> libqkv.so.ABI (the SONAME: MAJOR, or 0.MINOR before 1.0) -> libqkv.so.MAJOR.MINOR.PATCH
version=$(pc --modversion)
major=${version%%.*}
minor=${version#*.}; minor=${minor%%.*}
if [ "$major" = 0 ]; then abi=0.$minor; else abi=$major; fi
real=$lib/libqkv.so.$version
[ -f "$real" ] && [ ! -L "$real" ] || fail "no file $real"
[ "$(readlink "$lib/libqkv.so.$abi")" = "libqkv.so.$version" ] || fail "libqkv.so.$abi is not a link to libqkv.so.$version"
[ "$(readlink "$lib/libqkv.so")" = "libqkv.so.$abi" ] || fail "libqkv.so is not a link to libqkv.so.$abi"
soname=$(readelf -d "$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "libqkv.so.$abi" ] || fail "readelf -d: SONAME '$soname', expected libqkv.so.$abi"
echo "install check: readelf -d: SONAME [$soname]; libqkv.so -> libqkv.so.$abi -> libqkv.so.$version"

# The dynamic symbol table holds the public API and nothing else.
# Not API, and left out: __odr_asan.NAME, AddressSanitizer's marker of an
# exported global (make sanitize). (An OpenMP critical(NAME) would export its
# lock, .gomp_critical_user_NAME, which GCC makes global: the library has none.)
nm -D --defined-only "$real" | awk '$3 !~ /^__odr_asan/ {print $3}' | sort -u > "$work/exported"
if grep -v '^qkv_' "$work/exported" > "$work/foreign" || grep '^qkv__' "$work/exported" >> "$work/foreign"; then
    fail "nm -D: exported beyond the public API: $(tr '\n' ' ' < "$work/foreign")"
fi
# Every qkv_name( outside comments (usage blocks call functions too) in the headers.
awk '{
    out = ""
    while ($0 != "") {
        if (in_comment) {
            i = index($0, "*/"); if (!i) break
            $0 = substr($0, i + 2); in_comment = 0
        } else {
            i = index($0, "/*"); j = index($0, "//")
            if (j && (!i || j < i)) { out = out substr($0, 1, j - 1); break }
            if (!i) { out = out $0; break }
            out = out substr($0, 1, i - 1); $0 = substr($0, i + 2); in_comment = 1
        }
    }
    print out
}' "$prefix"/include/qkv/*.h | grep -o 'qkv_[a-z0-9_]*[[:space:]]*(' | tr -d ' \t(' | sort -u > "$work/declared"
[ -s "$work/declared" ] || fail "found no function declared in $prefix/include/qkv"
comm -23 "$work/declared" "$work/exported" > "$work/missing"
[ ! -s "$work/missing" ] || fail "declared in include/qkv but not exported by libqkv.so (a header without QKV_BEGIN_DECLS?): $(tr '\n' ' ' < "$work/missing")"
if grep -l 'qkv__' "$prefix"/include/qkv/*.h > "$work/internal_names"; then
    fail "an internal qkv__ name in an installed header: $(tr '\n' ' ' < "$work/internal_names")"
fi
echo "install check: nm -D: $(wc -l < "$work/exported") symbols, all qkv_, no qkv__, every one of the $(wc -l < "$work/declared") functions the headers declare"

# The precision guard: the same program links as float and not as double.
# It prints what it sees: the element size, the headers' and the library's version.
printf '#include <qkv/qkv.h>\n#include <stdio.h>\nint main(void) { printf("%%d %%s %%s\\n", (int)sizeof(qkv_real), QKV_VERSION_STRING, qkv_version()); return 0; }\n' > "$work/precision.c"
$cc -Wall -Wextra -pedantic -Werror ${SAN:-} $(pc --cflags) "$work/precision.c" -o "$work/precision" $(pc --libs) \
    -Wl,-rpath,"$(pc --variable=libdir)" || fail "the float program did not build"
seen=$("$work/precision") || fail "the float program did not run"
[ "$seen" = "4 $version $version" ] || fail "the float program saw '$seen', expected '4 $version $version' (sizeof(qkv_real), QKV_VERSION_STRING, qkv_version())"
if $cc -DQKV_DOUBLE ${SAN:-} $(pc --cflags) "$work/precision.c" -o "$work/precision64" $(pc --libs) 2> "$work/precision64.err"; then
    fail "a -DQKV_DOUBLE program linked against the float library"
fi
grep -q "undefined reference to .qkv_library_built_with_QKV_DOUBLE" "$work/precision64.err" ||
    fail "a -DQKV_DOUBLE program failed to link, but not for its precision: $(cat "$work/precision64.err")"
echo "install check: qkv_version() = QKV_VERSION_STRING = qkv.pc's $version; a -DQKV_DOUBLE program against the float library: $(grep -o "undefined reference to .qkv_library_built_with_QKV_DOUBLE." "$work/precision64.err" | head -1)"

# The ABI guard: the same program compiled against the headers of the next
# ABI version (the next minor before 1.0, else the next major) does not link
# (it needs qkv_library_abi_NEXT), and QKV_CHECK_VERSION() accepts the
# library it was built with.
mkdir -p "$work/next/qkv"
cp "$prefix"/include/qkv/*.h "$work/next/qkv/"
if [ "$major" = 0 ]; then
    next=0.$((minor + 1)) symbol=qkv_library_abi_0_$((minor + 1))
    sed -i "s/^#define QKV_VERSION_MINOR .*/#define QKV_VERSION_MINOR $((minor + 1))/" "$work/next/qkv/version.h"
else
    next=$((major + 1)).0 symbol=qkv_library_abi_$((major + 1))
    sed -i "s/^#define QKV_VERSION_MAJOR .*/#define QKV_VERSION_MAJOR $((major + 1))/" "$work/next/qkv/version.h"
fi
if $cc ${SAN:-} -I"$work/next" $(pc --cflags) "$work/precision.c" -o "$work/next/program" $(pc --libs) 2> "$work/next.err"; then
    fail "a program built with qkv $next headers linked against libqkv $version"
fi
grep -q "undefined reference to .$symbol" "$work/next.err" ||
    fail "a program with qkv $next headers failed to link, but not for its version: $(cat "$work/next.err")"
printf '#include <qkv/qkv.h>\n#include <stdio.h>\nint main(void) { if (QKV_CHECK_VERSION() < 0) { puts(qkv_last_error()); return 1; } return 0; }\n' > "$work/check_version.c"
$cc -Wall -Wextra -pedantic -Werror ${SAN:-} $(pc --cflags) "$work/check_version.c" -o "$work/check_version" $(pc --libs) \
    -Wl,-rpath,"$(pc --variable=libdir)" && "$work/check_version" || fail "QKV_CHECK_VERSION() refused the library it was built with"
echo "install check: a program with qkv $next headers against libqkv $version: $(grep -o "undefined reference to .$symbol." "$work/next.err" | head -1); QKV_CHECK_VERSION() passes"

# Every installed header, included together into a C++ file, compiles as C++11.
for h in "$prefix"/include/qkv/*.h; do printf '#include <qkv/%s>\n' "$(basename "$h")"; done > "$work/all_headers.cc"
for cxx in g++ clang++; do
    command -v "$cxx" > /dev/null || { echo "install check: headers as C++ with $cxx: SKIPPED: no $cxx" | tee -a "${QKV_SKIPS:-/dev/null}"; continue; }
    $cxx -x c++ -std=c++11 -Wall -Wextra -pedantic -Werror $(pc --cflags) -fsyntax-only "$work/all_headers.cc" ||
        fail "the installed headers do not compile as C++11 with $cxx"
    echo "install check: all $(wc -l < "$work/all_headers.cc") installed headers compile as C++11 with $cxx"
done

# 0.x's qkv_arena_free(a) does not compile under 1.x (qkv/arena.h checks the
# argument's type); &a and NULL do, and the program runs.
printf '#include <qkv/qkv.h>\nint main(void) { qkv_arena *a = qkv_arena_new(64); qkv_arena_free(&a); qkv_arena_free(NULL); return a != NULL; }\n' > "$work/arena_free.c"
$cc -std=c11 -Wall -Wextra -pedantic -Werror ${SAN:-} $(pc --cflags) "$work/arena_free.c" -o "$work/arena_free" $(pc --libs) \
    -Wl,-rpath,"$(pc --variable=libdir)" && "$work/arena_free" || fail "qkv_arena_free(&a) and qkv_arena_free(NULL) did not build and run"
sed 's/qkv_arena_free(&a)/qkv_arena_free(a)/' "$work/arena_free.c" > "$work/arena_free_0x.c"
if $cc -std=c11 ${SAN:-} $(pc --cflags) -c "$work/arena_free_0x.c" -o "$work/arena_free_0x.o" 2> "$work/arena_free_0x.err"; then
    fail "0.x's qkv_arena_free(a) compiled (it must be an error: it frees through the wrong pointer)"
fi
grep -q "_Generic" "$work/arena_free_0x.err" ||
    fail "qkv_arena_free(a) failed to compile, but not for its argument: $(cat "$work/arena_free_0x.err")"
echo "install check: 0.x's qkv_arena_free(a) does not compile: $(grep -m1 -o "error: .*" "$work/arena_free_0x.err")"
