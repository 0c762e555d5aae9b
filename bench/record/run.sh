#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/record/run.sh [--quick] - record load/save benchmark: a release
# build in build-bench, bench-record pinned to one CPU, one markdown table
# (docs/records.md keeps the last full run); then `classctl load` of the
# same generated machine into classfsd with and without a FUSE mount
# (30,000 and 1,000,000 devices, both pinned to that CPU; needs root and
# /dev/fuse).  --quick (CI): 10k and 100k devices, the daemon rows at
# 30,000 only, well under a minute.
#
# A missed target shows in the table, never in the exit status; the exit
# status is non-zero only when the build fails or a load or save fails.
set -u
cd "$(dirname "$0")/../.." || exit 1
status=0

quick=
case "${1:-}" in
--quick) quick=--quick ;;
"") ;;
*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

if [ ! -f build-bench/build.ninja ]; then
	meson setup build-bench -Dbuildtype=release >/dev/null || exit 1
fi
targets=(bench/record/bench-record programs/classfsd/classfsd programs/classctl/classctl)
ninja -C build-bench "${targets[@]}" >/dev/null ||
	{ ninja -C build-bench "${targets[@]}"; exit 1; }

# one CPU, the last one (CPU 0 takes most interrupts)
pin=()
if command -v taskset >/dev/null && [ "$(nproc)" -ge 2 ]; then
	pin=(taskset -c "$(($(nproc) - 1))")
fi

echo "## classfs record benchmark (bench/record/run.sh${quick:+ $quick})"
echo
echo "$(date -u +%Y-%m-%d), $(nproc) CPUs, $(uname -r), pinned: ${pin[*]:-no}, load average before: $(cut -d" " -f1-3 /proc/loadavg)"
echo
command -v umockdev-run >/dev/null || echo "(umockdev-run missing: install umockdev for the comparison)"
"${pin[@]}" build-bench/bench/record/bench-record $quick || status=1

# ---- classctl load into classfsd: mounted against not mounted ----
work=$(mktemp -d)
daemon=
cleanup() {
	[[ -n $daemon ]] && kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	mountpoint -q "$work/mnt" 2>/dev/null && umount -l "$work/mnt"
	rm -rf "$work"
}
trap cleanup EXIT

# load_ms FILE mount|plain - ms of `classctl load FILE` into a fresh classfsd
load_ms() {
	local opts=() t0 t1 ok=1
	rm -rf "${work:?}/mnt" "${work:?}/sock"
	if [[ $2 == mount ]]; then
		mkdir "$work/mnt"
		opts=(--mount "$work/mnt")
	fi
	"${pin[@]}" build-bench/programs/classfsd/classfsd --socket "$work/sock" "${opts[@]}" \
		>"$work/log" 2>&1 &
	daemon=$!
	for _ in $(seq 200); do
		[[ -S $work/sock ]] && { [[ $2 != mount ]] || mountpoint -q "$work/mnt"; } && break
		sleep 0.05
	done
	# what a user would have looked at: the top directories
	[[ $2 == mount ]] && ls "$work/mnt" "$work/mnt/class" "$work/mnt/dev/block" >/dev/null
	t0=$(date +%s%N)
	"${pin[@]}" build-bench/programs/classctl/classctl --socket "$work/sock" load "$1" \
		>/dev/null || ok=0
	t1=$(date +%s%N)
	kill "$daemon"
	wait "$daemon"
	daemon=
	mountpoint -q "$work/mnt" 2>/dev/null && umount -l "$work/mnt"
	((ok)) || { echo "load of $1 failed: $(tail -3 "$work/log")" >&2; return 1; }
	echo $(((t1 - t0) / 1000000))
}

median() { printf '%s\n' "$@" | sort -n | sed -n "$((($# + 1) / 2))p"; }

echo
if ((EUID != 0)) || [[ ! -c /dev/fuse ]]; then
	echo "(classfsd rows skipped: root and /dev/fuse are needed to mount)"
	exit $status
fi
echo "| devices | classctl load, no mount: ms | with --mount: ms | ratio | target | met? |"
echo "| ---: | ---: | ---: | ---: | --- | --- |"
sizes=(30000 1000000)
[[ -n $quick ]] && sizes=(30000)
for n in "${sizes[@]}"; do
	runs=5
	((n > 100000)) && runs=3
	build-bench/bench/record/bench-record --write "$n" "$work/record" || { status=1; continue; }
	plain=() mounted=()
	for _ in $(seq $runs); do	# alternately: the machine's load hits both alike
		p=$(load_ms "$work/record" plain) && m=$(load_ms "$work/record" mount) ||
			{ status=1; break; }
		plain+=("$p") mounted+=("$m")
	done
	((${#plain[@]})) || continue
	p=$(median "${plain[@]}") m=$(median "${mounted[@]}")
	ratio=$(awk -v m="$m" -v p="$p" 'BEGIN { printf "%.2f", m / p }')
	echo "| $n | $p | $m | ${ratio}x | <= 1.5x | $(awk -v r="$ratio" 'BEGIN { print (r <= 1.5 ? "yes" : "**no**") }') |"
done
echo
echo "Medians of 5 runs (3 at 1M), mounted and not taken alternately, each into a fresh"
echo "classfsd; before the mounted load the root, class/ and dev/block/ are listed (the"
echo "kernel holds them), so only the new subtrees are unknown to it."
exit $status
