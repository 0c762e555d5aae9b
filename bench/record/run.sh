#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/record/run.sh [--quick] - record load/save benchmark: a release
# build in build-bench, bench-record pinned to one CPU, one markdown table
# (docs/records.md keeps the last full run).  --quick (CI): 10k and 100k
# devices only, well under a minute.
#
# A missed target shows in the table, never in the exit status; the exit
# status is non-zero only when the build fails or a load or save fails.
set -u
cd "$(dirname "$0")/../.." || exit 1

quick=
case "${1:-}" in
--quick) quick=--quick ;;
"") ;;
*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

if [ ! -f build-bench/build.ninja ]; then
	meson setup build-bench -Dbuildtype=release >/dev/null || exit 1
fi
ninja -C build-bench bench/record/bench-record >/dev/null ||
	{ ninja -C build-bench bench/record/bench-record; exit 1; }

# one CPU, the last one (CPU 0 takes most interrupts)
pin=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	pin=(taskset -c "$(($(nproc) - 1))")
fi

echo "## classfs record benchmark (bench/record/run.sh${quick:+ $quick})"
echo
echo "$(date -u "+%Y-%m-%d %H:%M UTC"), $(nproc) CPUs, $(uname -r), pinned: ${pin[*]:-no}, load average before: $(cut -d" " -f1-3 /proc/loadavg)"
echo
command -v umockdev-run >/dev/null || echo "(umockdev-run missing: install umockdev for the comparison)"
"${pin[@]}" build-bench/bench/record/bench-record $quick
