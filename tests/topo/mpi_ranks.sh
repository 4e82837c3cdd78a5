#!/bin/sh
# An MPI job with PX_TOPO set, its ranks on the emulated hosts of
# pxfab-fattree.json (named through pxrun --hosts; the launcher starts them
# here): every rank must see the same, correct hop counts to its peers.
# Then the same program without PX_TOPO (flat), and a PX_TOPO that names no
# file (MPI_Init must fail, saying which). With TOPO_COLL: gathers,
# scatters, broadcasts and alltoalls checked at 3 to 16 ranks (broadcasts
# also on hosts at two link rates, mixed.ibnet), by the topology-aware
# algorithms under PX_TOPO (the program checks they ran) and by the flat
# ones without.
#   mpi_ranks.sh PXRUN TOPO_RANKS SAMPLE_DIR [TOPO_COLL]
set -u
pxrun=$1
prog=$2
dir=$3
coll=${4:-}
. "$(dirname "$0")/run.sh"
unset PX_TOPO
export PX_TOPO="$dir/pxfab-fattree.json"
run 0 "PASS topo_ranks np=5: hop counts agree" -n 5 --hosts node0:2,node1:1,node2:1,node3:1 "$prog"
run 0 "PASS topo_ranks np=4: hop counts agree" -n 4 --hosts node3:1,node0:1,node2:2 "$prog"
PX_TOPO="$dir/fattree.ibnet" run 1 "FAIL topo_ranks" -n 2 --hosts node0:1,node1:1 "$prog"
# OpenSM's forwarding tables (a 5-hop detour from node01 to node05) kept
# in the copy the job shares
PX_TOPO="$dir/lft.ibnet" PXTEST_HOPS_FROM="$dir/lft.ibnet" \
    run 0 "PASS topo_ranks np=5: hop counts agree" -n 5 --hosts node01:1,node05:1,node03:2,node06:1 "$prog"
PX_TOPO=/nonexistent/fabric.json run 1 "cannot open /nonexistent/fabric.json" \
    -n 2 --hosts node0:1,node2:1 "$prog"
unset PX_TOPO
PXTEST_FLAT=1 run 0 "PASS topo_ranks np=3: flat" -n 3 --hosts node0:2,node2:1 "$prog"
if [ -n "$coll" ]; then
    # the broadcast's renumbered tree runs among node leaders: 4 hosts on 2
    # leaves; with 2 hosts there is nothing to renumber
    export PX_TOPO="$dir/pxfab-fattree.json" PXTEST_EXPECT_TOPO=gather,scatter
    run 0 "PASS topo_coll np=3" -n 3 --hosts node0:2,node2:1 "$coll"
    # the alltoall forced: DCSS leaves it to pairwise where no two hosts
    # share an uplink (one host per leaf)
    PX_ALLTOALL_ALGORITHM=topo run 0 "PASS topo_coll np=3" -n 3 --hosts node0:2,node2:1 "$coll"
    PXTEST_EXPECT_TOPO=gather,scatter,bcast \
        run 0 "PASS topo_coll np=7" -n 7 --hosts node2:1,node0:3,node3:2,node1:1 "$coll"
    # 36 KB blocks at 16 ranks: the table's topo alltoall, DCSS accepting
    PXTEST_EXPECT_TOPO=gather,scatter,bcast,alltoall \
        run 0 "PASS topo_coll np=16" -n 16 --hosts node0:4,node1:4,node2:4,node3:4 "$coll"
    PXTEST_EXPECT_TOPO=gather,scatter,bcast PX_BCAST_ALGORITHM=topo \
        run 0 "PASS topo_coll np=8" -n 8 --hosts node0:1,node2:3,node1:2,node3:2 "$coll"
    # the alltoall forced where hosts share uplinks: TACS1 on the world,
    # TACS2 on the split halves
    for spec in 4:node0:1,node1:1,node2:1,node3:1 7:node2:1,node0:3,node3:2,node1:1 \
        8:node0:1,node2:3,node1:2,node3:2 16:node0:4,node1:4,node2:4,node3:4; do
        PXTEST_EXPECT_TOPO=gather,scatter,bcast,alltoall PX_ALLTOALL_ALGORITHM=topo \
            run 0 "PASS topo_coll np=${spec%%:*}" -n "${spec%%:*}" --hosts "${spec#*:}" "$coll"
    done
    PXTEST_EXPECT_TOPO=gather,scatter,bcast,alltoall PX_ALLTOALL_ALGORITHM=topo \
        PX_ALLTOALL_TOPO_SCHEDULE=tacs2 PX_ALLTOALL_TOPO_CONFLICTS=0 \
        run 0 "PASS topo_coll np=16" -n 16 --hosts node0:4,node1:4,node2:4,node3:4 "$coll"
    # hosts at two link rates (mixed.ibnet): the broadcast's tree from the
    # delay matrix of 1/min(link rate), every root, data checked (the
    # alltoall's large blocks take the topology-aware schedule there too)
    export PX_TOPO="$dir/mixed.ibnet"
    PXTEST_EXPECT_TOPO=gather,scatter,bcast,alltoall \
        run 0 "PASS topo_coll np=12" -n 12 --hosts n01:2,n02:1,n03:2,n04:1,n05:1,n06:2,n07:1,n08:2 "$coll"
    PXTEST_EXPECT_TOPO=gather,scatter,bcast,alltoall PX_BCAST_ALGORITHM=topo \
        run 0 "PASS topo_coll np=9" -n 9 --hosts n08:1,n01:2,n06:1,n03:1,n02:2,n07:1,n05:1 "$coll"
    unset PX_TOPO
    PXTEST_EXPECT_TOPO=none run 0 "PASS topo_coll np=7" -n 7 --hosts node2:1,node0:3,node3:2,node1:1 "$coll"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
