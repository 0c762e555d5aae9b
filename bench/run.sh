#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/run.sh [--quick] - the core benchmark: a release build in
# build-bench, then bench-umockdev (the reference, when libumockdev-dev is
# installed) and bench-core, both pinned to one CPU, and one markdown table.
#
# A missed target is shown in the table, never in the exit status: this is
# a benchmark.  The exit status is non-zero only when the build fails or a
# program crashes or reports a wrong result.
set -u
cd "$(dirname "$0")/.." || exit 1

quick=
case "${1:-}" in
--quick) quick=--quick ;;
"") ;;
*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

if [ ! -f build-bench/build.ninja ]; then
	meson setup build-bench -Dbuildtype=release >/dev/null || exit 1
fi
targets=bench/bench-core
if ninja -C build-bench -t targets all 2>/dev/null | grep -q '^bench/bench-umockdev:'; then
	targets="$targets bench/bench-umockdev"
fi
# shellcheck disable=SC2086
ninja -C build-bench $targets >/dev/null || { ninja -C build-bench $targets; exit 1; }

# one CPU, the last one (CPU 0 takes most interrupts)
pin=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	pin=(taskset -c "$(($(nproc) - 1))")
fi

ref=$(mktemp)
trap 'rm -f "$ref"' EXIT
cmd="bench/run.sh${quick:+ $quick}"
echo "## classfs core benchmark"
echo
echo "- date: $(date -u +%Y-%m-%d)"
echo "- machine: $(nproc) CPUs, $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)," \
	"$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)," \
	"load average before the run: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "- command: \`$cmd\` (programs pinned with \`${pin[*]:-no pinning}\`)"

umock_args=()
if [ -x build-bench/bench/bench-umockdev ]; then
	# umockdev's testbed is a directory tree: on tmpfs it is at its fastest
	tmp=${TMPDIR:-/tmp}
	[ -d /dev/shm ] && [ -w /dev/shm ] && tmp=/dev/shm
	echo "- umockdev: $(pkg-config --modversion umockdev-1.0 2>/dev/null || echo '?'), testbed in $tmp"
	if ! TMPDIR=$tmp "${pin[@]}" build-bench/bench/bench-umockdev --n 1000 >"$ref"; then
		echo "bench-umockdev failed" >&2
		exit 1
	fi
	umock_args=(--umockdev "$ref")
else
	echo "- umockdev: not built (libumockdev-dev missing), its column stays empty"
fi
echo

"${pin[@]}" build-bench/bench/bench-core $quick "${umock_args[@]}"
rc=$?
if [ $rc -ne 0 ]; then
	echo "bench-core failed (exit $rc)" >&2
	exit 1
fi
exit 0
