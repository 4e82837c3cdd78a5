#!/usr/bin/env bash
# pxrun given bad input must say so and exit non-zero within a bounded time:
# no or unknown options, bad rank counts, a missing or non-executable
# program, a missing hostfile, a host whose launch fails, a host whose
# launch never starts anything.
#
# usage: pxrun_badinput.sh PXRUN GOOD_PROGRAM
set -u
pxrun="$1"
good="$2"
bound="${PX_BADINPUT_BOUND:-10}"           # seconds, for errors found at once
hang_bound="${PX_BADINPUT_HANG_BOUND:-30}" # seconds, for a launch that hangs

tmp=$(mktemp -d "${TMPDIR:-/tmp}/px-badinput.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failures=0
cases=0

# expect_error NAME BOUND PATTERN -- CMD...: CMD exits non-zero (not by our
# watchdog) within BOUND seconds, prints something, and the output contains
# PATTERN (case-insensitive fixed string; empty: anything).
expect_error() {
    local name="$1" limit="$2" pattern="$3"
    shift 4
    cases=$((cases + 1))
    local t0 t1 rc dt
    t0=$(date +%s.%N)
    timeout -k 5 $((limit + 30)) "$@" </dev/null >"$tmp/out" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    dt=$(awk -v a="$t1" -v b="$t0" 'BEGIN { printf "%.2f", a - b }')
    local why=""
    if [ "$rc" -eq 0 ]; then
        why="exited 0"
    elif [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        why="did not exit (killed by the test after $((limit + 30)) s)"
    elif awk -v d="$dt" -v b="$limit" 'BEGIN { exit !(d > b) }'; then
        why="took $dt s, more than $limit s"
    elif ! [ -s "$tmp/out" ]; then
        why="printed nothing"
    elif [ -n "$pattern" ] && ! grep -qiF -- "$pattern" "$tmp/out"; then
        why="message does not mention '$pattern'"
    fi
    if [ -n "$why" ]; then
        echo "FAIL $name: $why"
        sed 's/^/    | /' "$tmp/out" | head -n 10
        failures=$((failures + 1))
    else
        echo "ok   $name: exit $rc in $dt s: $(head -n 1 "$tmp/out" | cut -c1-100)"
    fi
}

# Named after itself so a leftover is recognisable in /proc.
printf '#!/bin/bash\nexec -a "$0.sleeping" sleep 3600\n' >"$tmp/hang-launcher"
chmod +x "$tmp/hang-launcher"
printf 'not a program\n' >"$tmp/not-executable"
chmod -x "$tmp/not-executable"

expect_error "no arguments" "$bound" "" -- "$pxrun"
expect_error "unknown option" "$bound" "no-such-option" -- \
    "$pxrun" --no-such-option -n 2 "$good"
expect_error "zero ranks" "$bound" "" -- "$pxrun" -n 0 "$good"
expect_error "negative ranks" "$bound" "" -- "$pxrun" -n -2 "$good"
expect_error "several programs, the first without -n" "$bound" "give each its -n" -- \
    "$pxrun" "$good" : -n 1 "$good"
expect_error "several programs, one missing" "$bound" "no program given" -- \
    "$pxrun" -n 1 "$good" : -n 1 -- : -n 1 "$good"
expect_error "non-numeric ranks" "$bound" "abc" -- "$pxrun" -n abc "$good"
expect_error "missing -n value" "$bound" "" -- "$pxrun" -n
expect_error "missing program" "$bound" "/nonexistent/px-no-such-program" -- \
    "$pxrun" -n 2 /nonexistent/px-no-such-program
expect_error "program not in PATH" "$bound" "px-no-such-program-in-path" -- \
    "$pxrun" -n 2 px-no-such-program-in-path
expect_error "non-executable program" "$bound" "not-executable" -- \
    "$pxrun" -n 2 "$tmp/not-executable"
expect_error "missing hostfile" "$bound" "/nonexistent/px-hostfile" -- \
    "$pxrun" -n 2 --hostfile /nonexistent/px-hostfile "$good"
# A remote launch that fails at once: a network namespace that does not exist.
expect_error "host launch fails" "$bound" "px-no-such-node" -- \
    "$pxrun" -n 2 --hosts px-no-such-node-a,px-no-such-node-b \
    --launcher "ip netns exec {host}" "$good"
# A remote launch that never starts anything (like an unreachable host).
expect_error "host never answers" "$hang_bound" "" -- \
    "$pxrun" -n 2 --connect-timeout 5 --hosts px-silent-node-a,px-silent-node-b \
    --launcher "$tmp/hang-launcher {host}" "$good"

# Whatever was started for those jobs must be gone.
sleep 0.5
left=""
for p in /proc/[0-9]*; do
    exe=$(readlink "$p/exe" 2>/dev/null) || continue
    [ "$exe" = "$(readlink -f "$good")" ] && left="$left ${p#/proc/}"
    args=$(tr '\0' ' ' <"$p/cmdline" 2>/dev/null) || continue
    case "$args" in *"$tmp/hang-launcher"*) left="$left ${p#/proc/}" ;; esac
done
if [ -n "$left" ]; then
    echo "FAIL leftover processes:$left"
    for p in $left; do kill -KILL "$p" 2>/dev/null; done
    failures=$((failures + 1))
fi

echo "pxrun_badinput: $((cases - failures)) of $cases cases ok"
[ "$failures" -eq 0 ]
