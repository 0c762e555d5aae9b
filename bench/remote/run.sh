#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/remote/run.sh [--quick] - classfsd through its socket: devices
# published per second, and events per second to 1, 4 and 8 subscriber
# processes, none lost.  Builds build-bench (release), runs
# bench-remote (each run starts its own classfsd on a temporary socket,
# as root for nothing: no mount) three times per row and prints the
# median as a markdown table.  --quick: 100,000 events/devices per run
# instead of 1,000,000 (well under a minute).
#
# A missed target shows in the table, not in the exit status; the exit
# status is non-zero when the build fails or a run loses an event.
set -u
cd "$(dirname "$0")/../.." || exit 1

n=1000000
case "${1:-}" in
--quick) n=100000 ;;
"") ;;
*) echo "usage: $0 [--quick]" >&2; exit 2 ;;
esac

if [ ! -f build-bench/build.ninja ]; then
	meson setup build-bench -Dbuildtype=release >/dev/null || exit 1
fi
ninja -C build-bench bench/remote/bench-remote programs/classfsd/classfsd >/dev/null ||
	{ ninja -C build-bench bench/remote/bench-remote programs/classfsd/classfsd; exit 1; }
export CLASSFSD=$PWD/build-bench/programs/classfsd/classfsd
bench=build-bench/bench/remote/bench-remote
status=0

# median of column $2 over the rows in $1 (three runs), that row printed
median_row() {
	sort -t'|' -k"$2" -n <<<"$1" | sed -n 2p
}

runs() {
	local out="" i row
	for i in 1 2 3; do
		row=$("$bench" "$@") || status=1
		out+="$row"$'\n'
	done
	printf '%s' "$out"
}

echo "## classfsd: remote publishing and event fan-out"
echo
echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at start"
echo "- command: bench/remote/run.sh${1:+ $1} (medians of 3 runs)"
echo
echo "| what | N | devices/s | time | daemon CPU us/device | client CPU us/device |"
echo "|---|---:|---:|---:|---:|---:|"
pub=$(runs publish "$n")
median_row "$(grep batched <<<"$pub")" 4
median_row "$(grep 'one request' <<<"$pub")" 4
echo
echo "| events | N | subscribers | events/s, slowest subscriber | events/s, mean | lost | gap notices | out of order |"
echo "|---|---:|---:|---:|---:|---:|---:|---:|"
for s in 1 4 8; do
	ev=$(runs events "$n" "$s")
	median_row "$(grep live <<<"$ev")" 5
	median_row "$(grep catch-up <<<"$ev")" 5
done
echo
echo "Targets: >= 200,000 devices/s published through the socket; >= 500,000"
echo "events/s to each of 8 subscribers, none lost. Live rows are bounded by the"
echo "publisher (events/s from the start of the bulk add to each subscriber's last"
echo "event); catch-up rows measure delivery alone (subscribers taking all N events"
echo "from the replay ring at once)."
exit $status
