#!/bin/sh
# The float-vs-double tour (tests/support/ops_tour.c) must call every op that
# include/qkv/ops.h declares: prints the ones it skips and fails, so an op
# added later is compared between the two builds from its first day.
#   sh tests/tour_coverage.sh [OPS_HEADER] [TOUR_SOURCE]
ops=${1:-include/qkv/ops.h}
tour=${2:-tests/support/ops_tour.c}
declared=$(sed -n 's/^qkv_tensor \*\(qkv_[a-z0-9_]*\)(.*/\1/p' "$ops" | sort -u)
[ -n "$declared" ] || { echo "tour coverage: FAILED: no ops declared in $ops"; exit 1; }
missing=""
for op in $declared; do
    grep -q "$op(" "$tour" || missing="$missing $op"
done
[ -z "$missing" ] || { echo "tour coverage: FAILED: $tour never calls:$missing"; exit 1; }
echo "tour coverage: $tour calls all $(echo "$declared" | wc -l) ops of $ops"
