#!/usr/bin/env bash
# NWChem as Debian builds it for MPICH (nwchem-mpich: Global Arrays over
# one-sided MPI, ARMCI-MPI, with ScaLAPACK), run on Plexus through the ABI:
# the water input nwchem_h2o.nw at NP ranks, and its energies must be the
# reference ones to 1e-8 hartree (the same digits MPICH's own library gives).
# Plexus needs no ARMCI_USE_WIN_ALLOCATE=0, which Debian's README asks for
# under MPICH.
#   nwchem_check.sh PXRUN LIBDIR NP PX_NET WORKDIR
set -u
pxrun=$1 libdir=$2 np=$3 net=$4 dir=$5
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir" && cd "$dir" || exit 2
rm -f h2o.*
cp "$here/nwchem_h2o.nw" h2o.nw
LD_LIBRARY_PATH=$libdir "$pxrun" -n "$np" --timeout 240 --env PX_NET="$net" nwchem.mpich h2o.nw \
    >out 2>&1
rc=$?
fail=0
bad() { echo "nwchem_check: FAIL: $*"; fail=1; }
[ $rc -eq 0 ] || bad "pxrun exited $rc"
grep -Eq "nproc +=  +$np\$" out || bad "NWChem does not report $np processes (one job?)"
check() { # label, reference, value
    awk -v r="$2" -v v="$3" 'BEGIN { d = r - v; exit !(v != "" && d < 1e-8 && d > -1e-8) }' ||
        bad "$1 energy '$3', want $2"
}
check SCF -76.010496172412 "$(grep 'Total SCF energy' out | awk '{print $NF}' | head -1)"
dft=$(grep 'Total DFT energy' out | awk '{print $NF}')
[ "$(echo "$dft" | wc -w)" -eq 2 ] || bad "want 2 DFT energies (energy, gradient), got: $dft"
for e in $dft; do check DFT -76.408738452879 "$e"; done
grep -q "DFT ENERGY GRADIENTS" out || bad "no DFT gradient"
if [ $fail -ne 0 ]; then
    tail -40 out
    exit 1
fi
echo "PASS nwchem np=$np: SCF and DFT energies as the reference"
