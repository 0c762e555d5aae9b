#!/usr/bin/env bash
# demo.sh - install what is missing, build, and show a sample class tree
# built with the kernel-compatible (Linux 2.6.15) API.
set -euo pipefail
cd "$(dirname "$0")"
source scripts/deps.sh

classfs_install_missing "${CLASSFS_BUILD_DEPS[@]}"
[[ -f build/meson-private/coredata.dat ]] || meson setup build
ninja -C build
exec build/examples/classfs-demo "$@"
