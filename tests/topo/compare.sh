#!/bin/sh
# The C fabric model (topo_dump) and the Python one (pxtopo dump) must give
# the same answers, line for line, on every sample of this folder.
#   compare.sh TOPO_DUMP SAMPLE_DIR
set -u
dump=$1
dir=$2
here=$(dirname "$(readlink -f "$0")")
pass=0
fail=0
for f in "$dir"/*.json "$dir"/*.ibnet "$dir"/*.conf; do
    [ -e "$f" ] || continue
    c=$("$dump" "$f" 2>&1)
    py=$("$here/../../tools/pxtopo" --topo "$f" dump 2>&1)
    if [ -n "$c" ] && [ "$c" = "$py" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $f: C and Python differ"
        printf '%s\n' "$c" >/tmp/topo_c.$$
        printf '%s\n' "$py" | diff /tmp/topo_c.$$ - | head -20
        rm -f /tmp/topo_c.$$
    fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
