#!/bin/sh
# Placement for reorder=1 (topo_place.c) on hosts named through pxrun
# --hosts (the launcher starts them all here). The topology dissertation's
# example: a 2x4x4 stencil of 32 ranks on 4 nodes of 8, of which only
# node0 and node3 share a leaf (figure51.topology.conf); its Table 5.1 has
# 80 messages within nodes and 48 across the spine for the default
# mapping, 96 and 32 for 2x2x2 blocks per node, and 96 within nodes, 8 over
# one leaf and 24 across the spine when the blocks are also laid out by
# the fabric. Then the same without PX_TOPO (nodes only), ranks dealt
# round-robin onto the nodes of pxfab-fattree.json, uneven nodes,
# PX_REORDER=0, which must miss the example's figures, and the example
# launched on the host file pxtopo place writes for it.
#   place.sh PXRUN TOPO_PLACE SAMPLE_DIR [nometis]
set -u
pxrun=$1
prog=$2
dir=$3
nometis=${4:-}
show='^(cart|graph|dist)'
. "$(dirname "$0")/run.sh"
unset PX_TOPO PX_REORDER
ex="-n 32 --hosts node0:8,node1:8,node2:8,node3:8"
if [ -n "$nometis" ]; then
    # built without METIS: reorder=1 keeps the ranks in order, correctly
    PX_TOPO="$dir/figure51.topology.conf" run 0 "cart reorder=1: intra 80 1hop 0 far 48" $ex "$prog"
else
    PX_TOPO="$dir/figure51.topology.conf" run 0 "cart reorder=0: intra 80 1hop 0 far 48" \
        $ex "$prog" 96 24
    # the groups must be laid onto the nodes by hops whatever the host order
    for hosts in node1:8,node0:8,node2:8,node3:8 node0:8,node3:8,node1:8,node2:8; do
        PX_TOPO="$dir/figure51.topology.conf" run 0 "cart reorder=1: intra 96 1hop 8 far 24" \
            -n 32 --hosts $hosts "$prog" 96 24
    done
    run 0 "PASS topo_place np=32" $ex "$prog" 96 32
    PX_TOPO="$dir/pxfab-fattree.json" run 0 "PASS topo_place np=16" \
        -n 16 --hosts node0:1,node1:1,node2:1,node3:1 "$prog" 32 8
    PX_TOPO="$dir/figure51.topology.conf" PX_REORDER=0 run 1 "FAIL topo_place np=32" \
        $ex "$prog" 96 24
fi
# pxtopo place's host file, given to pxrun, places the example at launch:
# reorder=0 then has the placed figures
if command -v python3 >/dev/null && command -v gpmetis >/dev/null; then
    tmp=$(mktemp -d)
    printf 'node0:8\nnode1:8\nnode2:8\nnode3:8\n' >"$tmp/hosts"
    if PYTHONPATH="$dir/../../python" python3 -m plexus.topo --topo "$dir/figure51.topology.conf" \
        place "$dir/stencil-2x4x4.graph" "$tmp/hosts" -o "$tmp/ranks.hosts"; then
        PX_TOPO="$dir/figure51.topology.conf" PX_REORDER=0 run 0 \
            "cart reorder=0: intra 96 1hop 8 far 24" -n 32 --hostfile "$tmp/ranks.hosts" "$prog"
    else
        fail=$((fail + 1))
        echo "FAIL: pxtopo place"
    fi
    rm -rf "$tmp"
fi
PX_TOPO="$dir/pxfab-fattree.json" run 0 "PASS topo_place np=12" \
    -n 12 --hosts node0:5,node1:4,node2:3 "$prog"
run 0 "PASS topo_place np=8" -n 8 "$prog"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
