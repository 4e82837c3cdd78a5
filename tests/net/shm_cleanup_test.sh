#!/bin/sh
# Shared-memory segments are private to the job and gone after it ends,
# whether it ends normally or a rank is killed mid-run.
#   shm_cleanup_test.sh PXRUN IDLE_JOB
set -u
pxrun=$1
prog=$2
before=$(ls /dev/shm | grep -c '^plexus-' || true)
fail=0

"$pxrun" -n 4 "$prog" 1 >/dev/null 2>&1 || { echo "FAIL: normal job failed"; fail=1; }
after=$(ls /dev/shm | grep -c '^plexus-' || true)
[ "$after" -le "$before" ] || { echo "FAIL: $((after - before)) segment(s) left after a normal job"; fail=1; }

# kill a rank while the job runs: the job ends, nothing stays in /dev/shm
"$pxrun" -n 4 "$prog" 5 >/dev/null 2>&1 &
job=$!
sleep 1.5
victim=$(pgrep -f "^$prog 5" | head -n 1)
[ -n "$victim" ] && kill -9 "$victim"
wait $job
rc=$?
[ "$rc" -ne 0 ] || { echo "FAIL: job with a killed rank exited 0"; fail=1; }
sleep 0.5
after=$(ls /dev/shm | grep -c '^plexus-' || true)
[ "$after" -le "$before" ] || { echo "FAIL: segment left after a rank was killed"; fail=1; }
[ -z "$(pgrep -f "^$prog 5")" ] || { echo "FAIL: ranks left running"; fail=1; }

[ $fail = 0 ] && echo "PASS shm cleanup: no segment after a normal job or a killed rank"
exit $fail
