#!/bin/sh
# The usage block at the top of every installed header must compile and link
# against the installed library, as written: its indented code lines, from
# the first one to the next line of prose, become the body of main() after
# #include <qkv/qkv.h>, the header itself, <stdio.h> and <stdlib.h>. A block
# that no longer matches the API fails here, naming the header.
#
#     tests/install/compile_usage_blocks.sh PREFIX WORKDIR   (make test-install runs it)
set -eu
prefix=$1 work=$2
cc=${CC:-cc}
mkdir -p "$work"
pc() { PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config "$@" qkv; }
n=0
for h in "$prefix"/include/qkv/*.h; do
    name=$(basename "$h" .h)
    src=$work/usage_$name.c
    {
        printf '#include <qkv/qkv.h>\n#include <qkv/%s.h>\n#include <stdio.h>\n#include <stdlib.h>\n\n' "$name"
        # The header's first comment: code is indented by 5 spaces after " *";
        # blank " *" lines inside the code are kept, the first prose line ends
        # it. A definition starting with "static" or "typedef" (a callback, the
        # type it uses) goes before main, up to its closing "}" at column 0.
        awk 'NR > 1 && /\*\// { exit }
             /^ \*     / { code = 1; line = substr($0, 8)
                          first = !top && line ~ /^(static|typedef) /
                          if (first) top = 1
                          if (top) defs = defs line "\n"; else body = body "    " line "\n"
                          if (top && (line ~ /^}/ || (first && line ~ /[;}] *$/))) top = 0
                          next }
             code && /^ \*$/ { if (top) defs = defs "\n"; else body = body "\n"; next }
             code { exit }
             END { if (body != "") printf "%s\nint main(void)\n{\n%s    return 0;\n}\n", defs, body }' "$h"
    } > "$src"
    grep -q 'int main' "$src" || continue
    $cc -Wall -Wextra -pedantic -Werror -Wno-unused-variable ${SAN:-} "$src" -o "$work/usage_$name" $(pc --cflags --libs) ||
        { echo "usage blocks: FAILED: the usage block of include/qkv/$name.h does not compile ($src)" >&2; exit 1; }
    n=$((n + 1))
done
echo "usage blocks: the usage blocks of $n installed headers compile and link against the installed library"
