#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/remote/stall.sh [RUNS] - the mount while readers wait on a
# publisher that never answers.  Builds build-bench (release), then per
# run, in a private mount namespace: a classfsd with --mount (call
# timeout 5000 ms, the default), tests/faults' fault-driver in `hang` mode
# (its remote `state` show() never returns, so the daemon never gets an
# answer), READERS readers of that `state` started in the background;
# then, 0.3 s later while they wait, `ls` of the mount's root and `cat`
# of `size` (a value the daemon holds) started together, each timed
# once.  Prints a markdown table of the medians over RUNS runs (default
# 5, a fresh daemon each) for 0 and 12 readers.
#
# Needs root (FUSE mounts) and fuse3.  Leaves nothing mounted or running.
set -u
cd "$(dirname "$0")/../.." || exit 1
runs=${1:-5}

if [[ ${STALL_INSIDE:-} != 1 ]]; then
	if ((EUID != 0)); then
		echo "needs root" >&2
		exit 2
	fi
	if [ ! -f build-bench/build.ninja ]; then
		meson setup build-bench -Dbuildtype=release >/dev/null || exit 1
	fi
	t="programs/classfsd/classfsd tests/faults/fault-driver"
	# shellcheck disable=SC2086
	ninja -C build-bench $t >/dev/null || { ninja -C build-bench $t; exit 1; }
	STALL_INSIDE=1 exec unshare -m --propagation private "$0" "$@"
fi

classfsd=$PWD/build-bench/programs/classfsd/classfsd
driver=$PWD/build-bench/tests/faults/fault-driver
tmp=$(mktemp -d)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	umount -l "$tmp/mnt" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

# ms COMMAND... - run it, print its wall time in milliseconds (0.1 ms)
ms() {
	local t0=$EPOCHREALTIME t1
	"$@" >/dev/null 2>&1
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", (b - a) * 1000 }'
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# one_run READERS - prints "ls_median cat_median" for one daemon
one_run() {
	local nread=$1 i drv d ls_p
	mkdir -p "$tmp/mnt"
	"$classfsd" --socket "$tmp/sock" --mount "$tmp/mnt" >"$tmp/log" 2>&1 &
	d=$!
	pids+=("$d")
	for _ in $(seq 200); do
		[[ -S $tmp/sock ]] && mountpoint -q "$tmp/mnt" && break
		sleep 0.05
	done
	"$driver" "$tmp/sock" hang >"$tmp/driver.out" 2>&1 &
	drv=$!
	pids+=("$drv")
	for _ in $(seq 200); do grep -qs ready "$tmp/driver.out" && break; sleep 0.05; done
	ls "$tmp/mnt" >/dev/null
	cat "$tmp/mnt/class/fault/hang0/size" >/dev/null
	for ((i = 0; i < nread; i++)); do
		cat "$tmp/mnt/class/fault/hang0/state" >/dev/null 2>&1 &
		pids+=("$!")
	done
	sleep 0.3
	# one of each, at the same moment: neither waits behind the other
	ms ls "$tmp/mnt" >"$tmp/t.ls" &
	ls_p=$!
	ms cat "$tmp/mnt/class/fault/hang0/size" >"$tmp/t.cat" &
	wait "$ls_p" "$!"
	echo "$(cat "$tmp/t.ls") $(cat "$tmp/t.cat")"
	# the driver gone, its calls fail and the readers end
	kill -9 "$drv"
	kill "$d"
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null; done
	pids=()
	umount -l "$tmp/mnt" 2>/dev/null
	rm -f "$tmp/sock"
}

echo "| readers waiting on the dead publisher | runs | ls of the mount root, ms | cat of a daemon-held attribute, ms |"
echo "|---:|---:|---:|---:|"
for n in 0 12; do
	res=""
	for ((r = 0; r < runs; r++)); do
		res+="$(one_run "$n")"$'\n'
	done
	ls_m=$(awk 'NF { print $1 }' <<<"$res" | median)
	cat_m=$(awk 'NF { print $2 }' <<<"$res" | median)
	echo "| $n | $runs | $ls_m | $cat_m |"
done
