#!/usr/bin/env bash
# Plexus's channels side by side on one machine (the seed's per-channel
# table): latency, bandwidth and multi-pair message rate over shared memory,
# TCP, UDP datagrams and hybrid (datagrams, connections to busy peers), with
# MPICH and Open MPI over TCP on loopback for reference. OSU binaries from
# bench/osu/build.sh; prints figures, asserts nothing.
#
# usage: bench/channels.sh [--reps N]     (median of N runs per cell, default 3)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
RUN="$ROOT/bench/osu/run.sh"
reps=3
[ "${1:-}" = --reps ] && reps=$2

# median of the value for SIZE in N runs of: run.sh ARGS
cell() {
    local size=$1; shift
    local vals=()
    for _ in $(seq "$reps"); do
        v=$("$RUN" "$@" 2>/dev/null | awk -v s="$size" '$1 == s { print $2; exit }')
        vals+=("${v:-nan}")
    done
    printf '%s\n' "${vals[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

printf '%-16s %10s %10s %10s %10s %14s\n' channel "lat 8B us" "lat 4KB us" "bw 64KB MB/s" "bw 1MB MB/s" "mbw_mr 8KB msg/s"
for spec in plexus:shm plexus:tcp plexus:udp plexus:hybrid mpich:tcp openmpi:tcp; do
    mpi=${spec%%:*}
    net=${spec#*:}
    l8=$(cell 8 --mpi "$mpi" --np 2 --net "$net" pt2pt/osu_latency -m 8:8 -i 20000 -x 2000)
    l4k=$(cell 4096 --mpi "$mpi" --np 2 --net "$net" pt2pt/osu_latency -m 4096:4096 -i 10000 -x 1000)
    b64=$(cell 65536 --mpi "$mpi" --np 2 --net "$net" pt2pt/osu_bw -m 65536:65536 -i 200 -x 20)
    b1m=$(cell 1048576 --mpi "$mpi" --np 2 --net "$net" pt2pt/osu_bw -m 1048576:1048576 -i 100 -x 10)
    # osu_mbw_mr prints size, MB/s, messages/s
    mr=()
    for _ in $(seq "$reps"); do
        v=$("$RUN" --mpi "$mpi" --np 4 --net "$net" pt2pt/osu_mbw_mr -m 8192:8192 2>/dev/null |
            awk '$1 == 8192 { print $3; exit }')
        mr+=("${v:-nan}")
    done
    mrm=$(printf '%s\n' "${mr[@]}" | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    printf '%-16s %10s %10s %10s %10s %14s\n' "$mpi $net" "$l8" "$l4k" "$b64" "$b1m" "$mrm"
done
