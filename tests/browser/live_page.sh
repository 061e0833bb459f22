#!/bin/sh
# The live attention page (qkv attn --html OUT --live) in headless Chromium,
# driven by tests/browser/live_page.js over the DevTools protocol: the page's
# self-check (the module against the program's numbers), a typed text whose
# every recomputed weight must match `qkv attn` run natively on it (1e-5),
# the recomputation's time, and "generate" against `qkv sample`.
#
#   tests/browser/live_page.sh test BUILD
#       small fresh models (a few training steps), the GPT and the
#       encoder-decoder; prints what it measured.
#   tests/browser/live_page.sh measure BUILD GPT.ckpt [TEXT]
#       docs/cli.md's figures for a trained GPT: the page's size, the
#       recomputation's time for TEXT (default 64 characters: baby's whole
#       context), and how far the page and qkv sample agree over 10 seeds of
#       300 tokens (run it under /work/wt/quiet or alone).
#   tests/browser/live_page.sh shot BUILD GPT.ckpt OUT.png
#       docs/cli.md's screenshot of live mode, after typing a text.
#
# Without Chromium, node or the module (make wasm, which needs emscripten) it
# says SKIPPED and succeeds: all three are optional, like everything outside C.
set -eu
mode=${1:?usage: live_page.sh test BUILD | measure BUILD GPT.ckpt | shot BUILD GPT.ckpt OUT.png}
build=${2:?the build directory}
qkv=$build/qkv
here=$(dirname "$0")
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
missing=""
[ -n "$chromium" ] || missing="$missing chromium"
command -v node >/dev/null || missing="$missing node"
[ -f "$build/wasm/qkv_live.js" ] || missing="$missing $build/wasm/qkv_live.js (make wasm; it needs emscripten)"
if [ -n "$missing" ]; then
    echo "SKIPPED browser test of qkv attn --live: no$missing"
    exit 0
fi
tmp=$(mktemp -d /tmp/qkv_live_XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
# The module beside this build's program, whatever QKV_WASM says; the
# browser's profiles in $tmp, removed with it.
QKV_WASM=$build/wasm
TMPDIR=$tmp
export QKV_WASM TMPDIR

if [ "$mode" = measure ] || [ "$mode" = shot ]; then
    gpt=${3:?the GPT checkpoint}
    "$qkv" attn --ckpt "$gpt" --text "ROMEO:" --html "$tmp/live.html" --live >/dev/null
    typed=${4:-"JULIET: O Romeo, Romeo! wherefore art thou Romeo? Deny thy fathe"}
    if [ "$mode" = shot ]; then
        # Typed in the page (so the views show the module's numbers), then a picture of it.
        out=${4:?the PNG to write}
        typed="JULIET: O Romeo, Romeo! wherefore art thou Romeo? Deny thy fathe"
        node "$here/live_page.js" shot "$chromium" "$qkv" "$gpt" "$tmp/live.html" "$typed" "$out"
        if command -v pngquant >/dev/null; then pngquant --force --quality=70-90 --speed 1 --output "$out" "$out"; fi
        ls -l "$out"
        exit 0
    fi
    echo "page: $(wc -c <"$tmp/live.html") bytes for $gpt"
    node "$here/live_page.js" gpt "$chromium" "$qkv" "$gpt" "$tmp/live.html" "$typed" \
        1,2,3,4,5,6,7,8,9,10 300 1 0
    node "$here/live_page.js" gpt "$chromium" "$qkv" "$gpt" "$tmp/live.html" "$typed" \
        1,2,3,4,5,6,7,8,9,10 300 0.8 40
    exit 0
fi

# Small fresh models: a few steps each, so the weights are not uniform. The
# GPT reads README.md's ASCII only: every character it writes is one byte, so
# the page's text and qkv sample's compare character by character.
LC_ALL=C tr -cd '\11\12\40-\176' <README.md >"$tmp/ascii.txt"
"$qkv" train --data "$tmp/ascii.txt" --iters 20 --layers 2 --heads 4 --embd 32 --block 64 --batch 8 \
    --eval-every 20 --eval-iters 2 --log-every 20 --threads 1 --out "$tmp/gpt.ckpt" >/dev/null
"$qkv" s2s train --steps 20 --layers 2 --heads 4 --embd 32 --batch 16 --eval-every 20 \
    --log-every 20 --threads 1 --out "$tmp/s2s.ckpt" >/dev/null
"$qkv" attn --ckpt "$tmp/gpt.ckpt" --text "Every token" --html "$tmp/gpt.html" --live
"$qkv" attn --ckpt "$tmp/s2s.ckpt" --input "March 3rd, 1998" --html "$tmp/s2s.html" --live
fail=0
node "$here/live_page.js" gpt "$chromium" "$qkv" "$tmp/gpt.ckpt" "$tmp/gpt.html" \
    "Every token looks at every other token; weights say where." 1,2 200 0.8 20 || fail=1
node "$here/live_page.js" seq2seq "$chromium" "$qkv" "$tmp/s2s.ckpt" "$tmp/s2s.html" \
    "12/25/2024" "2024-12-2" || fail=1
# Without the module the option says how to get it, and writes nothing.
if QKV_WASM=$tmp/none "$qkv" attn --ckpt "$tmp/gpt.ckpt" --text "Every" --html "$tmp/no.html" \
    --live 2>"$tmp/no.err" || ! grep -q "make wasm" "$tmp/no.err" || [ -e "$tmp/no.html" ]; then
    echo "FAIL: without the module, qkv attn --live must fail naming make wasm: $(cat "$tmp/no.err")"
    fail=1
fi
if [ $fail -ne 0 ]; then
    echo "FAIL: browser test of qkv attn --live"
    exit 1
fi
echo "browser test of qkv attn --live: passed"
