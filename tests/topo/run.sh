# Sourced by the MPI job scripts of this folder: run EXIT REGEX PXRUN-ARGS...
# starts a job with "$pxrun" on hosts named through --hosts (the launcher
# starts them all here, PXTEST_HOST naming each rank's host) and counts a
# pass when it exits as wanted (0, or non-zero for anything else) and its
# output matches REGEX; lines matching $show (when set) are printed.
pass=0
fail=0
show=${show:-}
run() {
    want=$1
    re=$2
    shift 2
    out=$(timeout 120 "$pxrun" --launcher 'env PXTEST_HOST={host}' "$@" 2>&1)
    rc=$?
    if { [ "$want" = 0 ] && [ $rc -eq 0 ]; } || { [ "$want" != 0 ] && [ $rc -ne 0 ]; }; then
        if printf '%s\n' "$out" | grep -Eq "$re"; then
            pass=$((pass + 1))
            [ -z "$show" ] || printf '%s\n' "$out" | grep -E "$show"
            return
        fi
    fi
    fail=$((fail + 1))
    echo "FAIL (exit $rc, wanted $want, output /$re/): $*"
    printf '%s\n' "$out" | tail -20
}
