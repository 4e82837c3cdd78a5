#!/bin/sh
# A real Slurm cluster on this one host, from Debian's packages (slurmctld,
# slurmd, munge), to run Plexus jobs with srun and sbatch as on a cluster.
#
#   scripts/slurm-local.sh up [--cpus N]   start munged, slurmctld and one slurmd
#   scripts/slurm-local.sh up --pxfab      one slurmd in each node of the pxfab
#                                          fabric that is up (tools/pxfab up ...):
#                                          a cluster of several nodes
#   scripts/slurm-local.sh down            stop them and remove the state
#   scripts/slurm-local.sh env             print the export that points srun here
#
# Everything lives in $PX_SLURM_DIR (default /tmp/plexus-slurm): slurm.conf,
# state, logs. srun, sbatch and sinfo find the cluster through SLURM_CONF:
#   eval "$(scripts/slurm-local.sh env)"; srun --mpi=pmi2 -n 4 ./prog
# The node declares --cpus CPUs (default 8) whatever the machine has, so that
# jobs of several tasks run on a small machine (SlurmdParameters=config_overrides).
# Needs root (the daemons run as root, munged as munge); install the packages
# with scripts/install-deps.sh.
set -eu

DIR=${PX_SLURM_DIR:-/tmp/plexus-slurm}
CONF=$DIR/slurm.conf
CTLD_PORT=${PX_SLURM_PORT:-6817}
SLURMD_PORT=$((CTLD_PORT + 1))
NODE=px0
CPUS=8
PXFAB=0
HERE=$(cd "$(dirname "$0")" && pwd)

die() { echo "slurm-local: $*" >&2; exit 1; }

munge_ok() { munge -n 2>/dev/null | unmunge >/dev/null 2>&1; }

start_munge() {
    munge_ok && return 0
    command -v munged >/dev/null || die "munged not found (scripts/install-deps.sh installs munge)"
    [ -s /etc/munge/munge.key ] || {
        # Debian's package makes the key at install; a clean image may lack it
        dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
        chown munge:munge /etc/munge/munge.key
        chmod 400 /etc/munge/munge.key
    }
    mkdir -p /run/munge /var/log/munge /var/lib/munge
    chown munge:munge /run/munge /var/log/munge /var/lib/munge
    runuser -u munge -- /usr/sbin/munged
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        munge_ok && return 0
        sleep 0.2
    done
    die "munged does not answer (see /var/log/munge/munged.log)"
}

write_conf() {
    mkdir -p "$DIR/ctld" "$DIR/spool" "$DIR/tmp"
    cat > "$CONF" <<EOF
# Written by scripts/slurm-local.sh: a one-host cluster for Plexus's tests.
ClusterName=plexus
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SwitchType=switch/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
StateSaveLocation=$DIR/ctld
TmpFS=$DIR/tmp
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/slurmctld.pid
SlurmdPidFile=$DIR/slurmd-%n.pid
SlurmctldLogFile=$DIR/slurmctld.log
SlurmdLogFile=$DIR/slurmd-%n.log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
KillWait=5
MessageTimeout=20
InactiveLimit=0
EOF
    if [ "$PXFAB" -eq 1 ]; then
        # each node at its management address, slurmctld on the bridge
        while read -r addr name; do
            case "$name" in
                pxfab-host) ;;
                *) echo "NodeName=$name NodeHostname=$(hostname) NodeAddr=$addr CPUs=$CPUS State=UNKNOWN" ;;
            esac
        done < "$DIR/hosts" >> "$CONF"
        ctl=$(awk '$2 == "pxfab-host" { print $1 }' "$DIR/hosts")
        sed -i "s/^SlurmctldHost=.*/SlurmctldHost=$(hostname)($ctl)/" "$CONF"
    else
        echo "NodeName=$NODE NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$CPUS State=UNKNOWN" >> "$CONF"
    fi
    echo "PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES" >> "$CONF"
}

up() {
    [ "$(id -u)" -eq 0 ] || die "needs root"
    command -v slurmctld >/dev/null && command -v slurmd >/dev/null ||
        die "slurmctld/slurmd not found (scripts/install-deps.sh installs them)"
    if [ -f "$DIR/slurmctld.pid" ] && kill -0 "$(cat "$DIR/slurmctld.pid")" 2>/dev/null; then
        echo "slurm-local: already up ($CONF)"
        return 0
    fi
    start_munge
    mkdir -p "$DIR"
    nodes=$NODE
    if [ "$PXFAB" -eq 1 ]; then
        "$HERE/../tools/pxfab" export --format hosts > "$DIR/hosts" ||
            die "no pxfab fabric is up (tools/pxfab up --nodes N ...)"
        nodes=$(awk '$2 != "pxfab-host" { print $2 }' "$DIR/hosts")
    fi
    write_conf
    slurmctld -f "$CONF" -i
    for n in $nodes; do
        mkdir -p "$DIR/spool/$n"
        if [ "$PXFAB" -eq 1 ]; then
            # nsenter keeps /sys (ip netns exec remounts it, and slurmd wants
            # the cgroup tree); each node gets a TmpFS of its own, as real
            # nodes have (PMIx's plugin keeps per-step files there)
            mkdir -p "$DIR/tmp-$n"
            nsenter --net=/run/netns/"$n" unshare --mount --propagation private \
                sh -c "mount --bind '$DIR/tmp-$n' '$DIR/tmp' && exec slurmd -f '$CONF' -N '$n'"
        else
            slurmd -f "$CONF" -N "$n"
        fi
    done
    export SLURM_CONF="$CONF"
    want=$(echo $nodes | wc -w)
    # up when every node takes jobs
    for _ in $(seq 1 150); do
        if [ "$(sinfo -h -N -o '%t' 2>/dev/null | grep -cE '^(idle|mix|alloc)')" -ge "$want" ]; then
            echo "slurm-local: up: $(echo $nodes) with $CPUS CPUs each ($CONF)"
            return 0
        fi
        sleep 0.2
    done
    sinfo -N 2>&1 || true
    tail -20 "$DIR"/slurm*.log 2>/dev/null || true
    die "the node did not come up"
}

down() {
    for f in "$DIR"/slurmd-*.pid "$DIR/slurmctld.pid"; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        kill "$pid" 2>/dev/null || true
        for _ in $(seq 1 50); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -rf "$DIR"
    echo "slurm-local: down"
}

cmd=${1:-}
[ $# -gt 0 ] && shift
while [ $# -gt 0 ]; do
    case "$1" in
        --cpus) CPUS=$2; shift 2 ;;
        --pxfab) PXFAB=1; shift ;;
        *) die "unknown option $1" ;;
    esac
done
case "$cmd" in
    up) up ;;
    down) down ;;
    env) echo "export SLURM_CONF=$CONF" ;;
    *) echo "usage: $0 up [--cpus N] | down | env" >&2; exit 2 ;;
esac
