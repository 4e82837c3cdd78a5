#!/usr/bin/env bash
# Runs one MPI job through a launcher and checks how it ended:
#   - the launcher's exit code: K (default 0) or "nonzero";
#   - for an expected failure, the job ended at most BOUND seconds after the
#     failing rank printed "PX_FAULT_MARK ... t=<epoch seconds>" (taken on the
#     rank's own clock);
#   - the output matches REGEX, if given (a test's "PASS <name> np=<N>:" line,
#     which also proves all N ranks were in one job; or a failure message);
#     --output may be given several times, and each must match;
#   - no process running PROG is left once the launcher has returned.
#
# usage: run_expect.sh [--expect K|nonzero] --prog PATH [--bound S] [--output REGEX]
#                      -- LAUNCHER ARGS...
set -u

expect="0"
prog=""
bound="${PX_EXPECT_BOUND:-2.5}"
regexes=()
while [ $# -gt 0 ]; do
    case "$1" in
    --expect) expect="$2"; shift 2 ;;
    --prog) prog="$2"; shift 2 ;;
    --bound) bound="$2"; shift 2 ;;
    --output) regexes+=("$2"); shift 2 ;;
    --) shift; break ;;
    *) echo "run_expect.sh: unknown option '$1'" >&2; exit 2 ;;
    esac
done
if [ -z "$prog" ] || [ $# -eq 0 ]; then
    echo "usage: run_expect.sh [--expect K|nonzero] --prog PATH [--bound S]" \
         "[--output REGEX] -- LAUNCHER ARGS..." >&2
    exit 2
fi
prog_real=$(readlink -f -- "$prog") || { echo "run_expect.sh: no such program $prog" >&2; exit 2; }

out=$(mktemp "${TMPDIR:-/tmp}/px-expect.XXXXXX")
trap 'rm -f "$out"' EXIT

"$@" >"$out" 2>&1
rc=$?
end=$(date +%s.%N)
cat "$out"

failures=0
fail() {
    echo "run_expect: FAIL: $*"
    failures=$((failures + 1))
}

# 1. Exit code.
if [ "$expect" = nonzero ]; then
    [ "$rc" -ne 0 ] || fail "launcher exited 0, expected a failure"
elif [ "$rc" -ne "$expect" ]; then
    fail "launcher exited $rc, expected $expect"
fi

# 2. Time from the failure to the end of the job (expected failures only).
mark=$(grep -o 'PX_FAULT_MARK rank=[0-9]* t=[0-9.]*' "$out" | head -n 1 | sed 's/.*t=//')
if [ "$expect" = 0 ]; then
    :
elif [ -z "$mark" ]; then
    fail "no PX_FAULT_MARK line in the output (the failing rank's output was lost)"
else
    delay=$(awk -v a="$end" -v b="$mark" 'BEGIN { printf "%.3f", a - b }')
    if awk -v d="$delay" -v b="$bound" 'BEGIN { exit !(d > b) }'; then
        fail "job ended ${delay} s after the failure, more than ${bound} s"
    else
        echo "run_expect: job ended ${delay} s after the failure (bound ${bound} s)"
    fi
fi

# 3. Message.
for regex in "${regexes[@]}"; do
    if ! grep -Eq -- "$regex" "$out"; then
        fail "output does not match /$regex/"
    fi
done

# 4. Leftovers: processes whose executable is PROG. Give a short grace for
#    exits already under way, then report and remove them.
leftovers() {
    local p exe
    for p in /proc/[0-9]*; do
        exe=$(readlink "$p/exe" 2>/dev/null) || continue
        [ "$exe" = "$prog_real" ] && echo "${p#/proc/}"
    done
}
left=""
for _ in 1 2 3 4 5 6 7 8 9 10; do
    left=$(leftovers)
    [ -z "$left" ] && break
    sleep 0.1
done
if [ -n "$left" ]; then
    fail "processes of $prog_real still running after the job ended: $(echo $left)"
    ps -o pid,ppid,stat,etime,args -p "$(echo $left | tr ' ' ',')" || true
    for p in $left; do kill -KILL "$p" 2>/dev/null; done
fi

if [ "$failures" -eq 0 ]; then
    echo "run_expect: PASS (exit $rc)"
    exit 0
fi
exit 1
