#!/bin/sh
# Two emulated nodes in network namespaces, for benchmarks across a real
# network path on one machine.
#
#   bench/netns-pair.sh up [--rails N] [--rate RATE]   create (replaces an old pair)
#   bench/netns-pair.sh down                           remove everything it made
#   bench/netns-pair.sh status                         show addresses and counters
#
# Layout (all addresses in 10.250.0.0/16):
#   namespaces bnode0, bnode1
#   data rails: veth pair per rail, named railK in both nodes,
#               10.250.(K+1).1/24 in bnode0 and 10.250.(K+1).2/24 in bnode1
#   management: bridge bn-mgmt in the root namespace (10.250.0.254/24) with
#               veth mgmt0 in each node (10.250.0.1, 10.250.0.2); launchers
#               and bootstrap servers in the root namespace reach the nodes
#               through it, like a cluster's Ethernet beside its fabric.
# --rate shapes each rail's egress with an HTB class (e.g. 1gbit).
# Needs root (CAP_NET_ADMIN).
set -eu

NODES="bnode0 bnode1"
BRIDGE=bn-mgmt
MGMT_ADDR=10.250.0.254/24

usage() {
    echo "usage: $0 up [--rails N] [--rate RATE] | down | status" >&2
}

need_root() {
    if [ "$(id -u)" -ne 0 ]; then
        echo "netns-pair: needs root (network namespaces); rerun with sudo." >&2
        exit 1
    fi
}

down() {
    for n in $NODES; do
        if ip netns list | grep -qw "^$n"; then
            # Deleting the namespace destroys its veth ends and so their peers.
            ip netns delete "$n"
        fi
    done
    for m in bn0-m bn1-m; do
        ip link delete "$m" 2>/dev/null || true
    done
    if ip link show "$BRIDGE" >/dev/null 2>&1; then
        ip link delete "$BRIDGE" type bridge
    fi
}

# check_path NS ADDR FROM_NS: a TCP connection from FROM_NS (root namespace
# when empty) reaches a listener on ADDR inside NS.
check_path() {
    _from=""
    [ -n "$3" ] && _from="ip netns exec $3"
    : >"$tmp"
    ip netns exec "$1" python3 -c '
import socket, sys
s = socket.socket(); s.bind((sys.argv[1], 0)); s.listen(1); s.settimeout(5)
print(s.getsockname()[1], flush=True)
s.accept()
' "$2" >"$tmp" &
    _pid=$!
    _port=""
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        _port=$(cat "$tmp")
        [ -n "$_port" ] && break
        sleep 0.2
    done
    if ! $_from python3 -c '
import socket, sys, time
for i in range(20):
    try:
        socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5).close()
        break
    except OSError:
        # A new bridge port may need a moment before it forwards.
        if i == 19:
            raise
        time.sleep(0.1)
' "$2" "${_port:-1}"; then
        kill "$_pid" 2>/dev/null || true
        wait "$_pid" 2>/dev/null || true
        echo "netns-pair: no TCP path to $2 in $1" >&2
        return 1
    fi
    wait "$_pid"
}

up() {
    tmp=$(mktemp)
    rails=1
    rate=""
    while [ $# -gt 0 ]; do
        case "$1" in
            --rails) rails=$2; shift 2 ;;
            --rate) rate=$2; shift 2 ;;
            *) usage; exit 2 ;;
        esac
    done
    case "$rails" in
        [1-8]) ;;
        *) echo "netns-pair: --rails must be 1..8" >&2; exit 2 ;;
    esac
    down
    # From here on, a failure must not leave half a setup behind.
    trap 'echo "netns-pair: setup failed, cleaning up" >&2; down; rm -f "$tmp"' EXIT

    ip link add "$BRIDGE" type bridge
    ip addr add "$MGMT_ADDR" dev "$BRIDGE"
    ip link set "$BRIDGE" up

    i=0
    for n in $NODES; do
        ip netns add "$n"
        ip -n "$n" link set lo up
        # Management port: root side enslaved to the bridge.
        ip link add "bn$i-m" type veth peer name "mg-$n"
        ip link set "mg-$n" netns "$n"
        ip -n "$n" link set "mg-$n" name mgmt0
        ip link set "bn$i-m" master "$BRIDGE" up
        ip -n "$n" addr add "10.250.0.$((i + 1))/24" dev mgmt0
        ip -n "$n" link set mgmt0 up
        i=$((i + 1))
    done

    k=0
    while [ "$k" -lt "$rails" ]; do
        ip link add "bn0-r$k" type veth peer name "bn1-r$k"
        ip link set "bn0-r$k" netns bnode0
        ip link set "bn1-r$k" netns bnode1
        ip -n bnode0 link set "bn0-r$k" name "rail$k"
        ip -n bnode1 link set "bn1-r$k" name "rail$k"
        ip -n bnode0 addr add "10.250.$((k + 1)).1/24" dev "rail$k"
        ip -n bnode1 addr add "10.250.$((k + 1)).2/24" dev "rail$k"
        for n in $NODES; do
            ip -n "$n" link set "rail$k" up
            if [ -n "$rate" ]; then
                ip netns exec "$n" tc qdisc add dev "rail$k" root handle 1: htb default 10
                ip netns exec "$n" tc class add dev "rail$k" parent 1: classid 1:10 \
                    htb rate "$rate" ceil "$rate" quantum 60000
            fi
        done
        k=$((k + 1))
    done
    # Fail now rather than in the middle of a benchmark if a path is broken.
    k=0
    while [ "$k" -lt "$rails" ]; do
        check_path bnode1 "10.250.$((k + 1)).2" bnode0
        k=$((k + 1))
    done
    check_path bnode0 10.250.0.1 ""
    check_path bnode1 10.250.0.2 ""
    trap - EXIT
    rm -f "$tmp"
    echo "netns-pair: up: bnode0, bnode1; $rails rail(s)${rate:+ shaped to $rate}; mgmt bridge $BRIDGE ($MGMT_ADDR)"
}

status() {
    for n in $NODES; do
        if ! ip netns list | grep -qw "^$n"; then
            echo "$n: absent"
            continue
        fi
        echo "== $n"
        ip -n "$n" -br addr show | grep -v '^lo'
        for d in $(ip -n "$n" -o link show | awk -F': ' '{print $2}' | cut -d@ -f1 | grep -v '^lo$'); do
            tx=$(ip netns exec "$n" cat "/sys/class/net/$d/statistics/tx_bytes")
            rx=$(ip netns exec "$n" cat "/sys/class/net/$d/statistics/rx_bytes")
            echo "   $d tx_bytes=$tx rx_bytes=$rx"
        done
    done
}

cmd=${1:-}
[ $# -gt 0 ] && shift
case "$cmd" in
    up) need_root; up "$@" ;;
    down) need_root; down; echo "netns-pair: down" ;;
    status) status ;;
    *) usage; exit 2 ;;
esac
