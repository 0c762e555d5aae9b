#!/bin/bash
# test-netlink-e2e.sh CLASSFSD CLASSCTL - end to end: `classctl add` makes
# classfsd (started with --netlink) multicast the ADD in udev format, and
# the real `udevadm monitor --udev --property` shows it; also rename (move)
# and rm (remove).  All inside one private network and mount namespace
# (unshare -n -m): nothing reaches the machine's udev; a tmpfs on /run
# holds /run/udev/control, which udevadm monitor requires.
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

if [[ ${1:-} != --inside ]]; then
	if ((EUID != 0)); then
		echo "SKIP: needs root"
		exit 77
	fi
	command -v udevadm >/dev/null || { echo "SKIP: udevadm not installed"; exit 77; }
	exec unshare -n -m --propagation private "$0" --inside "$@"
fi
shift
classfsd=$1 classctl=$2

mount -t tmpfs tmpfs /run
mkdir -p /run/udev
touch /run/udev/control

tmp=$(mktemp -d)
pids=()
stop_all() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	pids=()
}
trap 'stop_all; rm -rf "$tmp"' EXIT

udevadm monitor --udev --property >"$tmp/udev" 2>&1 &
pids+=($!)
mkdir "$tmp/mnt"
"$classfsd" --netlink --socket "$tmp/sock" --mount "$tmp/mnt" >"$tmp/log" 2>&1 &
pids+=($!)
for _ in $(seq 100); do
	[[ -S $tmp/sock ]] && grep -q '^UDEV - the event' "$tmp/udev" && break
	sleep 0.05
done
ctl() { "$classctl" --socket "$tmp/sock" "$@"; }
check "classctl add" ctl add block sda --dev 8:0 --type disk --attr size=8
check "classctl rename" ctl rename block sda sdb
check "classctl rm" ctl rm block sdb
for _ in $(seq 100); do
	[[ $(grep -c '^UDEV  \[' "$tmp/udev") -ge 3 ]] && break
	sleep 0.05
done
stop_all
echo "--- udevadm monitor --udev --property:"
cat "$tmp/udev"
check "udevadm saw the add" grep -Eq '^UDEV  \[[0-9]+\.[0-9]{6}\] add      /class/block/sda \(block\)$' "$tmp/udev"
add=$(awk '/ add +\/class\/block\/sda /{on=1; next} on && /^$/{exit} on' "$tmp/udev" | grep -v '^SEQNUM=')
check "  with its properties" [ "$add" = "$(printf '%s\n' ACTION=add DEVPATH=/class/block/sda \
	SUBSYSTEM=block DEVNAME=/dev/sda DEVTYPE=disk MAJOR=8 MINOR=0)" ]
check "udevadm saw the move" grep -Eq '^UDEV  \[[0-9.]+\] move     /class/block/sdb \(block\)$' "$tmp/udev"
check "  with DEVPATH_OLD" grep -qx 'DEVPATH_OLD=/class/block/sda' "$tmp/udev"
check "udevadm saw the remove" grep -Eq '^UDEV  \[[0-9.]+\] remove   /class/block/sdb \(block\)$' "$tmp/udev"
check "SEQNUMs increase" bash -c 'grep "^SEQNUM=" "$1" | cut -d= -f2 | sort -nc' _ "$tmp/udev"
cfs_summary
