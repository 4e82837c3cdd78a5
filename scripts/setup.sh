#!/bin/sh
# Installs what Plexus needs (Debian packages: needs root, uses sudo when
# run as an ordinary user), builds it into build/, and runs a 4-rank demo.
#   scripts/setup.sh [--no-demo]
set -eu
cd "$(dirname "$0")/.."
demo=1
for a in "$@"; do
    case "$a" in
    --no-demo) demo=0 ;;
    -h | --help)
        echo "usage: scripts/setup.sh [--no-demo]"
        exit 0
        ;;
    *)
        echo "setup: unknown option '$a'" >&2
        exit 2
        ;;
    esac
done

if ! scripts/install-deps.sh --check >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ]; then
        scripts/install-deps.sh
    elif command -v sudo >/dev/null 2>&1; then
        echo "setup: installing packages with sudo"
        sudo scripts/install-deps.sh
    else
        scripts/install-deps.sh --check || true
        echo "setup: run 'scripts/install-deps.sh' as root first" >&2
        exit 1
    fi
fi

cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build

if [ "$demo" = 1 ]; then
    echo
    echo "== build/bin/pxrun -n 4 build/bin/pxdemo"
    build/bin/pxrun -n 4 build/bin/pxdemo
fi
