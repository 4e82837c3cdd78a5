#!/bin/sh
# Launcher for pxrun with run.sh --pin: runs CMD in network namespace HOST on
# one CPU, chosen by HOST's position in the comma-separated NODES list
# (node K on CPU K mod the number of CPUs).
#
#   bench/osu/pin-exec.sh NODES HOST CMD...
set -eu
nodes=$1 host=$2
shift 2
k=0
IFS=,
for n in $nodes; do
    [ "$n" = "$host" ] && break
    k=$((k + 1))
done
exec ip netns exec "$host" taskset -c $((k % $(nproc))) "$@"
