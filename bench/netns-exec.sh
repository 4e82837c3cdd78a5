#!/bin/sh
# ssh-compatible launcher into a network namespace, for MPI launchers that
# start remote daemons over ssh (Open MPI's plm_rsh_agent, MPICH hydra's
# -launcher ssh -launcher-exec):
#
#   bench/netns-exec.sh [ssh options] NODE COMMAND...
#
# runs COMMAND in namespace NODE through `sh -c`, the way ssh hands its
# arguments to the remote shell. Leading ssh options (-x, -o opt, ...) are
# ignored, since there is no ssh connection.
set -eu

while [ $# -gt 0 ]; do
    case "$1" in
        # Options that take a value.
        -o|-p|-l|-i|-F|-E|-b|-c|-m|-J) shift 2 ;;
        -*) shift ;;
        *) break ;;
    esac
done

if [ $# -lt 2 ]; then
    echo "netns-exec: usage: $0 [ssh options] NODE COMMAND..." >&2
    exit 255
fi

node=$1
shift
exec ip netns exec "$node" sh -c "$*"
