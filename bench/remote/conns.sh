#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/remote/conns.sh [N] [OTHER_CLASSFSD] - N (1,000) concurrent
# clients of one classfsd, each subscribed and publishing a device
# (bench-conns): the daemon's threads and memory, the time to connect,
# subscribe and publish them all, and the events each received (all
# N x N?).  Builds build-bench (release); with OTHER_CLASSFSD (another
# build's daemon, e.g. the main branch's) runs it first in the same run,
# as "before".  Run as root: root has no per-uid connection limit; the
# bench raises RLIMIT_NOFILE to its hard limit for itself and the daemon.
# Prints a markdown table; non-zero exit status when a run lost an event.
set -u
cd "$(dirname "$0")/../.." || exit 1
n=${1:-1000}
other=${2:-}

if [ ! -f build-bench/build.ninja ]; then
	meson setup build-bench -Dbuildtype=release >/dev/null || exit 1
fi
targets=(bench/remote/bench-conns programs/classfsd/classfsd)
ninja -C build-bench "${targets[@]}" >/dev/null ||
	{ ninja -C build-bench "${targets[@]}"; exit 1; }
bench=build-bench/bench/remote/bench-conns
status=0

echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at start, RLIMIT_NOFILE $(ulimit -Sn) (hard $(ulimit -Hn), which the bench and the daemon get)"
echo "- command: bench/remote/conns.sh $n${other:+ $other}"
echo
echo "| classfsd | clients | connections | daemon threads | daemon RSS MiB | peak RSS MiB | connect+subscribe+publish all, s | every event delivered, s | ADD events received | gap notices | out of order |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
if [ -n "$other" ]; then
	CLASSFSD=$other "$bench" before "$n" || status=1
fi
CLASSFSD=$PWD/build-bench/programs/classfsd/classfsd "$bench" after "$n" || status=1
exit $status
