#!/usr/bin/env bash
# Write the offline default training corpus to the path given: qkv's own
# documentation and sources, concatenated. Every checkout has them, so a
# character model can be trained without any download.
#
#   data/corpora/default_corpus.sh build/corpus.txt
#
# Files, each group in sorted (C locale) order, each file preceded by a line
# "==> path <==": README.md, docs/**/*.md, include/qkv/*.h, tensor/*.c,
# nn/*.c, io/*.c, data/*.c, decode/*.c, train/*.c, models/*.c, models/gpt/*.c,
# models/seq2seq/*.c. Groups that do not exist are skipped.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUTPUT" >&2
    exit 2
fi
out="$1"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
export LC_ALL=C

cd "$root"
shopt -s nullglob
files=()
if [[ -f README.md ]]; then
    files+=(README.md)
fi
if [[ -d docs ]]; then
    mapfile -t docs < <(find docs -type f -name '*.md' | sort)
    files+=("${docs[@]}")
fi
for pattern in 'include/qkv/*.h' 'tensor/*.c' 'nn/*.c' 'io/*.c' 'data/*.c' 'decode/*.c' \
               'train/*.c' 'models/*.c' 'models/gpt/*.c' 'models/seq2seq/*.c'; do
    # shellcheck disable=SC2206 # the glob is meant to expand here; globs sort in LC_ALL=C order
    group=($pattern)
    files+=("${group[@]}")
done
if [[ ${#files[@]} -eq 0 ]]; then
    echo "default_corpus: no documentation or sources found under $root" >&2
    exit 1
fi
cd - > /dev/null

# Written next to the destination and moved into place: never a half corpus.
tmp="$out.tmp"
trap 'rm -f "$tmp"' EXIT
for f in "${files[@]}"; do
    printf '==> %s <==\n' "$f"
    cat "$root/$f"
    printf '\n'
done > "$tmp"
mv "$tmp" "$out"
echo "default_corpus: wrote $out ($(wc -c < "$out" | tr -d ' ') bytes from ${#files[@]} files)"
