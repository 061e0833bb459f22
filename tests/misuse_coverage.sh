#!/bin/sh
# Every function declared in include/qkv/*.h must have a case in one of the
# misuse suite's case files, tests/misuse/*.c (a line MISUSE(name, label), or
# NAME_CASES(short_name, ...) for a family of cases): prints the ones missing
# and fails, so a function added later without a misuse case is caught.
#   sh tests/misuse_coverage.sh [INCLUDE_DIR] [CASES_DIR]
inc=${1:-include/qkv}
cases=${2:-tests/misuse}
tmp=${TMPDIR:-/tmp}/qkv_misuse_cov.$$
trap 'rm -f "$tmp".*' EXIT
# A declaration starts in column 0 with its return type; the first
# "qkv_name(" on that line is the function (typedefs and macros excluded).
awk '/^[A-Za-z_]/ && !/^(typedef|#)/ && match($0, /qkv_[a-z0-9_]+\(/) {
         print substr($0, RSTART, RLENGTH - 1) }' "$inc"/*.h | sort -u > "$tmp.declared"
# No case files at all must fail as such, not as every function missing a case.
ls "$cases"/*.c > /dev/null 2>&1 || { echo "misuse coverage: FAILED: no case files in $cases"; exit 1; }
# MISUSE(qkv_name, label), or a family of cases NAME_CASES(name, ...) for qkv_name.
sed -n -e 's/^MISUSE(\(qkv_[a-z0-9_]*\),.*/\1/p' -e 's/^[A-Z]*_CASES(\([a-z0-9_]*\).*/qkv_\1/p' \
    "$cases"/*.c | sort -u > "$tmp.covered"
missing=$(comm -23 "$tmp.declared" "$tmp.covered")
stale=$(comm -13 "$tmp.declared" "$tmp.covered")
n=$(wc -l < "$tmp.declared")
[ -z "$stale" ] || echo "misuse coverage: FAILED: cases for functions no header declares:" $stale
[ -z "$missing" ] || echo "misuse coverage: FAILED: no misuse case in $cases/*.c for:" $missing
[ -z "$stale$missing" ] || exit 1
echo "misuse coverage: all $n public functions in $inc/*.h have misuse cases"
