#!/bin/bash
# Run OSU's one-sided benchmarks against Plexus with every window creation
# (-w create, allocate, dynamic) and synchronisation (-s lock, flush,
# flush_local, lock_all, pscw, fence) option they accept, with their own data
# validation (-c) where OSU has it (osu_acc_latency, osu_cas_latency,
# osu_fop_latency; the others refuse -c and are run without it), and print
# one line per benchmark.
#
#   bench/osu/validate_rma.sh [--net shm|tcp] [--nodes A,B --mgmt IF --rails R] [--args ARGS]
#
# A run passes when it exits 0 and prints result rows, and, when validating,
# no row says "Fail". A combination OSU refuses ("Invalid option") is n/a, as
# is -w allocate for osu_fop_latency and osu_cas_latency (OSU frees the
# window's memory itself at the end; every MPI library crashes there).
# Needs bench/osu/build.sh OSU_SRC plexus. Benchmarks print figures and never
# fail a build: this is a check to run by hand, e.g. after changing the
# one-sided code.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
net=shm
place=()
args="-m 1:1048576 -i 20 -x 2"
while [ $# -gt 0 ]; do
    case "$1" in
        --net) net=$2; shift 2 ;;
        --nodes|--mgmt|--rails) place+=("$1" "$2"); shift 2 ;;
        --args) args=$2; shift 2 ;;
        -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
        *) echo "validate_rma.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
[ ${#place[@]} -eq 0 ] && place=(--net "$net")
log=$(mktemp -d /tmp/osu-rma.XXXXXX)
total=0 failed=0
for b in osu_put_latency osu_get_latency osu_put_bw osu_get_bw osu_put_bibw osu_acc_latency \
         osu_get_acc_latency osu_fop_latency osu_cas_latency; do
    line="$b:"
    for w in create allocate dynamic; do
        for s in lock flush flush_local lock_all pscw fence; do
            # OSU 7.4's osu_fop_latency and osu_cas_latency free() the memory
            # MPI_Win_allocate gave them when they end (free_atomic_memory):
            # MPICH and Open MPI crash there as well
            case "$b/$w" in osu_fop_latency/allocate|osu_cas_latency/allocate) continue ;; esac
            out="$log/$b-$w-$s.txt"
            # shellcheck disable=SC2086
            "$HERE/run.sh" --mpi plexus --np 2 "${place[@]}" --timeout 120 one-sided/$b -c -w $w -s $s $args >"$out" 2>&1
            rc=$?
            if grep -q -e "does not support validation" -e "Invalid option \[-c\]" "$out"; then
                # shellcheck disable=SC2086
                "$HERE/run.sh" --mpi plexus --np 2 "${place[@]}" --timeout 120 one-sided/$b -w $w -s $s $args >"$out" 2>&1
                rc=$?
            fi
            if grep -q "Invalid option or invalid argument" "$out"; then
                continue
            fi
            total=$((total + 1))
            if [ $rc -eq 0 ] && grep -Eq '^[0-9]+ ' "$out" && ! grep -Eq 'Fail|FAILED' "$out"; then
                line="$line $w/$s ok"
            else
                line="$line $w/$s FAILED(rc=$rc)"
                failed=$((failed + 1))
            fi
        done
    done
    echo "$line"
done
echo "validate_rma: $((total - failed)) of $total runs passed (outputs in $log)"
[ $failed -eq 0 ]
