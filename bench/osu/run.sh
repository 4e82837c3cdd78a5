#!/bin/bash
# Run one OSU Micro-Benchmark with one MPI library (MPICH, Open MPI or Plexus),
# built beforehand by bench/osu/build.sh.
#
#   bench/osu/run.sh --mpi mpich|openmpi|plexus [options] BENCH [OSU args...]
#
# BENCH: a benchmark name, optionally with its group: osu_latency,
# pt2pt/osu_latency, collective/osu_allreduce, pt2pt/standard/osu_bw.
#
# Options:
#   --np N            number of ranks (default 2)
#   --net shm|tcp     shared memory allowed between ranks of a node (default)
#                     or TCP forced between all ranks (over loopback on one node)
#   --net udp         Plexus only: its datagram transport instead of TCP
#   --net hybrid      Plexus only: datagrams, connections to busy peers (udp,tcp)
#   --net ofi         Plexus only: libfabric (PX_NET=ofi; PX_OFI_PROVIDER via --env)
#   --nodes A,B       emulated nodes of a pxfab fabric (tools/pxfab up --nodes 2
#                     ...; docs/fabric.md); ranks run inside them and talk over
#                     TCP on the rails
#   --ppn K           ranks per node with --nodes (default np / number of nodes)
#   --mgmt IFACE      with --nodes: management interface in the root namespace
#                     that reaches every node (default pxf-mgmt); bootstrap and
#                     launcher traffic go there
#   --rails R0[,R1]   with --nodes: data interfaces inside the nodes (default rail0)
#   --osu-dir DIR     OSU build tree (default bench/.cache/osu-<mpi>/src)
#   --env VAR=VALUE   environment for the ranks (repeatable), e.g. PX_RAIL_POLICY=even
#   --timeout S       kill the job after S seconds (default 300)
#   --pin             Plexus with --nodes: the ranks of the K-th node run on CPU
#                     K mod (number of CPUs) (taskset), for A/B runs that must
#                     not depend on where the scheduler puts the two ranks
#   --dry-run         print the command, do not run it
#   -v, --verbose     print the command on stderr before running it
#
# Launchers: MPICH uses mpiexec.mpich (hydra), Open MPI mpirun.openmpi (with the
# ob1 PML so that the chosen BTL is really used), Plexus $PLEXUS_BUILD/bin/pxrun
# (default build/bin/pxrun). Across emulated nodes hydra and Open MPI start
# their daemons through pxfab's ssh stand-in, $PXFAB_STATE_DIR/rsh (default
# /run/pxfab/rsh).
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PLEXUS_BUILD=${PLEXUS_BUILD:-$ROOT/build}

die() { echo "run.sh: $*" >&2; exit 2; }

usage() { sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2; }

mpi=""
np=2
net=shm
nodes=""
ppn=""
mgmt=pxf-mgmt
rails=rail0
osu_dir=""
timeout_s=300
dry=0
verbose=0
pin=0
rank_env=()

while [ $# -gt 0 ]; do
    case "$1" in
        --mpi) mpi=${2:-}; shift 2 ;;
        --np|-n) np=${2:-}; shift 2 ;;
        --net) net=${2:-}; shift 2 ;;
        --nodes) nodes=${2:-}; shift 2 ;;
        --ppn) ppn=${2:-}; shift 2 ;;
        --pin) pin=1; shift ;;
        --mgmt) mgmt=${2:-}; shift 2 ;;
        --rails) rails=${2:-}; shift 2 ;;
        --osu-dir) osu_dir=${2:-}; shift 2 ;;
        --env) rank_env+=("${2:-}"); shift 2 ;;
        --timeout) timeout_s=${2:-}; shift 2 ;;
        --dry-run) dry=1; shift ;;
        -v|--verbose) verbose=1; shift ;;
        -h|--help) usage; exit 0 ;;
        --) shift; break ;;
        -*) die "unknown option '$1' (see --help)" ;;
        *) break ;;
    esac
done
[ $# -ge 1 ] || { usage; exit 2; }
bench=$1
shift

case "$mpi" in
    mpich|openmpi|plexus) ;;
    "") die "--mpi is required (mpich, openmpi or plexus)" ;;
    *) die "unknown MPI '$mpi' (mpich, openmpi or plexus)" ;;
esac
case "$net" in shm|tcp) ;; udp|hybrid|ofi) [ "$mpi" = plexus ] || die "--net $net: Plexus only" ;;
    *) die "--net must be shm, tcp, udp, hybrid or ofi" ;; esac
[[ "$np" =~ ^[1-9][0-9]*$ ]] || die "--np must be a positive integer"
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer"

if [ "$mpi" = plexus ] && [ ! -x "$PLEXUS_BUILD/bin/pxrun" ] && [ "$dry" -eq 0 ]; then
    echo "run.sh: skipping plexus: $PLEXUS_BUILD/bin/pxrun does not exist yet (build Plexus first)." >&2
    exit 3
fi

[ -n "$osu_dir" ] || osu_dir="$ROOT/bench/.cache/osu-$mpi/src"
# a program given by its path (bench/fault.py's ft_stream) needs no OSU build
if [ ! -d "$osu_dir/c/mpi" ] && [ "$dry" -eq 0 ] && ! { [ -x "$bench" ] && [ -f "$bench" ]; }; then
    echo "run.sh: no OSU build for $mpi in $osu_dir; run bench/osu/build.sh OSU_SRC_DIR $mpi first." >&2
    exit 3
fi

# Resolve BENCH to an executable; prefer the standard/blocking variants.
resolve() {
    local b=$1 group name c
    if [ -x "$b" ] && [ -f "$b" ]; then echo "$b"; return 0; fi
    if [ -x "$osu_dir/c/mpi/$b" ] && [ -f "$osu_dir/c/mpi/$b" ]; then echo "$osu_dir/c/mpi/$b"; return 0; fi
    name=${b##*/}
    group=""
    [ "$name" != "$b" ] && group=${b%/*}
    for c in "$osu_dir/c/mpi/$group"/{standard,blocking}/"$name" \
             $(find "$osu_dir/c/mpi/$group" -type f -name "$name" -perm -u+x 2>/dev/null | sort); do
        if [ -x "$c" ] && [ -f "$c" ]; then echo "$c"; return 0; fi
    done
    return 1
}
guess() {
    # --dry-run before a build exists: the path the build would produce,
    # learnt from any other MPI's build.
    local other p
    for other in "$ROOT"/bench/.cache/osu-*/src; do
        p=$(osu_dir=$other resolve "$bench") && { echo "$osu_dir${p#"$other"}"; return 0; }
    done
    return 1
}
prog=$(resolve "$bench") || { [ "$dry" -eq 1 ] && prog=$(guess); } || {
    echo "run.sh: benchmark '$bench' not found (or not built) under $osu_dir/c/mpi" >&2
    exit 3
}

cores=$(nproc)
cmd=()
envs=()    # VAR=VALUE set for the launcher itself

if [ -z "$nodes" ]; then
    # ---- one node ----
    case "$mpi" in
        mpich)
            cmd=(mpiexec.mpich -n "$np")
            if [ "$net" = tcp ]; then
                # NOLOCAL keeps ranks of one node off the shared-memory path.
                cmd+=(-genv MPIR_CVAR_NOLOCAL 1 -genv UCX_TLS tcp,self -genv UCX_NET_DEVICES lo)
            fi
            ;;
        openmpi)
            cmd=(mpirun.openmpi -n "$np" --mca pml ob1)
            if [ "$net" = tcp ]; then
                cmd+=(--mca btl tcp,self --mca btl_tcp_if_include lo)
            else
                cmd+=(--mca btl vader,self)
            fi
            [ "$np" -gt "$cores" ] && cmd+=(--oversubscribe)
            ;;
        plexus)
            cmd=("$PLEXUS_BUILD/bin/pxrun" -n "$np")
            case "$net" in tcp|udp|ofi) cmd+=(--env PX_NET=$net) ;; hybrid) cmd+=(--env PX_NET=udp,tcp) ;;
                *) cmd+=(--env PX_NET=shm,tcp) ;; esac
            ;;
    esac
else
    # ---- emulated nodes in network namespaces ----
    [ "$(id -u)" -eq 0 ] || [ "$dry" -eq 1 ] || die "--nodes needs root (ip netns exec)"
    IFS=, read -r -a node_list <<<"$nodes"
    nn=${#node_list[@]}
    if [ "$dry" -eq 0 ]; then
        for n in "${node_list[@]}"; do
            ip netns list | grep -qw "^$n" || die "node '$n' does not exist (tools/pxfab up --nodes 2)"
        done
    fi
    if [ -z "$ppn" ]; then
        [ $((np % nn)) -eq 0 ] || die "--np $np is not a multiple of $nn nodes; give --ppn"
        ppn=$((np / nn))
    fi
    [[ "$ppn" =~ ^[1-9][0-9]*$ ]] || die "--ppn must be a positive integer"
    # Subnet of the management interface: the daemons inside the nodes see it
    # under another interface name, so Open MPI is told the subnet.
    mgmt_net=$(ip -4 route show dev "$mgmt" proto kernel scope link 2>/dev/null | awk 'NR==1{print $1}')
    if [ -z "$mgmt_net" ]; then
        [ "$dry" -eq 1 ] || die "management interface '$mgmt' not found or has no IPv4 subnet"
        mgmt_net="<subnet-of-$mgmt>"
    fi
    agent="${PXFAB_STATE_DIR:-/run/pxfab}/rsh"
    if [ "$mpi" != plexus ] && [ "$dry" -eq 0 ] && [ ! -x "$agent" ]; then
        die "$agent not found: no pxfab fabric is up (tools/pxfab up --nodes 2)"
    fi
    nrails=$(tr ',' '\n' <<<"$rails" | grep -c .)
    # Ranks of one node may use shared memory (--net shm, the default) as on
    # a real cluster; --net tcp forces TCP between them too. With one rank per
    # node both are the same job. UCX is always limited to TCP: the nodes share
    # a hostname and /dev/shm, so UCX would otherwise take shared memory
    # between ranks of different nodes and bypass the rails.
    local_tcp=0
    if [ "$net" != shm ] || [ "$ppn" -eq 1 ]; then local_tcp=1; fi
    case "$mpi" in
        mpich)
            cmd=(mpiexec.mpich -launcher ssh -launcher-exec "$agent" -iface "$mgmt"
                 -hosts "$nodes" -ppn "$ppn" -n "$np" -genv UCX_TLS tcp,self)
            [ "$local_tcp" -eq 1 ] && cmd+=(-genv MPIR_CVAR_NOLOCAL 1)
            cmd+=(-genv UCX_NET_DEVICES "$rails")
            [ "$nrails" -gt 1 ] && cmd+=(-genv UCX_MAX_RNDV_RAILS "$nrails")
            if [ "$local_tcp" -eq 1 ] && [ "$ppn" -gt 1 ]; then
                echo "run.sh: warning: MPICH 4.0.2 with MPIR_CVAR_NOLOCAL=1 and several ranks per node" \
                     "was seen to hang in MPI_Finalize" >&2
            fi
            ;;
        openmpi)
            hosts=""
            for n in "${node_list[@]}"; do hosts+="${hosts:+,}$n:$ppn"; done
            # No vader here even with several ranks per node: its segment
            # names derive from the hostname, which the nodes share, so the
            # nodes' segments collide in the common /dev/shm (ranks crash).
            if [ "$local_tcp" -eq 0 ]; then
                echo "run.sh: note: Open MPI in namespaces uses TCP also between ranks of one node" >&2
            fi
            cmd=(mpirun.openmpi --host "$hosts" -n "$np"
                 --mca plm_rsh_agent "$agent" --mca oob_tcp_if_include "$mgmt_net"
                 --mca pml ob1 --mca btl tcp,self --mca routed direct --bind-to none
                 --mca rtc_hwloc_vmhole none
                 --mca btl_tcp_if_include "$rails")
            [ "$ppn" -gt "$cores" ] && cmd+=(--oversubscribe)
            # All nodes share this machine's cores. Open MPI yields when it
            # sees oversubscription on one node; across emulated nodes it
            # cannot see it, so say so.
            [ "$np" -gt "$cores" ] && cmd+=(--mca mpi_yield_when_idle 1)
            ;;
        plexus)
            pxnet=tcp
            [ "$net" = udp ] && pxnet=udp
            [ "$net" = hybrid ] && pxnet=udp,tcp
            [ "$net" = ofi ] && pxnet=ofi
            [ "$local_tcp" -eq 1 ] || pxnet=shm,$pxnet
            launcher='ip netns exec {host}'
            [ "$pin" -eq 1 ] && launcher="$HERE/pin-exec.sh $nodes {host}"
            cmd=("$PLEXUS_BUILD/bin/pxrun" -n "$np" --hosts "$nodes" --ppn "$ppn"
                 --launcher "$launcher" --bootstrap-iface "$mgmt"
                 --env PX_NET="$pxnet" --env PX_RAILS="$rails")
            ;;
    esac
fi

if [ "$mpi" = openmpi ] && [ "$(id -u)" -eq 0 ]; then
    envs+=(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1)
fi

for e in "${rank_env[@]}"; do
    case "$mpi" in
        mpich) cmd+=(-genv "${e%%=*}" "${e#*=}") ;;
        openmpi) cmd+=(-x "$e") ;;
        plexus) cmd+=(--env "$e") ;;
    esac
done
cmd+=("$prog" "$@")

# Printable form, relative to the repository root where possible.
show() {
    local out="" a
    for a in "${envs[@]}" "${cmd[@]}"; do
        a=${a//"$ROOT/"/}
        if [[ "$a" =~ [^A-Za-z0-9_./:,=+@%-] ]]; then a="'$a'"; fi
        out+="${out:+ }$a"
    done
    echo "$out"
}

if [ "$dry" -eq 1 ]; then
    show
    exit 0
fi
[ "$verbose" -eq 1 ] && echo "+ $(show)" >&2

# timeout (not --foreground) signals the launcher's whole process group, so
# daemons and ranks cannot outlive a hung job.
exec env "${envs[@]}" timeout -k 10 "$timeout_s" "${cmd[@]}"
