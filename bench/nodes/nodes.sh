#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/nodes/nodes.sh [--quick] - what an emulated device node costs a
# program, classfs-run beside umockdev-run in the same run, every command
# pinned to the last CPU: 100,000 ioctls answered from an ioctl recording,
# 100,000 one-byte reads of a node a script feeds, and 100,000 preads of a
# regular file (a call the filter lets through: 1 byte and 4 KiB) under
# classfs-run against the same program run bare and under a seccomp filter
# of one instruction that allows everything (what any filter costs).  Makes a release build in build-bench (or
# $BENCH_BUILD_DIR) and prints a markdown table of medians (docs/bench-nodes.md
# holds the last one).  Needs root and umockdev-run (77 otherwise).
# --quick: 3 runs of 20,000 calls instead of 7 of 100,000.
#
# A missed target shows in the table, never in the exit status.
set -u
cd "$(dirname "$0")/../.." || exit 1

runs=7 n=100000
case "${1:-}" in
--quick) runs=3 n=20000 ;;
"") ;;
*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac
build=${BENCH_BUILD_DIR:-build-bench}

for tool in umockdev-run taskset; do
	command -v "$tool" >/dev/null || { echo "bench/nodes/nodes.sh: $tool missing" >&2; exit 77; }
done
((EUID == 0)) || { echo "bench/nodes/nodes.sh: needs root" >&2; exit 77; }
if [ ! -f "$build/build.ninja" ]; then
	meson setup "$build" -Dbuildtype=release >/dev/null || exit 1
fi
targets=(programs/classfs-run/classfs-run programs/classfsd/classfsd bench/nodes/node-loop
	 bench/nodes/seccomp-allow)
ninja -C "$build" "${targets[@]}" >/dev/null || { ninja -C "$build" "${targets[@]}"; exit 1; }
export CLASSFSD=$PWD/$build/programs/classfsd/classfsd
run=$PWD/$build/programs/classfs-run/classfs-run
loop=$PWD/$build/bench/nodes/node-loop
allow=$PWD/$build/bench/nodes/seccomp-allow

pin=(taskset -c "$(($(nproc) - 1))")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a keyboard's event node, its EVIOCGVERSION, and a script of N bytes to read
cat >"$tmp/kbd.umockdev" <<'REC'
P: /devices/platform/bench-kbd/input/input9/event9
N: input/event9
E: DEVNAME=/dev/input/event9
E: MAJOR=13
E: MINOR=73
E: SUBSYSTEM=input
A: dev=13:73

P: /devices/platform/bench-kbd/input/input9
E: SUBSYSTEM=input
A: name=bench keyboard

P: /devices/platform/bench-kbd
E: SUBSYSTEM=platform
REC
echo "EVIOCGVERSION 0 01000100" >"$tmp/kbd.ioctl"
{
	printf 'r 0 '
	head -c "$n" /dev/zero | tr '\0' 'a'
	printf '\n'
} >"$tmp/kbd.script"
head -c 4096 /dev/zero >"$tmp/file"

node=/dev/input/event9
# (umockdev-run waits for a script to be played out before it exits: the
# ioctl and file loops get none)
ioc=(-d "$tmp/kbd.umockdev" -i "$node=$tmp/kbd.ioctl")
scr=(-d "$tmp/kbd.umockdev" -s "$node=$tmp/kbd.script")

# median of the ns/call of $runs runs of "$@"
median() {
	local i v vals=()
	for ((i = 0; i < runs; i++)); do
		v=$(timeout 120 "${pin[@]}" "$@" 2>/dev/null | sed -n 's/^ns\/call: //p')
		[[ -n $v ]] || { echo "-"; return; }
		vals+=("$v")
	done
	printf '%s\n' "${vals[@]}" | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

ratio() {
	[[ $1 == - || $2 == - ]] && { echo "-"; return; }
	awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'
}

ci=$(median "$run" "${ioc[@]}" -- "$loop" ioctl "$node" "$n")
ui=$(median umockdev-run "${ioc[@]}" -- "$loop" ioctl "$node" "$n")
cr=$(median "$run" "${scr[@]}" -- "$loop" read "$node" "$n")
ur=$(median umockdev-run "${scr[@]}" -- "$loop" read "$node" "$n")
cf=$(median "$run" "${ioc[@]}" -- "$loop" file "$tmp/file" "$n")
bf=$(median "$loop" file "$tmp/file" "$n")
af=$(median "$allow" "$loop" file "$tmp/file" "$n")
cf4=$(median "$run" "${ioc[@]}" -- "$loop" file "$tmp/file" "$n" 4096)
bf4=$(median "$loop" file "$tmp/file" "$n" 4096)

echo "## Device nodes that answer"
echo
echo "\`bench/nodes/nodes.sh${1:+ $1}\`, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r);"
echo "median of $runs runs of $n calls each, pinned to CPU $(($(nproc) - 1))."
echo
echo "| calls | classfs-run ns/call | reference ns/call | ratio | target |"
echo "|---|---|---|---|---|"
echo "| EVIOCGVERSION answered from an ioctl recording | $ci | $ui (umockdev-run) | $(ratio "$ci" "$ui") | <= 1.0x |"
echo "| 1-byte read() of a node a script feeds | $cr | $ur (umockdev-run) | $(ratio "$cr" "$ur") | <= 1.0x |"
echo "| 1-byte pread() of a regular file (not sent by the filter) | $cf | $bf (no filter) | $(ratio "$cf" "$bf") | <= 1.1x |"
echo "| the same under a one-instruction allow-all filter (any filter's floor) | $af | $bf (no filter) | $(ratio "$af" "$bf") | - |"
echo "| 4 KiB pread() of a regular file | $cf4 | $bf4 (no filter) | $(ratio "$cf4" "$bf4") | <= 1.1x |"
