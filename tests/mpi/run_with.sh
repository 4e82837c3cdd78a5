#!/usr/bin/env bash
# Runs the testlist with any MPI launcher, against programs built elsewhere
# (this script builds nothing). Used to check the tests themselves on other
# MPI implementations, e.g. programs built with Debian's mpicc.mpich:
#
#   for f in tests/mpi/*.c; do mpicc.mpich -O2 -o /tmp/pxt/$(basename ${f%.c}) $f; done
#   tests/mpi/run_with.sh -d /tmp/pxt mpiexec.mpich
#   tests/mpi/run_with.sh -d build/tests/mpi -e PX_NET=tcp build/bin/pxrun
#
# usage: run_with.sh [-d BINDIR] [-f TESTLIST] [-n NPLIST] [-k REGEX]
#                    [-e VAR=VAL]... LAUNCHER [LAUNCHER ARGS...]
# The launcher is called as: LAUNCHER [ARGS] -n N BINDIR/program, with the
# testlist's env= settings (and -e ones) in its environment.
set -u
here=$(cd "$(dirname "$0")" && pwd)
bindir=.
testlist="$here/testlist"
nplist=""
filter=""
extra_env=()
while getopts "d:f:n:k:e:h" opt; do
    case "$opt" in
    d) bindir="$OPTARG" ;;
    f) testlist="$OPTARG" ;;
    n) nplist=",$OPTARG," ;;
    k) filter="$OPTARG" ;;
    e) extra_env+=("$OPTARG") ;;
    *) sed -n '2,14p' "$0"; exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { sed -n '2,14p' "$0"; exit 2; }
launcher=("$@")

pass=0
fail=0
failed=()
t_all=$(date +%s.%N)
log=$(mktemp "${TMPDIR:-/tmp}/px-run-with.XXXXXX")
trap 'rm -f "$log"' EXIT

while read -r prog nps rest; do
    case "$prog" in '' | \#*) continue ;; esac
    [ -n "$filter" ] && ! [[ "$prog" =~ $filter ]] && continue
    envs=("${extra_env[@]}")
    timeout=60
    expect=0
    regex=""
    for opt in $rest; do
        case "$opt" in
        env=*) envs+=("${opt#env=}") ;;
        timeout=*) timeout="${opt#timeout=}" ;;
        expect_exit=*) expect="${opt#expect_exit=}" ;;
        expect_output=*) regex="${opt#expect_output=}" ;;
        *) echo "run_with.sh: $prog: unknown option '$opt'" >&2 ;;
        esac
    done
    exe="$bindir/$prog"
    if [ ! -x "$exe" ]; then
        echo "MISSING $prog ($exe)"
        fail=$((fail + 1))
        failed+=("$prog")
        continue
    fi
    for np in ${nps//,/ }; do
        [ -n "$nplist" ] && [[ "$nplist" != *",$np,"* ]] && continue
        [ "$expect" = 0 ] && want="${regex:-PASS $prog np=$np:}" || want="$regex"
        t0=$(date +%s.%N)
        env "${envs[@]}" bash "$here/run_expect.sh" --expect "$expect" --prog "$exe" \
            ${want:+--output "$want"} -- \
            timeout -k 5 "$timeout" "${launcher[@]}" -n "$np" "$exe" </dev/null >"$log" 2>&1
        rc=$?
        dt=$(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
        if [ $rc -eq 0 ]; then
            echo "PASS $prog np=$np (${dt} s)"
            pass=$((pass + 1))
        else
            echo "FAIL $prog np=$np (${dt} s)"
            sed 's/^/    | /' "$log" | tail -n 25
            fail=$((fail + 1))
            failed+=("$prog/np$np")
        fi
    done
done <"$testlist"

total=$(awk -v a="$(date +%s.%N)" -v b="$t_all" 'BEGIN { printf "%.1f", a - b }')
echo "run_with: $pass passed, $fail failed in ${total} s${failed:+: ${failed[*]}}"
[ "$fail" -eq 0 ]
