#!/usr/bin/env bash
# Two pxrun jobs meet through a port whose name goes from one to the other in
# a file (tests/mpi/dyn_twojobs.c): both must end within the bound, exit 0,
# and print their PASS lines.
#
# usage: dyn_twojobs.sh PXRUN PROGRAM NP_ACCEPT NP_CONNECT [refuse] [PXRUN OPTIONS...]
set -u
pxrun="$1" prog="$2" na="$3" nc="$4"
shift 4
extra=
if [ "${1:-}" = refuse ]; then
    extra=refuse
    shift
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/px-twojobs.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
"$pxrun" -n "$na" --timeout 60 "$@" "$prog" accept "$tmp/port" "$nc" $extra >"$tmp/a.out" 2>&1 &
apid=$!
"$pxrun" -n "$nc" --timeout 60 "$@" "$prog" connect "$tmp/port" "$na" $extra >"$tmp/c.out" 2>&1
crc=$?
wait "$apid"
arc=$?
echo "--- accepting job (exit $arc)"
cat "$tmp/a.out"
echo "--- connecting job (exit $crc)"
cat "$tmp/c.out"
grep -q "^PASS dyn_twojobs np=$na:" "$tmp/a.out" && grep -q "^PASS dyn_twojobs np=$nc:" "$tmp/c.out" &&
    [ "$arc" = 0 ] && [ "$crc" = 0 ] && echo "both jobs passed" && exit 0
echo "FAIL: two jobs"
exit 1
