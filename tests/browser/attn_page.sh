#!/bin/sh
# The attention page (qkv attn --html) in a real browser: headless Chromium
# opens it from file://, the page's own self-check runs (the data, every
# view, a simulated hover) and writes its verdict into the page; we read it
# back from the DOM, and a page with one corrupted weight must say FAIL.
#
#   tests/browser/attn_page.sh test BUILD
#       small fresh models (a few training steps); prints each verdict.
#   tests/browser/attn_page.sh shots BUILD GPT.ckpt S2S.ckpt OUTDIR
#       docs/cli.md's screenshots (1280x800) of each view, from trained models
#       (made smaller by pngquant when it is installed).
#
# Without Chromium (Debian's `chromium`; $CHROMIUM names another) it says
# SKIPPED and succeeds: the browser is optional, like everything outside C.
set -eu
mode=${1:?usage: attn_page.sh test BUILD | shots BUILD GPT.ckpt S2S.ckpt OUTDIR}
build=${2:?the build directory}
qkv=$build/qkv
chromium=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
    echo "SKIPPED browser test of qkv attn --html: no chromium (apt-get install chromium)"
    exit 0
fi
tmp=$(mktemp -d /tmp/qkv_browser_XXXXXX)
trap 'rm -rf "$tmp"' EXIT INT TERM
runs=0

# Chromium with a fresh profile each time, nothing from the network.
browse() {
    runs=$((runs + 1))
    "$chromium" --headless --no-sandbox --disable-gpu --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$tmp/profile$runs" "$@" 2>>"$tmp/chromium.log"
}

# The verdict the page wrote into its #self-check paragraph.
verdict() {
    browse --virtual-time-budget=20000 --dump-dom "file://$1" |
        sed -n 's/.*<p id="self-check"[^>]*>\([^<]*\)<.*/\1/p'
}

# A 1280x800 screenshot of page (with an address fragment) into png.
shot() {
    browse --window-size=1280,800 --hide-scrollbars --screenshot="$2" "file://$1"
    [ -s "$2" ] || { echo "FAIL: no screenshot $2"; exit 1; }
}

if [ "$mode" = shots ]; then
    gpt=$3 s2s=$4 out=$5
    "$qkv" attn --ckpt "$gpt" --text "ROMEO: But soft, what light through yonder window breaks? It is" \
        --html "$tmp/gpt.html" >/dev/null
    "$qkv" attn --ckpt "$s2s" --input "March 3rd, 1998" --html "$tmp/s2s.html" >/dev/null
    shot "$tmp/gpt.html#tab=head&layer=3&query=62" "$out/attn_head_view.png"
    shot "$tmp/gpt.html#tab=model&layer=3&head=1&query=62" "$out/attn_model_view.png"
    shot "$tmp/gpt.html#tab=steps&layer=3&head=1&query=40" "$out/attn_steps.png"
    shot "$tmp/s2s.html#tab=model&view=2&layer=1&head=0&query=5" "$out/attn_cross.png"
    # Fewer colours, the same picture: a few hundred KB for all four.
    if command -v pngquant >/dev/null; then
        for f in "$out"/attn_*.png; do pngquant --force --quality=70-90 --speed 1 --output "$f" "$f"; done
    fi
    ls -l "$out"/attn_*.png
    exit 0
fi

# Small fresh models: a few steps each, so the weights are not uniform.
"$qkv" train --data README.md --iters 20 --layers 2 --heads 4 --embd 32 --block 64 --batch 8 \
    --eval-every 20 --eval-iters 2 --log-every 20 --threads 1 --out "$tmp/gpt.ckpt" >/dev/null
"$qkv" s2s train --steps 20 --layers 2 --heads 4 --embd 32 --batch 16 --eval-every 20 \
    --log-every 20 --threads 1 --out "$tmp/s2s.ckpt" >/dev/null
"$qkv" attn --ckpt "$tmp/gpt.ckpt" --text "Every token looks at every other token; weights say where." \
    --html "$tmp/gpt.html"
"$qkv" attn --ckpt "$tmp/s2s.ckpt" --input "March 3rd, 1998" --html "$tmp/s2s.html"

fail=0
for page in gpt s2s; do
    v=$(verdict "$tmp/$page.html")
    echo "$page page: $v"
    case $v in "self-check: pass"*) ;; *) fail=1 ;; esac
    shot "$tmp/$page.html" "$tmp/$page.png"
    echo "$page page: screenshot $(wc -c <"$tmp/$page.png") bytes"
done
# The first weight of the causal page is query 0's only one, exactly 1;
# halving it breaks its row's sum, and the self-check must see that.
sed 's/"w":\[1,/"w":[0.5,/' "$tmp/gpt.html" >"$tmp/broken.html"
cmp -s "$tmp/gpt.html" "$tmp/broken.html" && { echo "FAIL: could not corrupt the page"; exit 1; }
v=$(verdict "$tmp/broken.html")
echo "corrupted page: $v"
case $v in "self-check: FAIL"*"sums to"*) ;; *) fail=1 ;; esac
if [ $fail -ne 0 ]; then
    echo "FAIL: browser test of qkv attn --html (chromium's messages: $tmp/chromium.log)"
    trap - EXIT
    exit 1
fi
echo "browser test of qkv attn --html: passed"
