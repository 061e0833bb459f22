#!/bin/sh
# make test's last step: run every Check suite and the browser tests, each
# shown as it runs, then end with the summary, one line, and its plain form
# for CI:
#
#   make test: 52 suites, 1480 checks: 1480 passed, 0 failed; skipped: browser test of ... (no chromium)
#   tests: 1480 passed, 0 failed, 2 skipped
#
# A suite's checks are what Check says ("Checks: N, Failures: F, Errors: E");
# a suite that ends without saying so (it crashed) counts as one failed check.
# A browser test counts as a suite of one check, or as skipped. Skipped is
# every line saying SKIPPED: the suites' and browser tests' own, and those the
# steps before (install checks, ABI, fuzz, aarch64, wasm) added to $QKV_SKIPS.
#
#     tests/run_suites.sh BUILD SUITE...      (make test runs it; exits 1 when anything failed)
set -u
build=${1:?usage: run_suites.sh BUILD SUITE...}
shift
tmp=$(mktemp -d /tmp/qkv_suites_XXXXXX) || exit 1
trap 'rm -rf "$tmp"' EXIT INT TERM
: > "$tmp/skipped"
[ -n "${QKV_SKIPS:-}" ] && [ -f "$QKV_SKIPS" ] && cat "$QKV_SKIPS" >> "$tmp/skipped"
suites=0 failed_suites=0 checks=0 failed=0
QKV_TEST_BUILD=$build
# A test case that sets no timeout gets Check's 4 s, which a busy shared
# machine can take from a case of 1 s: a timeout is for a hang, so 60 s.
CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-60}
export QKV_TEST_BUILD CK_DEFAULT_TIMEOUT

# Run one step (its output shown as it comes and kept); its exit status.
run_step() {
    { "$@" 2>&1; echo $? > "$tmp/rc"; } | tee "$tmp/log"
    grep 'SKIPPED' "$tmp/log" >> "$tmp/skipped"
    return "$(cat "$tmp/rc")"
}

for t in "$@"; do
    echo "== $t"
    run_step "$t"
    rc=$?
    # Check's line: "100%: Checks: 24, Failures: 0, Errors: 0"
    counted=$(sed -n 's/.*Checks: \([0-9]*\), Failures: \([0-9]*\), Errors: \([0-9]*\).*/\1 \2 \3/p' "$tmp/log" | tail -1)
    suites=$((suites + 1))
    if [ -n "$counted" ]; then
        read -r n failures errors <<EOF
$counted
EOF
        bad=$((failures + errors))
    else
        n=1 bad=1 # it ended before Check could count
    fi
    [ "$rc" -ne 0 ] && [ "$bad" -eq 0 ] && bad=1 # a non-zero exit is a failure whatever it printed
    checks=$((checks + n)) failed=$((failed + bad))
    [ "$bad" -ne 0 ] && failed_suites=$((failed_suites + 1)) && echo "$t FAILED"
done

for b in attn_page live_page; do
    echo "== tests/browser/$b.sh"
    run_step sh "tests/browser/$b.sh" test "$build"
    rc=$?
    grep -q SKIPPED "$tmp/log" && [ "$rc" -eq 0 ] && continue
    suites=$((suites + 1)) checks=$((checks + 1))
    [ "$rc" -ne 0 ] && failed=$((failed + 1)) failed_suites=$((failed_suites + 1)) && echo "tests/browser/$b.sh FAILED"
done

# "X: SKIPPED: why" and "SKIPPED X: why" both become "X (why)".
why=$(sort -u "$tmp/skipped" | sed -e 's/^SKIPPED \([^:]*\): \(.*\)$/\1 (\2)/' \
    -e 's/^\(.*\): SKIPPED: \(.*\)$/\1 (\2)/' -e 's/^\(.*\) SKIPPED: \(.*\)$/\1 (\2)/' \
    -e 's/^SKIPPED: \(.*\)$/\1/' | awk '{ printf "%s%s", (NR > 1 ? "; " : ""), $0 }')
n_skipped=$(sort -u "$tmp/skipped" | grep -c .)
[ -n "${QKV_SKIPS:-}" ] && rm -f "$QKV_SKIPS"
echo "make test: $suites suites ($failed_suites failed), $checks checks: $((checks - failed)) passed, $failed failed; skipped: ${why:-nothing}"
echo "tests: $((checks - failed)) passed, $failed failed, $n_skipped skipped"
[ "$failed" -eq 0 ]
