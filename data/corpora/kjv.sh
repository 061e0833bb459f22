#!/usr/bin/env bash
# Write the King James Bible (public domain; Debian's bible-kjv-text, read
# through its `bible` program from bible-kjv) as plain English prose into
# data/kjv.txt, or into the path given as the first argument: the second
# corpus of docs/speedrun.md, never tuned on, so a recipe change is kept only
# when it helps on a text it was not chosen on.
#
#   apt-get install bible-kjv                       # once (brings bible-kjv-text)
#   data/corpora/kjv.sh                             # -> data/kjv.txt
#   data/corpora/kjv.sh /tmp/kjv.txt
#
# The text: every verse from Genesis 1:1 to Revelation 22:21, the verse
# numbers dropped, each verse on a line of its own, a book's name and
# chapter (e.g. "Genesis 1") on a line of its own before its verses, a blank
# line between chapters: 4,152,018 bytes of ASCII, the same at every run
# (the script checks its checksum). Written beside its destination
# and moved into place only when whole, so a failed run never leaves a file
# that looks usable.
set -euo pipefail

expected_sha256=47dbccdb016cd08652ee7705ecea4bd2ee3c63402055f13ec743038967b74fcb
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dest="${1:-$here/kjv.txt}"
part="$dest.part"

if ! command -v bible > /dev/null || [[ ! -f /usr/lib/bible.data ]]; then
    echo "kjv: the King James Bible is not installed: apt-get install bible-kjv" >&2
    echo "  (it brings bible-kjv-text, the text, and bible, the program that reads it)" >&2
    exit 1
fi

trap 'rm -f "$part"' EXIT
# With a line width of 1000 bible prints each verse on one line, "  N text",
# and each chapter's heading ("Genesis 1", "1 Kings 3") between blank lines.
bible -l1000 "gen1:1-rev22:21" |
    LC_ALL=C awk '
        /^ +[0-9]+ / { sub(/^ +[0-9]+ /, ""); print; next }
        NF { if (n++) print ""; print }
    ' > "$part"
sum="$(sha256sum "$part" | cut -d' ' -f1)"
if [[ "$sum" != "$expected_sha256" ]]; then
    echo "kjv: the text came out different from the one this script makes (sha256 $sum);" \
         "removed it" >&2
    exit 1
fi
mv "$part" "$dest"
echo "kjv: wrote $dest ($(wc -c < "$dest" | tr -d ' ') bytes)"
