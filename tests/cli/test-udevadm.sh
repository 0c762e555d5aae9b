#!/bin/bash
# test-udevadm.sh UDEV_SEND - the real `udevadm monitor --udev --property`
# receives what classfs_netlink_udev_send() multicasts: exact header line
# and properties, and the kernel-side subsystem/devtype/tag filters (which
# compare our header's MurmurHash2 and bloom words) pass and drop events.
# Runs in a private network namespace (nothing reaches the machine's
# udev) and a private mount namespace with a tmpfs on /run holding
# /run/udev/control (udevadm monitor refuses to run without it).
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

if [[ ${1:-} != --inside ]]; then
	if ((EUID != 0)); then
		echo "SKIP: needs root (netlink multicast needs CAP_NET_ADMIN)"
		exit 77
	fi
	command -v udevadm >/dev/null || { echo "SKIP: udevadm not installed"; exit 77; }
	exec unshare -n -m --propagation private "$0" --inside "$@"
fi
shift
send=$1

mount -t tmpfs tmpfs /run
mkdir -p /run/udev
touch /run/udev/control

tmp=$(mktemp -d)
pids=()
stop_monitors() {
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
		wait "$p" 2>/dev/null || true
	done
	pids=()
}
trap 'stop_monitors; rm -rf "$tmp"' EXIT

# monitor FILE ARGS... - start udevadm monitor, wait until it listens
monitor() {
	local out=$1
	shift
	udevadm monitor --udev --property "$@" >"$out" 2>"$out.err" &
	pids+=($!)
	for _ in $(seq 100); do
		grep -q '^UDEV - the event' "$out" 2>/dev/null && return 0
		sleep 0.05
	done
	echo "FAIL: udevadm monitor did not start:"; cat "$out" "$out.err"
	exit 1
}

monitor "$tmp/all"
monitor "$tmp/disk" --subsystem-match=block/disk
monitor "$tmp/part" --subsystem-match=block/partition
monitor "$tmp/input" --subsystem-match=input
monitor "$tmp/seat" --tag-match=seat
monitor "$tmp/nosuch" --tag-match=nosuchtag

"$send" "$tmp/ours"

# wait for the last event (sda's REMOVE; input0's comes last) to arrive
for _ in $(seq 100); do
	[[ $(grep -c '^UDEV  \[' "$tmp/all" || true) -ge 5 ]] && break
	sleep 0.05
done
sleep 0.2
stop_monitors

lines() { grep -c "$2" "$1" || true; }

echo "--- udevadm monitor --udev --property:"
cat "$tmp/all"
check "five events received" [ "$(lines "$tmp/all" '^UDEV  \[')" = 5 ]
# the header line, udevadm's own format
check "header line of the ADD" grep -Eq '^UDEV  \[[0-9]+\.[0-9]{6}\] add      /class/block/sda \(block\)$' "$tmp/all"
check "header line of the CHANGE" grep -Eq '^UDEV  \[[0-9]+\.[0-9]{6}\] change   /class/block/sda \(block\)$' "$tmp/all"
check "header line of the REMOVE" grep -Eq '^UDEV  \[[0-9]+\.[0-9]{6}\] remove   /class/input/input0 \(input\)$' "$tmp/all"
# the ADD's properties, as sd-device holds them (DEVNAME absolute, MAJOR/MINOR last)
add=$(awk '/ add +\/class\/block\/sda /{on=1; next} on && /^$/{exit} on' "$tmp/all")
check "properties of the ADD" [ "$add" = "$(printf '%s\n' ACTION=add DEVPATH=/class/block/sda \
	SUBSYSTEM=block DEVNAME=/dev/sda DEVTYPE=disk SEQNUM=1 MAJOR=8 MINOR=0)" ]
check "TAGS of the CHANGE" grep -Eq '^TAGS=:(seat:uaccess|uaccess:seat):$' "$tmp/all"
# classfs_uevent_print_monitor() prints what udevadm prints, but for the
# source and time (and the order of tags, a hash set's in udevadm)
norm() { sed -E -e 's/^(UDEV  |KERNEL)\[[0-9]+\.[0-9]{6}\] /EVENT /' -e '/^TAGS=/d'; }
echo "--- classfs_uevent_print_monitor():"
cat "$tmp/ours"
# (udevadm's first three lines are its banner)
check "our monitor text is udevadm's" diff <(tail -n +4 "$tmp/all" | norm) <(norm <"$tmp/ours")
# the kernel-side filters read our header's hash and bloom words
check "subsystem+devtype filter block/disk: sda's 3 events" [ "$(lines "$tmp/disk" '^UDEV  \[')" = 3 ]
check "devtype filter block/partition: none" [ "$(lines "$tmp/part" '^UDEV  \[')" = 0 ]
check "subsystem filter input: input0's 2 events" [ "$(lines "$tmp/input" '^UDEV  \[')" = 2 ]
check "tag filter seat: the CHANGE only" [ "$(lines "$tmp/seat" '^UDEV  \[')" = 1 ]
check "tag filter nosuchtag: none" [ "$(lines "$tmp/nosuch" '^UDEV  \[')" = 0 ]
cfs_summary
