#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-sample-tools.sh SAMPLE-SERVE RECORD - the real lsblk and udevadm
# read the sample machine through the live filesystem, once per layout.
#
# sample-serve loads RECORD into a tree, writes its udev database and
# mounts the tree. Each tool then runs in a private mount namespace with
# the mount bound over /sys and a tmpfs /run/udev holding only that
# database (the host's own stays out of the answers); udevadm gets
# SYSTEMD_DEVICE_VERIFY_SYSFS=0 (sd-device otherwise refuses a /sys that
# is not sysfs by its filesystem magic).
#
# Needs root (exit 77, skipped, otherwise). Leaves nothing mounted or
# running, whatever happens.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

serve=${1:-}
record=${2:-}
if [[ -z $serve || ! -x $serve || -z $record || ! -r $record ]]; then
	echo "usage: $0 PATH-TO-sample-serve RECORD" >&2
	exit 2
fi
if ((EUID != 0)); then
	echo "SKIP: sample-tools needs root (mount namespaces, FUSE mounts)"
	exit 77
fi
for tool in lsblk unshare udevadm fusermount3; do
	if ! command -v "$tool" >/dev/null; then
		echo "FAIL: missing tool $tool (apt-get install util-linux udev fuse3)"
		exit 1
	fi
done

work=$(mktemp -d "${TMPDIR:-/tmp}/classfs-sample.XXXXXX")
mnt=
pid=
layout=-

is_mounted() {
	[[ -n $1 ]] && awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts
}

stop_serve() {
	local i rc=0

	if [[ -n $pid ]]; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || rc=$?
		pid=
	fi
	if [[ -n $mnt ]]; then
		if is_mounted "$mnt"; then
			fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
		fi
		rmdir "$mnt" 2>/dev/null || true
		mnt=
	fi
	return "$rc"
}

cleanup() {
	local rc=$?

	trap - EXIT INT TERM
	stop_serve || true
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# shellcheck disable=SC2001 # every line, not the first
show() { sed 's/^/    | /' <<<"$1"; }

# ns CMD... - CMD with the mount over /sys and the sample's udev database
# as /run/udev/data, in a private mount namespace
ns() {
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private /bin/sh -c '
		set -e
		mount --bind "$1" /sys
		mkdir -p /run/udev
		mount -t tmpfs tmpfs /run/udev
		mkdir /run/udev/data
		mount --bind "$2" /run/udev/data
		shift 2
		exec env SYSTEMD_DEVICE_VERIFY_SYSFS=0 "$@"' ns "$mnt" "$work/udevdb" "$@"
}

start_serve() {
	local i

	mnt=$(mktemp -d "$work/mnt.XXXXXX")
	rm -rf "$work/udevdb"
	mkdir "$work/udevdb"
	"$serve" --layout "$layout" --mount "$mnt" --udevdb "$work/udevdb" "$record" \
		>"$work/serve.out" 2>"$work/serve.err" &
	pid=$!
	for ((i = 0; i < 100; i++)); do
		grep -qx ready "$work/serve.out" 2>/dev/null && is_mounted "$mnt" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	bad "[$layout] sample-serve --layout $layout did not get ready"
	show "$(cat "$work/serve.err")"
	return 1
}

# expect WHAT EXPECTED ACTUAL - compare two texts
expect() {
	if [[ $2 == "$3" ]]; then
		ok "[$layout] $1"
	else
		bad "[$layout] $1"
		show "$(diff <(echo "$2") <(echo "$3") || true)"
	fi
}

# has WHAT TEXT LINE... - every LINE is a line of TEXT
has() {
	local what=$1 text=$2 line missing=()

	shift 2
	for line in "$@"; do
		grep -qxF -- "$line" <<<"$text" || missing+=("$line")
	done
	if ((${#missing[@]})); then
		bad "[$layout] $what: missing ${missing[*]}"
		show "$text"
	else
		ok "[$layout] $what"
	fi
}

# The disks of the sample as lsblk shows them: a tree with each disk's
# partitions below it. Top-level devices come in /sys/block's order,
# which is the filesystem's; sort them, keeping each disk's lines together.
disks_sorted() {
	awk 'NR == 1 { print; next }
	     /^[a-z]/ { key = $1 } { print key "\t" $0 }' | {
		IFS= read -r head
		echo "$head"
		sort -s -t $'\t' -k1,1 | cut -f2-
	}
}

want_tree='NAME        MAJ:MIN   SIZE TYPE
loop0         7:0     630M loop
nvme0n1     259:0   476.9G disk
├─nvme0n1p1 259:1     512M part
└─nvme0n1p2 259:2   476.4G part
sda           8:0   931.5G disk
├─sda1        8:1     500G part
├─sda2        8:2      16G part
└─sda3        8:3   415.5G part'

# name, size in bytes, read-only, model, serial, transport (lsblk names
# it for SCSI disks and for every nvme* device), rotational,
# physical sector, fs and labels (the last from the udev database)
want_pairs='NAME="loop0" SIZE="660602880" RO="1" MODEL="" SERIAL="" TRAN="" ROTA="0" PHY-SEC="512" FSTYPE="iso9660" LABEL="Debian 12.2.0 amd64 n" PARTLABEL=""
NAME="nvme0n1" SIZE="512110190592" RO="0" MODEL="SAMSUNG MZVLB512HAJQ-000L7" SERIAL="S4ENNX0N912345" TRAN="nvme" ROTA="0" PHY-SEC="512" FSTYPE="" LABEL="" PARTLABEL=""
NAME="nvme0n1p1" SIZE="536870912" RO="0" MODEL="" SERIAL="" TRAN="nvme" ROTA="0" PHY-SEC="512" FSTYPE="vfat" LABEL="" PARTLABEL="EFI System Partition"
NAME="nvme0n1p2" SIZE="511571918848" RO="0" MODEL="" SERIAL="" TRAN="nvme" ROTA="0" PHY-SEC="512" FSTYPE="ext4" LABEL="" PARTLABEL="root"
NAME="sda" SIZE="1000204886016" RO="0" MODEL="ST1000LM035-1RK172" SERIAL="WL1NE3PQ" TRAN="sata" ROTA="1" PHY-SEC="4096" FSTYPE="" LABEL="" PARTLABEL=""
NAME="sda1" SIZE="536870912000" RO="0" MODEL="" SERIAL="" TRAN="" ROTA="1" PHY-SEC="4096" FSTYPE="ext4" LABEL="home" PARTLABEL="home"
NAME="sda2" SIZE="17179869184" RO="0" MODEL="" SERIAL="" TRAN="" ROTA="1" PHY-SEC="4096" FSTYPE="swap" LABEL="" PARTLABEL="swap"
NAME="sda3" SIZE="446152310784" RO="0" MODEL="" SERIAL="" TRAN="" ROTA="1" PHY-SEC="4096" FSTYPE="ntfs" LABEL="shared" PARTLABEL="Basic data partition"'

run_layout() {
	local out sda1 event0 nvme

	start_serve || return 0
	if [[ $layout == class ]]; then
		sda1=/class/block/sda/sda1
		event0=/class/input/input0/event0
		nvme=/class/block/nvme0n1/nvme0n1p1
	else
		sda1=/devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda/sda1
		event0=/devices/platform/i8042/serio0/input/input0/event0
		nvme=/devices/pci0000:00/0000:00:1d.0/0000:04:00.0/nvme/nvme0/nvme0n1/nvme0n1p1
	fi

	# plain lsblk: every disk and partition, nothing else
	if out=$(ns lsblk 2>&1); then
		has "lsblk" "$(awk 'NR > 1 { sub(/^[^a-z]*/, ""); print $1 }' <<<"$out")" \
			loop0 nvme0n1 nvme0n1p1 nvme0n1p2 sda sda1 sda2 sda3
		expect "lsblk lists 8 devices" 9 "$(wc -l <<<"$out")"
	else
		bad "[$layout] lsblk failed"
		show "$out"
	fi
	if out=$(ns lsblk -o NAME,MAJ:MIN,SIZE,TYPE 2>&1); then
		# shellcheck disable=SC2001 # every line's trailing blanks
		expect "lsblk -o NAME,MAJ:MIN,SIZE,TYPE" "$want_tree" \
			"$(sed 's/ *$//' <<<"$out" | disks_sorted)"
	else
		bad "[$layout] lsblk -o NAME,MAJ:MIN,SIZE,TYPE failed"
		show "$out"
	fi
	if out=$(ns lsblk -b -P -o NAME,SIZE,RO,MODEL,SERIAL,TRAN,ROTA,PHY-SEC,FSTYPE,LABEL,PARTLABEL 2>&1); then
		expect "lsblk -P (sizes, model, serial, transport, udev fields)" "$want_pairs" \
			"$(sort <<<"$out")"
	else
		bad "[$layout] lsblk -P failed"
		show "$out"
	fi
	# udevadm on nested devices: the kernel's view (uevent, dev) and udev's
	if out=$(ns udevadm info /sys/class/block/sda1 2>&1); then
		has "udevadm info sda1" "$out" "P: $sda1" "N: sda1" "E: DEVTYPE=partition" \
			"E: MAJOR=8" "E: MINOR=1" "E: PARTN=1" "E: SUBSYSTEM=block" "E: ID_FS_TYPE=ext4" \
			"E: ID_PART_ENTRY_OFFSET=2048" "S: disk/by-label/home"
	else
		bad "[$layout] udevadm info /sys/class/block/sda1 failed"
		show "$out"
	fi
	if out=$(ns udevadm info /sys/class/block/nvme0n1p1 2>&1); then
		has "udevadm info nvme0n1p1" "$out" "P: $nvme" "N: nvme0n1p1" "E: MAJOR=259" \
			"E: MINOR=1" "E: ID_FS_TYPE=vfat" "E: ID_MODEL=SAMSUNG MZVLB512HAJQ-000L7"
	else
		bad "[$layout] udevadm info /sys/class/block/nvme0n1p1 failed"
		show "$out"
	fi
	if out=$(ns udevadm info /sys/class/input/event0 2>&1); then
		has "udevadm info event0" "$out" "P: $event0" "N: input/event0" "E: MAJOR=13" \
			"E: MINOR=64" "E: SUBSYSTEM=input" "E: ID_INPUT_KEYBOARD=1" \
			"S: input/by-path/platform-i8042-serio-0-event-kbd"
	else
		bad "[$layout] udevadm info /sys/class/input/event0 failed"
		show "$out"
	fi
	# the parent walk: event0 -> input0 -> (class layout: its physical parent)
	if out=$(ns udevadm info -a /sys/class/input/event0 2>&1); then
		# shellcheck disable=SC2001 # every line's indent
		has "udevadm info -a event0" "$(sed 's/^ *//' <<<"$out")" 'KERNEL=="event0"' \
			'KERNELS=="input0"' 'ATTRS{name}=="AT Translated Set 2 keyboard"' \
			'ATTRS{phys}=="isa0060/serio0/input0"'
	else
		bad "[$layout] udevadm info -a /sys/class/input/event0 failed"
		show "$out"
	fi
	# enumeration finds nested devices through their flat class entries
	if out=$(ns udevadm info --export-db 2>&1); then
		expect "udevadm --export-db: devices with a node" \
			"$(grep -c '^N: ' "$record")" "$(grep -c '^N: ' <<<"$out")"
	else
		bad "[$layout] udevadm info --export-db failed"
		show "$out"
	fi

	if stop_serve; then
		ok "[$layout] sample-serve stopped cleanly, no load warnings"
	else
		bad "[$layout] sample-serve exited with an error"
		show "$(cat "$work/serve.err")"
	fi
}

for layout in class devices; do
	run_layout
done

if is_mounted "$mnt"; then
	bad "[$layout] a mount is left"
fi
cfs_summary
