#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/record/instructions.sh [N...] - instructions per loaded device,
# counted by callgrind in classfs_record_load() only, for records of N
# devices (default 10000 100000 1000000; the bench's generated machine).
# The count does not depend on caches, page faults or the other CPU: flat
# per device means the loader is linear; what the timed bench adds at 1M
# is the memory hierarchy's.  1M takes callgrind about four minutes.
set -u
cd "$(dirname "$0")/../.." || exit 1
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }
if [ ! -f build-bench/build.ninja ]; then
	meson setup build-bench -Dbuildtype=release >/dev/null || exit 1
fi
ninja -C build-bench bench/record/bench-record >/dev/null || exit 1

sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000 1000000)
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "| devices | instructions in classfs_record_load() | per device |"
echo "| ---: | ---: | ---: |"
for n in "${sizes[@]}"; do
	[[ $n =~ ^[0-9]+$ ]] || { echo "not a number: $n" >&2; exit 2; }
	valgrind --tool=callgrind --toggle-collect=classfs_record_load \
		--callgrind-out-file="$out" build-bench/bench/record/bench-record --load "$n" \
		>/dev/null 2>&1 || { echo "callgrind of $n devices failed" >&2; exit 1; }
	ir=$(sed -n 's/^summary: \([0-9]*\).*/\1/p' "$out")
	echo "| $n | $ir | $((ir / n)) |"
done
