#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/run/loop.sh [--quick] - a Python loop (`with open(p) as f:
# f.read()`) on the same recording under umockdev-run and under
# classfs-run, and on the kernel's sysfs, in the same run, every command
# pinned to the last CPU (bench/python/bench-loop.py says what it reads
# and how).  Makes a release build in build-bench (or $BENCH_BUILD_DIR),
# prints a markdown table; bench/run-fs.sh runs it after bench-fs and puts
# its table in docs/bench-fs.md.  Needs root (classfs-run as root, and
# tracefs for the request counts), umockdev-run and Debian's
# /usr/bin/python3.  --quick: 3 runs of 3,000 reads instead of 7 of 20,000.
#
# A missed target shows in the table, never in the exit status; 77 when
# it cannot run here.
set -u
cd "$(dirname "$0")/../.." || exit 1

quick=
case "${1:-}" in
--quick) quick=--quick ;;
"") ;;
*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
build=${BENCH_BUILD_DIR:-build-bench}

for tool in umockdev-run taskset /usr/bin/python3; do
	command -v "$tool" >/dev/null || { echo "bench/run/loop.sh: $tool missing" >&2; exit 77; }
done
((EUID == 0)) || { echo "bench/run/loop.sh: needs root" >&2; exit 77; }

if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" -Dbuildtype=release >/dev/null || exit 1
fi
targets=(programs/classfs-run/classfs-run programs/classfsd/classfsd)
ninja -C "$build" "${targets[@]}" >/dev/null || { ninja -C "$build" "${targets[@]}"; exit 1; }

BENCH_LOOP_COMMAND="bench/run/loop.sh${quick:+ $quick}" \
	exec /usr/bin/python3 bench/python/bench-loop.py $quick "$build"
