#!/bin/sh
# The ABI check: libqkv.so against the committed baseline (abi/libqkv.abi,
# written by `make abi-baseline` with libabigail's abidw). Under one SONAME the
# library may only grow: new functions and variables are fine; a removed one,
# or one whose types changed (a struct that grew a field, a parameter of
# another type), fails unless the ABI version (the major version, or before
# 1.0 the minor one; the SONAME says it) moved — and a new ABI version needs
# a new baseline, written and committed with its CHANGELOG entry.
#
#   tests/install/check_abi.sh LIBQKV_SO BASELINE HEADERS_DIR
set -u
lib="$1" baseline="$2" headers="$3"
if ! command -v abidiff > /dev/null; then
    echo "abi check: SKIPPED: no abidiff (apt-get install abigail-tools)" | tee -a "${QKV_SKIPS:-/dev/null}"
    exit 0
fi
fail() { echo "abi check: FAILED: $*"; exit 1; }
[ -f "$baseline" ] || fail "no baseline $baseline (make abi-baseline writes it)"
base_soname=$(sed -n "s/.*<abi-corpus [^>]*soname='\([^']*\)'.*/\1/p" "$baseline" | head -1)
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = "$base_soname" ] ||
    fail "the library is $soname but the baseline is $base_soname: a new ABI version needs a new baseline (make abi-baseline, commit it with the CHANGELOG)"
report=$(abidiff --headers-dir2 "$headers" "$baseline" "$lib"); rc=$?
# abidiff's status is a bit field: 1 error, 2 usage error, 4 ABI change, 8 incompatible change.
[ $((rc & 3)) -eq 0 ] || fail "abidiff could not compare (status $rc): $report"
# "Functions changes summary: 0 Removed, 1 Changed (...), 2 Added functions"
removed_changed=$(printf '%s\n' "$report" |
    sed -n 's/.*changes summary: \([0-9]*\) Removed[^,]*, \([0-9]*\) Changed.*/\1 \2/p' |
    awk '{ n += $1 + $2 } END { print n + 0 }')
added=$(printf '%s\n' "$report" | sed -n 's/.*, \([0-9]*\) Added.*/\1/p' | awk '{ n += $1 } END { print n + 0 }')
if [ $((rc & 8)) -ne 0 ] || [ "$removed_changed" -ne 0 ]; then
    printf '%s\n' "$report"
    fail "an incompatible change under $soname ($removed_changed functions or variables removed or changed): move the ABI version (include/qkv/version.h: the major, before 1.0 the minor) and write a new baseline, or keep the old ABI"
fi
echo "abi check: $soname against abi/$(basename "$baseline"): compatible ($added functions or variables added, none removed or changed)"
