#!/usr/bin/env bash
# The NAS benchmarks that bench/nas/run.sh built for Plexus, run with each
# channel choice: connections only (shm,tcp), datagrams only (shm,udp) and
# hybrid (shm,udp,tcp), on emulated nodes (pxfab) or on this machine; prints
# the time, the verification and the channels each process allocated (from
# PX_PROFILE=1). A benchmark: prints figures, asserts nothing.
#
#   bench/nas/channels.sh [--class A] [--np 8] [--hosts node0:2,node1:2,...]
#                         [--benchmarks "is cg ft mg"] [--env VAR=VAL ...]
#
# With --hosts the nodes are network namespaces (tools/pxfab up --nodes N),
# reached through pxfab's management interface.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$ROOT/bench/.cache/npb-plexus/bin
class=A np=8 hosts="" list="is cg ft mg"
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
    --class) class=$2; shift 2 ;;
    --np) np=$2; shift 2 ;;
    --hosts) hosts=$2; shift 2 ;;
    --benchmarks) list=$2; shift 2 ;;
    --env) extra+=(--env "$2"); shift 2 ;;
    *) echo "channels.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
# this build's library, whatever the binaries were linked against
launch=("$ROOT/build/bin/pxrun" -n "$np" --timeout 1800 --env PX_PROFILE=1
        --env LD_LIBRARY_PATH="$ROOT/build/lib")
[ -n "$hosts" ] && launch+=(--hosts "$hosts" --launcher 'ip netns exec {host}' --bootstrap-iface pxf-mgmt)
printf '%-6s %-12s %9s %-12s %s\n' bench PX_NET "time s" verification "channels per process: udp tcp (mean, max tcp)"
for b in $list; do
    x=$BIN/$b.$class.x
    [ -x "$x" ] || { echo "$b.$class: $x not built (bench/nas/run.sh NPB_DIR --class $class)"; continue; }
    for net in shm,tcp shm,udp shm,udp,tcp; do
        out=$("${launch[@]}" --env PX_NET=$net "${extra[@]}" "$x" 2>&1 || true)
        t=$(echo "$out" | awk '/Time in seconds/ {print $NF}')
        v=$(echo "$out" | grep -qi "verification *= *successful" && echo SUCCESSFUL || echo FAILED)
        ch=$(echo "$out" | awk '/ channels: / {
                for (i = 1; i <= NF; i++) { if ($i == "udp") u += $(i+1); if ($i == "tcp") { t += $(i+1); if ($(i+1) > m) m = $(i+1); break } }
                n++ }
            END { if (n) printf "%.1f %.1f (max %d)", u / n, t / n, m }')
        printf '%-6s %-12s %9s %-12s %s\n' "$b.$class" "$net" "${t:-?}" "$v" "$ch"
    done
done
