#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-tools.sh DEMO - real tools (lsblk, udevadm, systool) against the
# tree classfs-demo serves, once per layout (class, devices).
#
# Each tool runs in a private mount namespace with the mount bound over
# /sys, a tmpfs over /run/udev (so the host's udev database stays out of
# the answers) and, where a device node is needed, a tmpfs /dev of its own.
# udevadm needs SYSTEMD_DEVICE_VERIFY_SYSFS=0 (sd-device otherwise refuses
# a /sys that is not sysfs by its filesystem magic).
#
# Needs root (exit 77, skipped, otherwise). Leaves nothing mounted or
# running, whatever happens.
set -euo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"

demo=${1:-}
if [[ -z $demo || ! -x $demo ]]; then
	echo "usage: $0 PATH-TO-classfs-demo" >&2
	exit 2
fi

if ((EUID != 0)); then
	echo "SKIP: test-tools needs root (mount namespaces, FUSE mounts)"
	exit 77
fi

missing=()
for tool in lsblk:util-linux unshare:util-linux mknod:coreutils realpath:coreutils \
	    udevadm:udev systool:sysfsutils fusermount3:fuse3; do
	command -v "${tool%%:*}" >/dev/null || missing+=("${tool%%:*} (install package ${tool#*:})")
done
if ((${#missing[@]})); then
	printf 'FAIL: missing tool: %s\n' "${missing[@]}"
	echo "FAIL: on Debian/Ubuntu: apt-get install util-linux udev sysfsutils fuse3"
	exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/classfs-tools.XXXXXX")
mnt=
demo_pid=
layout=-

is_mounted() {
	[[ -n $1 ]] && awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts
}

stop_demo() {
	local i

	if [[ -n $demo_pid ]]; then
		kill -TERM "$demo_pid" 2>/dev/null || true
		for ((i = 0; i < 100; i++)); do
			kill -0 "$demo_pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$demo_pid" 2>/dev/null || true
		wait "$demo_pid" 2>/dev/null || true
		demo_pid=
	fi
	if [[ -n $mnt ]]; then
		if is_mounted "$mnt"; then
			fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
		fi
		rmdir "$mnt" 2>/dev/null || true
		mnt=
	fi
}

cleanup() {
	local rc=$?

	trap - EXIT INT TERM
	stop_demo
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM


# show OUTPUT - indent a tool's output under a FAIL line
# shellcheck disable=SC2001 # every line, not the first
show() { sed 's/^/    | /' <<<"$1"; }

# ns [--dev] CMD... - run CMD with the mount over /sys in a private mount
# namespace; --dev also gives it a /dev holding sda and sda1 only
ns() {
	local dev=0

	if [[ $1 == --dev ]]; then
		dev=1
		shift
	fi
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private /bin/sh -c '
		set -e
		mount --bind "$1" /sys
		if [ -d /run/udev ]; then mount -t tmpfs tmpfs /run/udev; fi
		if [ "$2" = 1 ]; then
			mount -t tmpfs -o mode=0755 tmpfs /dev
			mknod -m 0666 /dev/null c 1 3
			mknod -m 0660 /dev/sda b 8 0
			mknod -m 0660 /dev/sda1 b 8 1
		fi
		shift 2
		exec "$@"' ns "$mnt" "$dev" "$@"
}

# udev CMD... - ns with the sd-device sysfs check turned off
udev() { ns env SYSTEMD_DEVICE_VERIFY_SYSFS=0 "$@"; }

seqnum() { cat "$mnt/kernel/uevent_seqnum"; }

# devpath CLASS NAME - the device's DEVPATH, from its /class/CLASS/NAME entry
devpath() {
	local real

	real=$(realpath -e "$mnt/class/$1/$2") || return 1
	echo "${real#"$mnt"}"
}

start_demo() {
	local i

	mnt=$(mktemp -d "$work/mnt.XXXXXX")
	"$demo" --layout "$layout" --mount "$mnt" >"$work/demo.out" 2>"$work/demo.err" &
	demo_pid=$!
	for ((i = 0; i < 100; i++)); do
		grep -qx ready "$work/demo.out" 2>/dev/null && is_mounted "$mnt" && return 0
		kill -0 "$demo_pid" 2>/dev/null || break
		sleep 0.1
	done
	bad "[$layout] classfs-demo --layout $layout did not get ready"
	show "$(cat "$work/demo.err")"
	return 1
}

check_links() {
	local link bad=()

	while IFS= read -r -d '' link; do
		case $(realpath -e "$link" 2>/dev/null) in
		"$mnt"/*) ;;
		*) bad+=("${link#"$mnt"} -> $(readlink "$link")") ;;
		esac
	done < <(find "$mnt" -type l -print0)
	if ((${#bad[@]})); then
		bad "[$layout] symlinks that do not resolve inside the mount:"
		printf '    | %s\n' "${bad[@]}"
	else
		ok "[$layout] every symlink resolves inside the mount"
	fi
}

check_lsblk() {
	local out rc exp

	rc=0; out=$(ns lsblk 2>&1) || rc=$?
	if ((rc == 0)) &&
	   grep -Eq '^sda +8:0 +0 +1\.5G +0 +disk' <<<"$out" &&
	   grep -Eq '^(├─|\|-)sda1 +8:1 +0 +512M +0 +part' <<<"$out" &&
	   grep -Eq '^(└─|`-)sda2 +8:2 +0 +1G +0 +part' <<<"$out"; then
		ok "[$layout] lsblk: sda 8:0 1.5G with children sda1 8:1 512M, sda2 8:2 1G"
	else
		bad "[$layout] lsblk (exit $rc)"
		show "$out"
	fi

	exp=$'sda 8:0 1611661312 disk \nsda1 8:1 536870912 part sda\nsda2 8:2 1073741824 part sda'
	rc=0; out=$(ns lsblk -b -n -r -o NAME,MAJ:MIN,SIZE,TYPE,PKNAME 2>&1) || rc=$?
	if ((rc == 0)) && [[ $out == "$exp" ]]; then
		ok "[$layout] lsblk -b: exact sizes (sectors * 512) and parent kernel names"
	else
		bad "[$layout] lsblk -b -n -r -o NAME,MAJ:MIN,SIZE,TYPE,PKNAME (exit $rc)"
		show "$out"
	fi

	exp='{"blockdevices":[{"name":"sda","maj:min":"8:0","size":1611661312,"type":"disk",'
	exp+='"children":[{"name":"sda1","maj:min":"8:1","size":536870912,"type":"part"},'
	exp+='{"name":"sda2","maj:min":"8:2","size":1073741824,"type":"part"}]}]}'
	rc=0; out=$(ns lsblk -J -b -o NAME,MAJ:MIN,SIZE,TYPE 2>&1) || rc=$?
	if ((rc == 0)) && [[ $(tr -d ' \n' <<<"$out") == "$exp" ]]; then
		ok "[$layout] lsblk -J: sda1 and sda2 are children of sda, MAJ:MIN and SIZE right"
	else
		bad "[$layout] lsblk -J -b -o NAME,MAJ:MIN,SIZE,TYPE (exit $rc)"
		show "$out"
	fi

	rc=0; out=$(ns lsblk -J 2>&1) || rc=$?
	if ((rc == 0)) && tr -d ' \n' <<<"$out" | grep -Eq \
	   '"name":"sda","maj:min":"8:0",[^{}]*"size":"1.5G",[^{}]*"children":\[{"name":"sda1","maj:min":"8:1",[^{}]*"size":"512M",[^{}]*},{"name":"sda2","maj:min":"8:2",[^{}]*"size":"1G",[^{}]*}\]'; then
		ok "[$layout] lsblk -J (default columns): same tree"
	else
		bad "[$layout] lsblk -J (exit $rc)"
		show "$out"
	fi

	rc=0; out=$(ns --dev lsblk -b -n -r -o NAME,MAJ:MIN,SIZE,TYPE /dev/sda1 2>&1) || rc=$?
	if ((rc == 0)) && [[ $out == "sda1 8:1 536870912 part" ]]; then
		ok "[$layout] lsblk /dev/sda1 (private /dev): sda1 8:1 536870912 part"
	else
		bad "[$layout] lsblk /dev/sda1 (exit $rc)"
		show "$out"
	fi

	rc=0; out=$(ns --dev lsblk -b -n -r -o NAME,MAJ:MIN,SIZE,TYPE /dev/sda 2>&1) || rc=$?
	if ((rc == 0)) && [[ $out == $'sda 8:0 1611661312 disk\nsda1 8:1 536870912 part\nsda2 8:2 1073741824 part' ]]; then
		ok "[$layout] lsblk /dev/sda (private /dev): the disk and its partitions"
	else
		bad "[$layout] lsblk /dev/sda (exit $rc)"
		show "$out"
	fi
}

# the class devices of the demo: CLASS NAME [SUBSYSTEM-specific checks]
devices=(block:sda block:sda1 block:sda2 input:input0 input:event0 input:mouse0 input:mice)

check_udevadm_info() {
	local out rc path want line missing=()

	if [[ $layout == class ]]; then
		path=/class/block/sda/sda1
	else
		path=$(devpath block sda1)
	fi
	rc=0; out=$(udev udevadm info --query=all --path="$path" 2>&1) || rc=$?
	for want in "P: $path" "E: SUBSYSTEM=block" "E: DEVTYPE=partition" "E: MAJOR=8" \
		    "E: MINOR=1" "E: DEVNAME=/dev/sda1"; do
		grep -qxF "$want" <<<"$out" || missing+=("$want")
	done
	if ((rc == 0 && ${#missing[@]} == 0)); then
		ok "[$layout] udevadm info --path=$path: SUBSYSTEM=block DEVTYPE=partition MAJOR=8 MINOR=1"
	else
		bad "[$layout] udevadm info --query=all --path=$path (exit $rc), missing: ${missing[*]}"
		show "$out"
	fi

	rc=0; out=$(udev udevadm info --query=all --path=/class/input/event0 2>&1) || rc=$?
	if ((rc == 0)) && grep -qxF "E: SUBSYSTEM=input" <<<"$out" &&
	   grep -qxF "E: MAJOR=13" <<<"$out" && grep -qxF "E: MINOR=64" <<<"$out" &&
	   grep -qxF "P: $(devpath input event0)" <<<"$out"; then
		ok "[$layout] udevadm info --path=/class/input/event0 (flat alias): SUBSYSTEM=input 13:64"
	else
		bad "[$layout] udevadm info --query=all --path=/class/input/event0 (exit $rc)"
		show "$out"
	fi

	rc=0; out=$(udev udevadm info --export-db 2>&1) || rc=$?
	missing=()
	for want in "${devices[@]}"; do
		line="P: $(devpath "${want%%:*}" "${want#*:}")"
		grep -qxF "$line" <<<"$out" || missing+=("$line")
	done
	if ((rc == 0 && ${#missing[@]} == 0)) &&
	   [[ $(grep -cxF "E: SUBSYSTEM=block" <<<"$out") == 3 ]] &&
	   [[ $(grep -cxF "E: SUBSYSTEM=input" <<<"$out") == 4 ]]; then
		ok "[$layout] udevadm info --export-db: all 7 class devices, nested ones included"
	else
		bad "[$layout] udevadm info --export-db (exit $rc), missing: ${missing[*]}"
		show "$out"
	fi
}

# check_trigger SUBSYSTEM NAME... - one add event per device, through its
# uevent file: counted by kernel/uevent_seqnum and seen by the uevent helper
check_trigger() {
	local subsys=$1 out rc before after i n=$(($# - 1)) exp=() name
	local log=$work/events.$layout.$subsys

	shift
	for name; do
		exp+=("$subsys add $(devpath "$subsys" "$name")")
	done
	# shellcheck disable=SC2016 # expanded by the helper
	printf '#!/bin/sh\necho "$1 $ACTION $DEVPATH" >>%s\n' "$log" >"$work/helper"
	chmod +x "$work/helper"
	: >"$log"
	echo "$work/helper" >"$mnt/kernel/uevent_helper"

	before=$(seqnum)
	rc=0; out=$(udev udevadm trigger --verbose --action=add --subsystem-match="$subsys" 2>&1) || rc=$?
	after=$(seqnum)
	# the helper runs asynchronously: wait for its lines
	for ((i = 0; i < 100; i++)); do
		(($(wc -l <"$log") >= n)) && break
		sleep 0.05
	done
	sleep 0.1
	echo >"$mnt/kernel/uevent_helper"

	if ((rc == 0 && after - before == n)) &&
	   [[ $(sort "$log") == $(printf '%s\n' "${exp[@]}" | sort) ]]; then
		ok "[$layout] udevadm trigger --action=add --subsystem-match=$subsys: $n add events (seqnum $before -> $after), one per device"
	else
		bad "[$layout] udevadm trigger --subsystem-match=$subsys (exit $rc): seqnum $before -> $after, want +$n"
		show "$out"
		echo "    events seen by the uevent helper:"
		show "$(cat "$log")"
	fi
}

# systool_values OUTPUT - "DEVICE ATTR=VALUE" for every one-line attribute
systool_values() {
	awk '
	/^  Class Device = "/ { split($0, q, "\""); dev = q[2]; next }
	/^    [^ ].* = "/ {
		attr = $1; v = $0; sub(/^[^"]*"/, "", v)
		if (v ~ /"$/) { sub(/"$/, "", v); print dev " " attr "=" v }
	}' <<<"$1"
}

check_systool() {
	local out rc vals want missing=()

	rc=0; out=$(ns systool -c block -v 2>&1) || rc=$?
	vals=$(systool_values "$out")
	for want in "sda dev=8:0" "sda size=3147776"; do
		grep -qxF "$want" <<<"$vals" || missing+=("$want")
	done
	grep -qxF "  Class Device path = \"/sys$(devpath block sda)\"" <<<"$out" ||
		missing+=("path of sda")
	grep -qx 'DEVTYPE=disk"\{0,1\}' <<<"$out" || missing+=("DEVTYPE=disk in uevent")
	if ((rc == 0 && ${#missing[@]} == 0)); then
		ok "[$layout] systool -c block -v: sda with dev=8:0 size=3147776 uevent (disks, as /sys/block lists them)"
	else
		bad "[$layout] systool -c block -v (exit $rc), missing: ${missing[*]}"
		show "$out"
	fi

	rc=0; out=$(ns systool -c input 2>&1) || rc=$?
	missing=()
	for want in input0 event0 mouse0 mice; do
		grep -qxF "  Class Device = \"$want\"" <<<"$out" || missing+=("$want")
	done
	if ((rc == 0 && ${#missing[@]} == 0)); then
		ok "[$layout] systool -c input: input0 event0 mouse0 mice"
	else
		bad "[$layout] systool -c input (exit $rc), missing: ${missing[*]}"
		show "$out"
	fi

	rc=0; out=$(ns systool -c input -v 2>&1) || rc=$?
	vals=$(systool_values "$out")
	missing=()
	for want in "input0 name=ImExPS/2 Generic Explorer Mouse" "event0 dev=13:64" \
		    "mouse0 dev=13:32" "mice dev=13:63"; do
		grep -qxF "$want" <<<"$vals" || missing+=("$want")
	done
	if ((rc == 0 && ${#missing[@]} == 0)); then
		ok "[$layout] systool -c input -v: name and dev values of all four"
	else
		bad "[$layout] systool -c input -v (exit $rc), missing: ${missing[*]}"
		show "$out"
	fi
}

for layout in class devices; do
	echo "== layout $layout"
	start_demo || { stop_demo; continue; }
	check_links
	check_lsblk
	check_udevadm_info
	check_trigger block sda sda1 sda2
	check_trigger input input0 event0 mouse0 mice
	check_systool
	stop_demo
	if [[ -s $work/demo.err ]]; then
		echo "   classfs-demo stderr:"
		show "$(cat "$work/demo.err")"
	fi
done
layout=-

cfs_summary
