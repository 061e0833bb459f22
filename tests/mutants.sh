#!/bin/sh
# make mutants: inject each named bug of tests/mutants.list, one at a time,
# into a throwaway copy of the tree, and check that a test suite fails.
# Prints one line per mutant: caught (and by which suite), SURVIVED, NOT FOUND
# (its original text is no longer in the file: fix the list), AMBIGUOUS (the
# text occurs more than once) or BROKEN (the mutated tree does not compile);
# exits 1 unless every mutant is caught. The working tree is never edited.
#
#   sh tests/mutants.sh                     every mutant
#   MUTANTS="relu2-not-squared ..." sh tests/mutants.sh   only these
#   MUTANTS_SUITES="test_option_mistakes" sh tests/mutants.sh   only these suites
#                                           (and no make test for a survivor)
#   MUTANTS_DRY=1 sh tests/mutants.sh       only check that every mutant applies
#                                           (its text found once), build nothing
#   MUTANTS_AARCH64=1 MUTANTS_SUITES=test_gemm_bf16 sh tests/mutants.sh
#                                           the suites cross-built and run under
#                                           qemu (make test-aarch64 with only them):
#                                           for mutants of aarch64-only code
#
# Speed: a mutant rebuilds the library and runs the suites of QUICK in order,
# stopping at the first that fails; one that survives them all gets the whole
# `make -j2 test` before it is called SURVIVED. Either way a mutant counts as
# caught only when one of the real suites fails.
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIST=${MUTANTS_LIST:-$ROOT/tests/mutants.list}
JOBS=${JOBS:-2}
# The suites that check numbers, cheapest and most telling first, then the
# op profile and the misuse cases (the public API's argument checks); none needs
# the program or the dump programs. (test_gpt, minutes on a busy machine, is
# left to the make test of a survivor; test_gemm_bf16, last, is there for the
# bf16 mutants, test_mixed_precision and test_checkpoint for mixed precision's.)
# Check's timeouts are 10 times longer than in make test: a busy machine must
# not pass for a caught mutant.
QUICK=${MUTANTS_SUITES:-"test_definitions grad_definitions test_option_mistakes test_attention_core test_attention_backward test_tensor_memory test_autograd
       test_nn_attention test_nn_modules grad_activation grad_elementwise grad_fused grad_shape grad_softmax_mask
       grad_options grad_nn grad_seq2seq test_optim test_muon test_seq2seq test_generate test_training
       test_profile test_misuse test_gemm_bf16 grad_more_ops grad_gradcheck_assign test_inspect
        test_fork test_bpe test_bpe_file test_bpe_gpt test_token_labels test_mixed_precision test_checkpoint
        test_stack grad_stack test_light test_eval_split test_bpe_gpt2 test_s2s_stack grad_s2s_stack test_kernel_tails"}

start=$(date +%s)
WORK=$(mktemp -d /tmp/qkv-mutants.XXXXXX) || exit 1
trap 'rm -rf "$WORK"' EXIT INT TERM

# The tree as it is now (tracked and new files, edits included), and the
# objects already built, so the first build is incremental.
(cd "$ROOT" && git ls-files -z -co --exclude-standard |
    xargs -0 sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' _ |
    tar --null -T - -cf -) | (cd "$WORK" && tar xf -) || { echo "mutants: cannot copy the tree"; exit 1; }
mkdir -p "$WORK/build"
for d in obj obj64 aarch64; do [ -d "$ROOT/build/$d" ] && cp -a "$ROOT/build/$d" "$WORK/build/"; done

# Build suite $1 in the copy and run it: 0 passed, 1 failed, 2 did not build.
run_suite() {
    if [ -n "${MUTANTS_AARCH64:-}" ]; then # failed: a Check failure in the log; else it did not build
        make -C "$WORK" -s test-aarch64 AARCH64_SUITES="$1" AARCH64_RUN="$1" > "$WORK/suite.log" 2>&1 && return 0
        grep -qE '^[^:]*:[0-9]+:[FE]:' "$WORK/suite.log" && return 1
        cp "$WORK/suite.log" "$WORK/build.log" && return 2
    fi
    # the program too: the CLI suites run it (a mutant of cli/ shows there)
    make -C "$WORK" -s -j"$JOBS" "build/tests/$1" build/qkv > "$WORK/build.log" 2>&1 || return 2
    (cd "$WORK" && QKV_TEST_BUILD=build CK_TIMEOUT_MULTIPLIER=10 "build/tests/$1") > "$WORK/suite.log" 2>&1 || return 1
    return 0
}

# The tests that failed in the last suite run, from Check's "file:line:F:suite:test:..." lines.
failed_tests() {
    grep -E '^[^:]*:[0-9]+:[FE]:' "$WORK/suite.log" | cut -d: -f5 | sort -u | paste -sd' ' -
}

# Apply mutant $1 (its block in the list) to the copy, keeping the file as it
# was in $WORK/.original: prints the file it edited; exits 3 when a text is
# not found, 4 when it is there more than once.
apply() {
    perl -e '
        my ($list, $name, $dir) = @ARGV;
        open my $fh, "<", $list or die "mutants: $list: $!\n";
        my ($file, @pairs, $in);
        while (my $line = <$fh>) {
            chomp $line;
            next if $line =~ /^#/;
            my ($key, $val) = $line =~ /^(\w+)\s*(.*)$/ or do { $in = 0 if $in; next };
            $val =~ s/\\n/\n/g;
            if ($key eq "mutant") { last if $in; $in = $val eq $name; next }
            next unless $in;
            if ($key eq "file") { $file = $val }
            elsif ($key eq "from") { push @pairs, [$val, undef] }
            elsif ($key eq "to") { $pairs[-1][1] = $val }
        }
        die "mutants: no mutant $name in $list\n" unless defined $file && @pairs;
        my $path = "$dir/$file";
        open my $src, "<", $path or do { print STDERR "$file: no such file\n"; exit 3 };
        local $/; my $text = <$src>; close $src;
        for my $p (@pairs) {
            my ($from, $to) = @$p;
            my $n = () = $text =~ /\Q$from\E/g;
            if ($n != 1) {
                print STDERR "$file: \"$from\" occurs $n times\n";
                exit($n == 0 ? 3 : 4);
            }
            $text =~ s/\Q$from\E/$to/;
        }
        rename $path, "$dir/.original" or die "mutants: $path: $!\n";
        open my $out, ">", $path or die "mutants: $path: $!\n";
        print $out $text; close $out;
        print "$file\n";
    ' "$LIST" "$1" "$WORK"
}

DRY=${MUTANTS_DRY:-}
if [ -z "$DRY" ]; then
    echo "mutants: the suites before any mutant..."
    for s in $QUICK; do
        run_suite "$s"
        case $? in
        1) cat "$WORK/suite.log"; echo "mutants: $s fails without any mutant: nothing to compare"; exit 1 ;;
        2) cat "$WORK/build.log"; echo "mutants: $s does not build without any mutant"; exit 1 ;;
        esac
    done
fi

names=${MUTANTS:-$(sed -n 's/^mutant[[:space:]]*//p' "$LIST")}
total=0; bad=0
for name in $names; do
    total=$((total + 1))
    t0=$(date +%s)
    file=$(apply "$name" 2> "$WORK/apply.log")
    rc=$?
    if [ $rc -ne 0 ]; then
        bad=$((bad + 1))
        [ $rc -eq 4 ] && what="AMBIGUOUS" || what="NOT FOUND"
        printf '%-10s %s: %s\n' "$what" "$name" "$(cat "$WORK/apply.log")"
        continue
    fi
    if [ -n "$DRY" ]; then
        echo "applies    $name"
        mv "$WORK/.original" "$WORK/$file"
        continue
    fi
    verdict=""
    for s in $QUICK; do
        run_suite "$s"
        case $? in
        1) verdict="caught     $name by $s ($(failed_tests))"; break ;;
        2) verdict="BROKEN     $name: does not compile ($(grep -m1 error "$WORK/build.log"))"; bad=$((bad + 1)); break ;;
        esac
    done
    if [ -z "$verdict" ] && [ -n "${MUTANTS_SUITES:-}" ]; then
        verdict="SURVIVED   $name (only $MUTANTS_SUITES ran)"; bad=$((bad + 1))
    elif [ -z "$verdict" ]; then
        if make -C "$WORK" -s -j"$JOBS" test > "$WORK/test.log" 2>&1; then
            verdict="SURVIVED   $name"; bad=$((bad + 1))
        else
            verdict="caught     $name by make test ($(grep -m1 -B1 -E 'Failures: [1-9]|Errors: [1-9]|FAILED' "$WORK/test.log" | head -1))"
        fi
    fi
    echo "$verdict ($(($(date +%s) - t0)) s)"
    mv "$WORK/.original" "$WORK/$file" && touch "$WORK/$file" # newer: the next build recompiles it
done
[ -n "$DRY" ] && done_word=apply || done_word=caught
echo "mutants: $((total - bad)) of $total $done_word in $(($(date +%s) - start)) s"
[ $bad -eq 0 ]
