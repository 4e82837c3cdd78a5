#!/bin/sh
# Install what building and testing Plexus needs on Debian 12.
#
#   scripts/install-deps.sh            build + test dependencies
#   scripts/install-deps.sh --peers    also MPICH, Open MPI and the autotools used
#                                      to build benchmark suites against them
#
# Quick and idempotent: apt is not touched when every package is already installed.
# Installing needs root; as an ordinary user the script only checks and says what
# to run.
set -eu

BASE_PKGS="build-essential cmake ninja-build meson gfortran pkg-config python3 python3-pytest python3-venv
python3-dev python3-pip clang-format
iproute2 nftables ethtool procps psmisc
libpmix-dev libpmix2 libpmi2-0 slurmd slurmctld slurm-client munge
libfabric-dev libfabric-bin libjansson-dev libmetis-dev metis
libmpich-dev libhdf5-mpich-dev libscalapack-mpich-dev scalapack-mpi-test libcoarrays-mpich-dev
nwchem-mpich
chromium
libsimgrid-dev"
PEER_PKGS="openmpi-bin libopenmpi-dev mpich autoconf automake libtool mptcpd"

usage() {
    echo "usage: $0 [--peers] [--check]" >&2
    echo "  --peers  also install MPICH, Open MPI, autotools and mptcpd (for bench/)" >&2
    echo "  --check  only report missing packages; exit 1 if any are missing" >&2
}

want_peers=0
check_only=0
for arg in "$@"; do
    case "$arg" in
        --peers) want_peers=1 ;;
        --check) check_only=1 ;;
        -h|--help) usage; exit 0 ;;
        *) echo "install-deps: unknown option '$arg'" >&2; usage; exit 2 ;;
    esac
done

pkgs=$BASE_PKGS
if [ "$want_peers" -eq 1 ]; then
    pkgs="$pkgs $PEER_PKGS"
fi

if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "install-deps: dpkg-query not found; this script supports Debian/Ubuntu only." >&2
    echo "install-deps: install by hand: $(echo $pkgs)" >&2
    exit 1
fi

missing=""
for p in $pkgs; do
    # dpkg-query prints "install ok installed" only for fully installed packages.
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    case "$st" in
        *" installed") ;;
        *) missing="$missing $p" ;;
    esac
done

if [ -z "$missing" ]; then
    echo "install-deps: all required packages are installed."
    exit 0
fi

echo "install-deps: missing packages:$missing"
if [ "$check_only" -eq 1 ]; then
    exit 1
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "install-deps: installing packages needs root. Rerun with sudo:" >&2
    echo "    sudo $0 $*" >&2
    exit 1
fi

export DEBIAN_FRONTEND=noninteractive
apt-get update
# shellcheck disable=SC2086
apt-get install -y --no-install-recommends $missing
echo "install-deps: done."
