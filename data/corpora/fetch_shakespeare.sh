#!/usr/bin/env bash
# Fetch tiny Shakespeare (Karpathy's char-rnn corpus, 1,115,394 bytes) into
# data/tinyshakespeare.txt, or into the path given as the first argument.
#
#   data/corpora/fetch_shakespeare.sh               # -> data/tinyshakespeare.txt
#   data/corpora/fetch_shakespeare.sh /tmp/ts.txt
#
# QKV_SHAKESPEARE_URL overrides where it is fetched from (any URL curl
# understands, file:// included). The file is downloaded next to its
# destination and moved into place only when its size is exactly right, so a
# failed or partial download never leaves a file that looks usable.
# Offline? Use data/corpora/default_corpus.sh instead, or copy input.txt here by hand.
set -euo pipefail

url="${QKV_SHAKESPEARE_URL:-https://raw.githubusercontent.com/karpathy/char-rnn/master/data/tinyshakespeare/input.txt}"
expected_size=1115394
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${1:-$here/tinyshakespeare.txt}"
part="$dest.part"

file_size() { wc -c < "$1" | tr -d ' '; }

if [[ -f "$dest" && "$(file_size "$dest")" == "$expected_size" ]]; then
    echo "fetch_shakespeare: $dest is already there ($expected_size bytes)"
    exit 0
fi

trap 'rm -f "$part"' EXIT
rm -f "$part"
echo "fetch_shakespeare: downloading $url"
if command -v curl > /dev/null; then
    fetch=(curl --fail --silent --show-error --location --retry 2 --connect-timeout 15 --output "$part" "$url")
elif command -v wget > /dev/null; then
    fetch=(wget --no-verbose --tries=3 --timeout=15 --output-document="$part" "$url")
else
    echo "fetch_shakespeare: neither curl nor wget is installed" >&2
    exit 1
fi
if ! "${fetch[@]}"; then
    echo "fetch_shakespeare: could not download $url" >&2
    echo "  (offline? copy the file to $dest by hand, or train on data/corpora/default_corpus.sh's corpus)" >&2
    exit 1
fi

size="$(file_size "$part")"
if [[ "$size" != "$expected_size" ]]; then
    echo "fetch_shakespeare: got $size bytes from $url, expected $expected_size; removed the download" >&2
    exit 1
fi
mv "$part" "$dest"
echo "fetch_shakespeare: wrote $dest ($expected_size bytes)"
