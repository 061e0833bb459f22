#!/bin/sh
# Build every program in examples/ against the installed qkv the way the
# README tells an outside program to (pkg-config, and an rpath so it runs
# without LD_LIBRARY_PATH), with -Wall -Wextra -pedantic and no warning, and
# run it. Each example gets one argument: a tiny checkpoint trained first by
# the installed `qkv train` (the examples that need none ignore it). One
# example is built as C++ too (g++, and clang++ when present) and must print
# what its C build printed; one is linked statically with
# `pkg-config --static` (not under the sanitizers, which cannot link -static).
# The C++ programs, examples/*.cpp, tests/install/shape_cxx.cpp (QKV_SHAPE
# with size_t and long extents, each evaluated once) and
# tests/install/stack_cxx.cpp (the header-only qkv/qkv.hpp), are built as
# C++17 with g++ and clang++ and -Wnarrowing too, and run.
#
#     tests/install/build_examples.sh PREFIX WORKDIR     (make test-install runs it)
set -eu
prefix=$1 work=$2
cc=${CC:-cc}
warn="-Wall -Wextra -pedantic -Werror"
cpp_example=examples/cross_attention_padding.c
static_example=examples/attention_sentence.c
mkdir -p "$work"
fail() { echo "examples: FAILED: $*" >&2; exit 1; }
# Run a built program (PROGRAM ARGS...), its stdout to OUT and its stderr to
# ERR (ERR may be OUT); when it fails, show ERR and fail with the program's own
# exit status, kept before anything else runs and sets $? anew.
run_built() {
    what=$1 out=$2 err=$3
    shift 3
    rc=0
    if [ "$err" = "$out" ]; then "$@" > "$out" 2>&1 || rc=$?; else "$@" > "$out" 2> "$err" || rc=$?; fi
    [ "$rc" -eq 0 ] || { cat "$err"; fail "$what exited with $rc (output in $out)"; }
}
pc() { PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config "$@" qkv; }
rpath="-Wl,-rpath,$(pc --variable=libdir)"

for i in $(seq 300); do echo "the quick brown fox jumps over the lazy dog."; done > "$work/text.txt"
"$prefix/bin/qkv" train --data "$work/text.txt" --layers 1 --heads 2 --embd 32 --block 32 --batch 8 \
    --iters 150 --eval-every 150 --eval-iters 2 --log-every 150 --threads 1 --out "$work/tiny.ckpt" \
    > "$work/train.log" 2>&1 || { cat "$work/train.log"; fail "qkv train (the examples' checkpoint)"; }

rm -f "$work/tiny.ckpt.own_lm" # examples/own_lm.c resumes a run it finds there
for ex in examples/*.c; do
    name=$(basename "$ex" .c)
    # shellcheck disable=SC2046 # pkg-config's output is a list of flags
    $cc $warn ${SAN:-} "$ex" -o "$work/$name" $(pc --cflags --libs) -lm "$rpath" ||
        fail "$ex did not build"
    run_built "$ex" "$work/$name.out" "$work/$name.err" "$work/$name" "$work/tiny.ckpt"
    echo "example $ex: built against the installed library and ran"
done

# examples/own_lm.c saved its run halfway (the loop's run): run it again, a
# second process that resumes there, and it must end on the same loss to the
# last digit printed (%.9g), with a held-out loss under 0.5, and remove the save.
run_built "examples/own_lm.c resumed" "$work/own_lm.resumed.out" "$work/own_lm.resumed.err" \
    "$work/own_lm" "$work/tiny.ckpt"
trained=$(sed -n 's/^trained: loss \([^,]*\), val .*/\1/p' "$work/own_lm.out")
resumed=$(sed -n 's/^resumed: loss \([^,]*\), val .*/\1/p' "$work/own_lm.resumed.out")
val=$(sed -n 's/^resumed: loss [^,]*, val \(.*\)/\1/p' "$work/own_lm.resumed.out")
[ -n "$trained" ] && [ "$trained" = "$resumed" ] ||
    fail "examples/own_lm.c: the resumed run ended on loss '$resumed', the uninterrupted one on '$trained'"
awk -v v="$val" 'BEGIN { exit !(v != "" && v + 0 < 0.5) }' || fail "examples/own_lm.c: held-out loss '$val', not under 0.5"
[ ! -e "$work/tiny.ckpt.own_lm" ] || fail "examples/own_lm.c: the resumed run left its save behind"
echo "example examples/own_lm.c: trained, resumed in a second process to the same loss ($resumed), val $val"

# examples/own_seq2seq.c (the loop's run) decoded new words with its cache:
# an accuracy of at least 0.9, as printed, and its exit status said the same.
acc=$(sed -n 's/^loss [^,]*, accuracy \([0-9.]*\):.*/\1/p' "$work/own_seq2seq.out")
awk -v a="$acc" 'BEGIN { exit !(a != "" && a + 0 >= 0.9) }' ||
    fail "examples/own_seq2seq.c: accuracy '$acc' on new words, not at least 0.9"
echo "example examples/own_seq2seq.c: trained, decoded new words with a cache, accuracy $acc"

name=$(basename "$cpp_example" .c)
# Under the sanitizers only g++: its runtime is the one the library was built with.
for cxx in g++ $([ -n "${SAN:-}" ] || echo clang++); do
    command -v "$cxx" > /dev/null || { echo "example $cpp_example as C++: SKIPPED: no $cxx" | tee -a "${QKV_SKIPS:-/dev/null}"; continue; }
    $cxx -x c++ -std=c++11 $warn ${SAN:-} "$cpp_example" -x none -o "$work/$name.$cxx" $(pc --cflags --libs) "$rpath" ||
        fail "$cpp_example did not build as C++ with $cxx"
    run_built "$cpp_example built with $cxx" "$work/$name.$cxx.out" "$work/$name.$cxx.out" "$work/$name.$cxx"
    cmp -s "$work/$name.out" "$work/$name.$cxx.out" || fail "$cpp_example prints something else built with $cxx"
    echo "example $cpp_example: built as C++ with $cxx, ran, printed what the C build printed"
done

for src in examples/*.cpp tests/install/shape_cxx.cpp tests/install/stack_cxx.cpp; do
    name=$(basename "$src" .cpp)
    for cxx in g++ $([ -n "${SAN:-}" ] || echo clang++); do
        command -v "$cxx" > /dev/null || { echo "C++17 $src: SKIPPED: no $cxx" | tee -a "${QKV_SKIPS:-/dev/null}"; continue; }
        # shellcheck disable=SC2046 # pkg-config's output is a list of flags
        $cxx -std=c++17 $warn -Wnarrowing ${SAN:-} "$src" -o "$work/$name.$cxx" $(pc --cflags --libs) "$rpath" ||
            fail "$src did not build as C++17 with $cxx"
        run_built "$src built with $cxx" "$work/$name.$cxx.out" "$work/$name.$cxx.out" "$work/$name.$cxx"
        echo "C++17 $src: built with $cxx against the installed library and ran"
    done
done

if [ -n "${SAN:-}" ]; then
    echo "example $static_example, static: SKIPPED under the sanitizers" | tee -a "${QKV_SKIPS:-/dev/null}"
else
    name=$(basename "$static_example" .c)
    $cc $warn "$static_example" -o "$work/$name.static" $(pc --cflags) -static $(pc --static --libs) \
        > "$work/$name.static.log" 2>&1 || { cat "$work/$name.static.log"; fail "$static_example did not link with -static \$(pkg-config --static --libs qkv)"; }
    "$work/$name.static" > "$work/$name.static.out" && cmp -s "$work/$name.out" "$work/$name.static.out" ||
        fail "$static_example linked statically did not print what the shared build printed"
    echo "example $static_example: linked with -static \$(pkg-config --static --libs qkv) ($(pc --static --libs)) and ran"
fi
