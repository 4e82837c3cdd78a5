#!/bin/bash
# Run the OSU Micro-Benchmarks with their own data validation (-c) against
# Plexus over a range of rank counts and networks, and summarise the outcome.
#
#   bench/osu/validate.sh [options]
#
# Benchmarks: every built binary of mpi/pt2pt (standard, persistent, congestion)
# and mpi/collective (blocking, non_blocking, neighborhood). Point-to-point
# benchmarks only run at the rank counts they accept: two ranks, or an even
# number for osu_mbw_mr and osu_multi_lat. osu_barrier/osu_ibarrier have no
# validation and are only checked for completing (they get no -c, -m, -T, -u).
# The congestion benchmarks have no validation either and need several nodes:
# they run with --nodes (emulated nodes of a pxfab fabric, tools/pxfab up
# --nodes 2; pxrun only) and are n/a otherwise. osu_latency_mt runs
# with -t 2:2 (OSU wants as many sender as receiver threads with -c).
# Neighborhood benchmarks use OSU's default Cartesian neighbourhood, or at two
# ranks (where OSU refuses it) a ring given as a graph.
#
# A run passes when it exits 0 and, for validating benchmarks, prints at least
# one result row and every result row ends in OSU's "Pass" (a "Fail" row or a
# "FAILED" message is a validation failure).
#
# Options:
#   --osu-dir DIR   OSU build: a build.sh destination or its src/ (default
#                   bench/.cache/osu-plexus)
#   --build DIR     Plexus build directory whose bin/pxrun is used (default
#                   $PLEXUS_BUILD or <repo>/build)
#   --mpirun CMD    launcher command, split on spaces (default DIR/bin/pxrun);
#                   it is given '-n NP' and, for pxrun, '--env PX_NET=...'
#   --np LIST       rank counts, comma-separated or ranges (default 2-8)
#   --net LIST      networks: shm (PX_NET=shm,tcp) and/or tcp (PX_NET=tcp)
#                   (default shm,tcp)
#   --only REGEX    only benchmarks whose path (e.g. blocking/osu_bcast) matches
#   --args ARGS     OSU arguments besides -c (default '-m 1:1048576 -i 20 -x 2')
#   --timeout S     seconds per run (default 180)
#   --log DIR       keep each run's output there (default
#                   bench/.cache/osu-validate/<date>)
#   --markdown FILE also write the summary as a Markdown table
#   --nodes A,B     run the congestion benchmarks (even rank counts) across
#                   these pxfab nodes, rail0 as data interface and
#                   --mgmt IFACE (default pxf-mgmt) for bootstrap
#   --strict        count n/a and unsupported results as failures
#   -q, --quiet     no line per run, only the summary
#
# Cells: ok, FAIL (validation), T/O (timeout), CRASH (signal or non-zero
# exit), unsup (the benchmark needs an MPI feature Plexus lacks), n/a (not
# runnable on one node), "." (rank count not applicable). Exit status 1 when
# any run is FAIL, T/O or CRASH (with --strict also unsup/n/a), 2 on bad usage.
set -u

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)

die() { echo "validate.sh: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2; }

osu_dir="$ROOT/bench/.cache/osu-plexus"
build=${PLEXUS_BUILD:-$ROOT/build}
mpirun=""
np_list="2-8"
net_list="shm,tcp"
only=""
osu_args="-m 1:1048576 -i 20 -x 2"
timeout_s=180
logdir=""
markdown=""
strict=0
quiet=0
nodes=""
mgmt=pxf-mgmt

while [ $# -gt 0 ]; do
    case "$1" in
        --osu-dir) osu_dir=${2:-}; shift 2 ;;
        --build) build=${2:-}; shift 2 ;;
        --mpirun) mpirun=${2:-}; shift 2 ;;
        --np) np_list=${2:-}; shift 2 ;;
        --net) net_list=${2:-}; shift 2 ;;
        --only) only=${2:-}; shift 2 ;;
        --args) osu_args=${2:-}; shift 2 ;;
        --timeout) timeout_s=${2:-}; shift 2 ;;
        --log) logdir=${2:-}; shift 2 ;;
        --markdown) markdown=${2:-}; shift 2 ;;
        --nodes) nodes=${2:-}; shift 2 ;;
        --mgmt) mgmt=${2:-}; shift 2 ;;
        --strict) strict=1; shift ;;
        -q|--quiet) quiet=1; shift ;;
        -h|--help) usage; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done

[ -d "$osu_dir/src/c/mpi" ] && osu_dir="$osu_dir/src"
[ -d "$osu_dir/c/mpi" ] || die "no OSU build in '$osu_dir' (bench/osu/build.sh SRC plexus)"
[[ "$timeout_s" =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive integer"
if [ -z "$mpirun" ]; then
    mpirun="$build/bin/pxrun"
    [ -x "$mpirun" ] || die "$mpirun does not exist (build Plexus, or give --build/--mpirun)"
fi
read -r -a launcher <<<"$mpirun"
is_pxrun=0
[ "$(basename "${launcher[0]}")" = pxrun ] && is_pxrun=1

# Expand "2-4,6,8" into "2 3 4 6 8".
nps=()
IFS=, read -r -a parts <<<"$np_list"
for p in "${parts[@]}"; do
    if [[ "$p" =~ ^([0-9]+)-([0-9]+)$ ]]; then
        for ((i = BASH_REMATCH[1]; i <= BASH_REMATCH[2]; i++)); do nps+=("$i"); done
    elif [[ "$p" =~ ^[0-9]+$ ]]; then
        nps+=("$p")
    else
        die "bad --np element '$p'"
    fi
done
[ ${#nps[@]} -gt 0 ] || die "--np is empty"
IFS=, read -r -a nets <<<"$net_list"
for n in "${nets[@]}"; do
    case "$n" in shm|tcp) ;; *) die "--net elements are shm or tcp, not '$n'" ;; esac
done

[ -n "$logdir" ] || logdir="$ROOT/bench/.cache/osu-validate/$(date +%Y%m%d-%H%M%S)"
mkdir -p "$logdir" || die "cannot create $logdir"

benches=()
for group in pt2pt/standard pt2pt/persistent pt2pt/congestion \
             collective/blocking collective/non_blocking collective/neighborhood; do
    for b in $(find "$osu_dir/c/mpi/$group" -maxdepth 1 -type f -name 'osu_*' -perm -u+x | sort); do
        rel="${group#*/}/$(basename "$b")"
        [ -z "$only" ] || [[ "$rel" =~ $only ]] || continue
        benches+=("$group/$(basename "$b")")
    done
done
[ ${#benches[@]} -gt 0 ] || die "no benchmark matches"

# Whether benchmark $1 runs at $2 ranks.
applies() {
    local name=${1##*/} np=$2
    case "$1" in
        pt2pt/standard/osu_mbw_mr|pt2pt/standard/osu_multi_lat) [ $((np % 2)) -eq 0 ] ;;
        pt2pt/congestion/*) [ "$np" -ge 2 ] && [ $((np % 2)) -eq 0 ] ;;
        pt2pt/*) [ "$np" -eq 2 ] ;;
        *) [ "$np" -ge 2 ] ;;
    esac
}

# OSU's default neighborhood (a 1-D periodic Cartesian grid of radius 1)
# needs three ranks; at two the benchmarks get a graph: a ring both ways.
graph_file() {
    local np=$1 f="$logdir/ring$1.adj" i
    if [ ! -f "$f" ]; then
        {
            echo "# source, destination"
            for ((i = 0; i < np; i++)); do
                echo "$i, $(((i + 1) % np))"
                [ $(((i + np - 1) % np)) -ne $(((i + 1) % np)) ] && echo "$i, $(((i + np - 1) % np))"
            done
        } >"$f"
    fi
    echo "$f"
}

# OSU arguments for benchmark $1 at $2 ranks.
bench_args() {
    case "$1" in
        */neighborhood/*)
            if [ "$2" -lt 3 ]; then echo "-c -Ngraph:$(graph_file "$2") $osu_args"; else echo "-c $osu_args"; fi ;;
        */osu_barrier|*/osu_ibarrier)
            # No validation and no message sizes: keep only -i/-x.
            echo "$osu_args" | sed -E 's/(^| )-[mTu] +[^ ]+//g; s/(^| )-c//g' ;;
        pt2pt/congestion/*)
            # No validation either.
            echo "$osu_args" | sed -E 's/(^| )-[Tu] +[^ ]+//g; s/(^| )-c//g' ;;
        */osu_latency_mt) echo "-c -t 2:2 $osu_args" ;;
        *) echo "-c $osu_args" ;;
    esac
}

# Classify one run: $1 benchmark, $2 exit code, $3 log file.
classify() {
    local b=$1 rc=$2 log=$3
    if grep -q "must return MPI_THREAD_MULTIPLE" "$log"; then echo unsup; return; fi
    if grep -Eq "FAILED|[Ff]ailed validation|Validation Failed" "$log"; then echo FAIL; return; fi
    # Result rows: lines of numbers, the validation column last.
    if grep -Eq '^[[:space:]]*[0-9]+[[:space:]].*[[:space:]]Fail[[:space:]]*$' "$log"; then
        echo FAIL; return
    fi
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then echo T/O; return; fi
    if [ "$rc" -ne 0 ]; then echo CRASH; return; fi
    case "$b" in
        */osu_barrier|*/osu_ibarrier|pt2pt/congestion/*)
            grep -Eq '^[[:space:]]*[0-9]+(\.[0-9]+)?([[:space:]]|$)' "$log" && echo ok || echo FAIL ;;
        *)
            local rows pass
            rows=$(grep -Ec '^[0-9]+[[:space:]]+[0-9]' "$log")
            pass=$(grep -Ec '^[0-9]+[[:space:]]+[0-9].*[[:space:]]Pass[[:space:]]*$' "$log")
            if [ "$rows" -gt 0 ] && [ "$rows" -eq "$pass" ]; then echo ok; else echo FAIL; fi ;;
    esac
}

declare -A result
failures=0
soft=0
runs=0
start=$(date +%s)
for b in "${benches[@]}"; do
    key=${b#*/}
    for net in "${nets[@]}"; do
        for np in "${nps[@]}"; do
            if ! applies "$b" "$np"; then result[$key,$net,$np]="."; continue; fi
            multi=0
            if [[ "$b" == pt2pt/congestion/* ]]; then
                if [ -z "$nodes" ] || [ "$is_pxrun" -eq 0 ]; then
                    # OSU refuses these when every rank reports the same host.
                    result[$key,$net,$np]="n/a"; soft=$((soft + 1)); continue
                fi
                multi=1
            fi
            pxnet=shm,tcp
            [ "$net" = tcp ] && pxnet=tcp
            log="$logdir/${key//\//_}.np$np.$net.log"
            cmd=("${launcher[@]}" -n "$np")
            if [ "$multi" -eq 1 ]; then
                nn=$(tr ',' '\n' <<<"$nodes" | grep -c .)
                cmd+=(--hosts "$nodes" --ppn $((np / nn)) --launcher 'ip netns exec {host}'
                      --bootstrap-iface "$mgmt" --env PX_IFACE=rail0)
            fi
            [ "$is_pxrun" -eq 1 ] && cmd+=(--env "PX_NET=$pxnet")
            read -r -a args <<<"$(bench_args "$b" "$np")"
            cmd+=("$osu_dir/c/mpi/$b" "${args[@]}")
            echo "+ PX_NET=$pxnet ${cmd[*]}" >"$log"
            t0=$(date +%s.%N)
            PX_NET=$pxnet timeout -k 10 "$timeout_s" "${cmd[@]}" >>"$log" 2>&1 </dev/null
            rc=$?
            t1=$(date +%s.%N)
            echo "+ exit $rc" >>"$log"
            r=$(classify "$b" "$rc" "$log")
            result[$key,$net,$np]=$r
            runs=$((runs + 1))
            case "$r" in
                ok) ;;
                unsup|n/a) soft=$((soft + 1)) ;;
                *) failures=$((failures + 1)) ;;
            esac
            [ "$quiet" -eq 1 ] || printf '%-34s np=%-2s %-4s %-6s %6.1fs\n' "$key" "$np" "$net" "$r" \
                "$(awk -v a="$t0" -v b="$t1" 'BEGIN{print b-a}')"
        done
    done
done
elapsed=$(( $(date +%s) - start ))

# Summary: one row per benchmark, one column per (net, np).
print_table() {
    local md=$1 header="benchmark" sep="---" b net np row
    for net in "${nets[@]}"; do for np in "${nps[@]}"; do
        header+=" | $net $np"; sep+=" | ---"
    done; done
    if [ "$md" -eq 1 ]; then
        echo "| $header |"; echo "| $sep |"
    else
        printf '%-36s' "benchmark"
        for net in "${nets[@]}"; do printf ' |%s' "$(printf ' %-5s' $(for np in "${nps[@]}"; do echo "$net$np"; done))"; done
        echo
    fi
    for b in "${benches[@]}"; do
        key=${b#*/}
        if [ "$md" -eq 1 ]; then
            row="$key"
            for net in "${nets[@]}"; do for np in "${nps[@]}"; do row+=" | ${result[$key,$net,$np]}"; done; done
            echo "| $row |"
        else
            printf '%-36s' "$key"
            for net in "${nets[@]}"; do
                printf ' |'
                for np in "${nps[@]}"; do printf ' %-5s' "${result[$key,$net,$np]}"; done
            done
            echo
        fi
    done
}

echo
print_table 0
echo
echo "runs: $runs, failed (FAIL/T/O/CRASH): $failures, unsupported or n/a: $soft, time: ${elapsed}s"
echo "OSU arguments: -c $osu_args; launcher: $mpirun; logs: $logdir"
[ -n "$markdown" ] && print_table 1 >"$markdown"

[ "$failures" -eq 0 ] || exit 1
[ "$strict" -eq 1 ] && [ "$soft" -gt 0 ] && exit 1
exit 0
