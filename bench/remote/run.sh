#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# bench/remote/run.sh [--quick] - classfsd through its socket: devices
# published per second, events per second to 1, 4 and 8 subscriber
# processes, none lost, and 4 and 8 `classctl monitor`s following a
# `classctl load` of 30,000 and 100,000 devices, every add in each.
# Builds build-bench (release), runs bench-remote (each run starts its
# own classfsd on a temporary socket, as root for nothing: no mount)
# three times per row and prints the median as a markdown table.  --quick: 100,000 events/devices per run
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
targets=(bench/remote/bench-remote programs/classfsd/classfsd programs/classctl/classctl)
ninja -C build-bench "${targets[@]}" >/dev/null ||
	{ ninja -C build-bench "${targets[@]}"; exit 1; }
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
echo "- date: $(date -u +%Y-%m-%d), $(nproc) CPUs, load average $(cut -d' ' -f1 /proc/loadavg) at start"
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

# ---- classctl monitors while classctl load adds devices ----
# The daemon's defaults (a ring of 262,144 events, a subscriber queue of
# 16,384): every monitor lags past its queue in the burst and must catch
# up from the ring, in SEQNUM order, without a gap.
work=$(mktemp -d)
daemon=
mon_pids=()
cleanup() {
	((${#mon_pids[@]})) && kill "${mon_pids[@]}" 2>/dev/null
	[[ -n $daemon ]] && kill "$daemon" 2>/dev/null
	wait 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
ctl=build-bench/programs/classctl/classctl

# monitors_run MONITORS DEVICES - one row
monitors_run() {
	local nmon=$1 ndev=$2 t0 t1 i worst=$2 ordered=0 gaps=0 n
	rm -f "$work"/sock "$work"/mon*
	awk -v n="$ndev" 'BEGIN { for (i = 0; i < n; i++)
		printf "P: /devices/virtual/burst/b%d\nE: SUBSYSTEM=burst\nA: size=%d\n\n", i, i }' \
		>"$work/record"
	"$CLASSFSD" --socket "$work/sock" >"$work/log" 2>&1 &
	daemon=$!
	for _ in $(seq 200); do [[ -S $work/sock ]] && break; sleep 0.05; done
	mon_pids=()
	for i in $(seq "$nmon"); do
		"$ctl" --socket "$work/sock" monitor >"$work/mon$i" 2>"$work/mon$i.err" &
		mon_pids+=($!)
	done
	sleep 0.5
	t0=$(date +%s%N)
	"$ctl" --socket "$work/sock" load "$work/record" || status=1
	t1=$(date +%s%N)
	# done when every monitor has all adds, has stopped, or stopped growing
	for _ in $(seq 600); do
		local before after
		before=$(cat "$work"/mon[0-9]* | wc -c)
		sleep 0.2
		after=$(cat "$work"/mon[0-9]* | wc -c)
		[[ $before == "$after" ]] && break
	done
	for i in $(seq "$nmon"); do
		n=$(grep -c '^KERNEL.* add ' "$work/mon$i")
		((n < worst)) && worst=$n
		awk -F= '$1 == "SEQNUM" { if (p && $2 != p + 1) bad = 1; p = $2 } END { exit bad }' \
			"$work/mon$i" && ordered=$((ordered + 1))
		grep -q "missed event" "$work/mon$i.err" && gaps=$((gaps + 1))
	done
	kill "${mon_pids[@]}" 2>/dev/null
	kill "$daemon"
	wait 2>/dev/null
	daemon=''
	mon_pids=()
	((worst == ndev && ordered == nmon && gaps == 0)) || status=1
	echo "| $nmon | $ndev | $(((t1 - t0) / 1000000)) | $worst | $ordered of $nmon | $gaps | $( ((worst == ndev && ordered == nmon && gaps == 0)) && echo yes || echo "**no**") |"
}

echo
echo "| classctl monitors | devices loaded (classctl load) | load ms | adds, fewest of the monitors | in SEQNUM order | told of missed events | every add everywhere? |"
echo "|---:|---:|---:|---:|---|---:|---|"
for _ in 1 2 3; do
	monitors_run 4 30000
	monitors_run 8 100000
done
echo
echo "Each row a run of its own: a fresh classfsd with its defaults (ring 262,144,"
echo "subscriber queue 16,384), the monitors writing to files, all on the same"
echo "2 CPUs as the daemon and the load."
exit $status
