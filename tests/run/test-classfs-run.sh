#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-classfs-run.sh CLASSFS-RUN CLASSFSD CLASSCTL UDEV-PROBE [STATIC-PROBE]
#
# classfs-run with programs nobody here wrote (lsblk, udevadm, busybox)
# and with a libudev program (udev-probe) that knows nothing of classfs:
# the sample machine, the repo's recordings (tests/record/data) and every
# recording in ../shared/testdata/umockdev (or $CLASSFS_RECORDINGS) when
# that folder is there, both layouts; hotplug made with classctl from
# outside the environment and from inside it, with a daemon classfs-run
# started and with one it joined; inside a chroot; a daemon mounted on
# /sys in another namespace (refused); a static program; exit statuses,
# signals, bad input (records whose nodes or links would take the
# environment's own /dev entries); and that nothing stays running afterwards.
#
# The whole script runs in a private mount namespace of its own (the
# joined daemon's mount stays there). Needs root (exit 77 otherwise).
#
# With CLASSFS_RUN_TEST_UID=U (meson's test-classfs-run-unpriv: 65534)
# every classfs-run and classctl runs as uid U instead (tests/stage.sh's
# cfs_as_uid, with copies cfs_stage made), with the same assertions: classfs-run then
# makes a user namespace, and /dev is the daemon's devtmpfs-style view.
# What needs root stays root's: joining a running daemon (refused, exit
# 125, checked), a chroot.
set -euo pipefail

if (($# < 4)); then
	echo "usage: $0 CLASSFS-RUN CLASSFSD CLASSCTL UDEV-PROBE [STATIC-PROBE]" >&2
	exit 2
fi
if ((EUID != 0)); then
	echo "SKIP: test-classfs-run needs root (namespaces, mounts, device nodes)"
	exit 77
fi
if [[ -z ${CLASSFS_RUN_TEST_NS:-} ]]; then
	CLASSFS_RUN_TEST_NS=1 exec unshare -m --propagation private "$BASH" "$0" "$@"
fi

run=$(realpath "$1") run_bin=$(realpath "$1") classfsd=$(realpath "$2") classctl=$(realpath "$3")
probe=$(realpath "$4") static=${5:+$(realpath "$5")}
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib.sh
. "$src/tests/lib.sh"
own=$src/tests/record/data
recs=("$own/usb-mouse.umockdev" "$own/spi-flash.umockdev" "$own/usb-token.umockdev")
recdir=${CLASSFS_RECORDINGS:-$src/../shared/testdata/umockdev}
if [[ -d $recdir ]]; then
	recs+=("$recdir"/*.umockdev)
else
	echo "note: $recdir absent: the repo's recordings only"
fi
export CLASSFSD=$classfsd

for tool in lsblk udevadm unshare od; do
	command -v "$tool" >/dev/null || { echo "FAIL: $tool missing"; exit 1; }
done

work=$(mktemp -d /tmp/classfs-run-test.XXXXXX)
# classfs-run makes its socket directory in $TMPDIR: ours, to check it is cleaned
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"
as_uid=${CLASSFS_RUN_TEST_UID:-}
classctl_in=$classctl
if [[ -n $as_uid ]]; then
	# the uid's own programs, directories it may write, and nothing else of root's
	. "$src/tests/stage.sh"
	chmod 0755 "$work"
	chown "$as_uid:$as_uid" "$work" "$TMPDIR"
	cfs_stage "$work/stage" classfsd classctl probe ${static:+static} >/dev/null ||
		{ echo "FAIL: cannot stage the programs for uid $as_uid"; exit 1; }
	real_run=$run
	cfs_stage "$work/stage" real_run >/dev/null || { echo "FAIL: cannot stage classfs-run"; exit 1; }
	# the records it loads, where it can read them
	mkdir -m 0755 "$work/recs"
	for i in "${!recs[@]}"; do
		install -D -m 0644 "${recs[$i]}" "$work/recs/$i/${recs[$i]##*/}" &&
			recs[i]=$work/recs/$i/${recs[$i]##*/} || { echo "FAIL: cannot stage ${recs[$i]}"; exit 1; }
	done
	chmod -R a+rX "$work/recs"
	own=$work/recs/own
	mkdir -m 0755 "$own" && install -m 0644 "$src"/tests/record/data/*.umockdev "$own/"
	export CLASSFSD=$classfsd
	# run and classctl are the uid's: every call below goes through these
	# (programs, so that chroot and sh -c run them too)
	for tool in run classctl; do
		printf '#!/bin/bash\n. %q\ncfs_stage_dir=%q\ncfs_as_uid --exec %q %q "$@"\n' \
			"$src/tests/stage.sh" "$work/stage" "$as_uid" \
			"$([[ $tool == run ]] && echo "$real_run" || echo "$classctl")" \
			>"$work/stage/as-uid-$tool"
		chmod 0755 "$work/stage/as-uid-$tool"
	done
	# inside, the uid is already the one: the staged classctl itself
	classctl_in=$classctl run=$work/stage/as-uid-run classctl=$work/stage/as-uid-classctl
	echo "note: every classfs-run and classctl runs as uid $as_uid"
	# where the kernel refuses the uid a user namespace (in a chroot, as
	# Debian's build chroots run test suites, it refuses even root's):
	# skipped, with classfs-run's own words
	if ! cfs_as_uid "$as_uid" unshare -U true 2>/dev/null; then
		why=$("$run" --sample -- true 2>&1) && why="unshare -U refused, classfs-run ran"
		echo "SKIP: uid $as_uid: $why"
		rm -rf "$work"
		exit 77
	fi
fi
# Every classfs-run's stderr (its own messages and its COMMAND's) also goes
# to $stderr_log; at the end each of its lines must be one that
# test-classfs-run.stderr expects (tests/stderr-only.sh): a warning no
# case asked for fails the test, however the case itself ended.
stderr_log=$(mktemp /tmp/classfs-run-stderr.XXXXXX)
printf '#!/bin/bash\nexec %q "$@" 2> >(exec tee -a %q >&2)\n' "$run" "$stderr_log" >"$work/logged-run"
chmod 0755 "$work/logged-run"
run=$work/logged-run
# settle - wait (5 s at most) for the copies of stderr: a case that reads
# a classfs-run's stderr from a file after waiting for it calls this first
settle() {
	for _ in $(seq 50); do
		pgrep -f -- "tee -a $stderr_log" >/dev/null || return 0
		sleep 0.1
	done
}
pids=()
cleanup() {
	local p
	rm -f "$stderr_log"
	for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	# the chroots are binds of the host's directories: never remove a file through them
	if ! unbind "$work"; then
		echo "FAIL: mounts left below $work: $work left in place"
		return
	fi
	rm -rf "$work"
}
# unbind DIR - unmount everything mounted on or below DIR; false when something stays
unbind() {
	# shellcheck disable=SC2016  # an awk condition, not a shell expansion
	local m below='$2 == d || index($2, d "/") == 1'
	while read -r m; do
		umount -l "$m" 2>/dev/null || true
	done < <(awk -v d="$1" "$below { print \$2 }" /proc/self/mounts | sort -r)
	! awk -v d="$1" "$below { found = 1 } END { exit !found }" /proc/self/mounts
}
trap cleanup EXIT

has() { grep -q -- "$2" <<<"$1"; }

# nothing of ours left: no process naming our directory, no socket directory
check_clean() {
	local what=$1 i
	for i in $(seq 50); do
		if ! ps -eo args= | grep -F -- "$work/" | grep -v grep >/dev/null &&
		   [[ -z $(ls -A "$TMPDIR") ]]; then
			ok "$what: nothing left running, socket directory removed"
			return
		fi
		sleep 0.1
	done
	bad "$what: left behind: $(ps -eo pid=,args= | grep -F -- "$work/" | grep -v grep || true) $(ls -A "$TMPDIR")"
}

wait_file() { # wait_file FILE SECONDS
	local i
	for i in $(seq $(($2 * 10))); do
		[[ -e $1 ]] && return 0
		sleep 0.1
	done
	return 1
}

# ---------------------------------------------------------------- sample
for layout in class devices; do
	out=$("$run" --layout "$layout" --sample -- sh -c '
		echo "env: $CLASSFS_SOCKET $SYSTEMD_DEVICE_VERIFY_SYSFS"
		grep -E " /dev | /run/udev | /sys " /proc/self/mounts
		test -e /run/udev/control && echo control-present
		lsblk -o NAME,MAJ:MIN,TYPE
		lsblk /dev/sda1 -o NAME,MAJ:MIN
		udevadm info /dev/input/event1
		echo "export-db $(udevadm info --export-db | grep -c "^P:")"
		'"$probe"' summary' 2>&1) || true
	has "$out" "env: $TMPDIR/classfs-run\..*/control 0" &&
		ok "$layout: CLASSFS_SOCKET and SYSTEMD_DEVICE_VERIFY_SYSFS=0 set" ||
		bad "$layout: environment variables: $out"
	if [[ -n $as_uid ]]; then
		devfs="^classfs-dev /dev fuse.classfs [^ ]*nosuid,nodev" what="the nodev devtmpfs view"
	else
		devfs="^tmpfs /dev tmpfs [^ ]*nosuid,nodev" what="a nodev tmpfs"
	fi
	has "$out" "$devfs" && has "$out" "^tmpfs /run/udev tmpfs" &&
		has "$out" " /sys fuse" && has "$out" control-present &&
		ok "$layout: /sys is the FUSE tree, /dev $what, /run/udev with control" ||
		bad "$layout: mounts: $out"
	has "$out" "sda1 *8:1 *part" && has "$out" "nvme0n1p2 *259:2 *part" &&
		has "$out" "^sda1 *8:1" &&
		ok "$layout: lsblk lists the disks and partitions, lsblk /dev/sda1 works" ||
		bad "$layout: lsblk: $out"
	has "$out" "^N: input/event1" && has "$out" "^E: ID_INPUT_MOUSE=1" &&
		has "$out" "^S: input/by-id/usb-Logitech_USB_Optical_Mouse-event-mouse" &&
		ok "$layout: udevadm info /dev/input/event1: node, recorded properties and links" ||
		bad "$layout: udevadm info: $out"
	n_db=$(sed -n 's/^export-db //p' <<<"$out")
	n_probe=$(sed -n 's/^devices //p' <<<"$out")
	[[ -n $n_db && $n_db == "$n_probe" ]] &&
		has "$out" "^nodes-ok 32" && has "$out" "^devnodes 32" &&
		ok "$layout: udev-probe summary: $n_probe devices (= udevadm --export-db), 32 nodes right" ||
		bad "$layout: udev-probe summary: $out"
done
# COMMAND's uid and gid are the caller's, and so are the files it writes in the host's directories
want=${as_uid:-0}
rc=0; out=$("$run" --sample -- sh -c 'echo "ids $(id -u) $(id -g)"; touch "$1"; grep -E "^Cap(Eff|Prm)" /proc/self/status' sh \
	"$work/owned" 2>&1) || rc=$?
caps=0000000000000000
((want == 0)) && caps=$(awk '/^CapEff/ { print $2 }' /proc/self/status)
((rc == 0)) && has "$out" "^ids $want $want$" && [[ $(stat -c '%u:%g' "$work/owned") == "$want:$want" ]] &&
	has "$out" "^CapEff:.$caps$" &&
	ok "COMMAND runs as uid and gid $want with capabilities $caps; a file it writes is $want:$want's" ||
	bad "COMMAND's identity: exit $rc: $out; $(stat -c '%u:%g' "$work/owned" 2>&1)"
if [[ -n $as_uid ]]; then
	# --root: uid 0 inside for programs that insist on it, the caller's on the host
	rm -f "$work/owned"
	rc=0; out=$("$run" --root --sample -- sh -c 'echo "ids $(id -u) $(id -g)"; touch "$1"; lsblk -dn -o NAME' sh \
		"$work/owned" 2>&1) || rc=$?
	((rc == 0)) && has "$out" "^ids 0 0$" && has "$out" "^sda$" &&
		[[ $(stat -c '%u:%g' "$work/owned") == "$as_uid:$as_uid" ]] &&
		ok "--root: COMMAND is uid 0 inside, lsblk works, its file is $as_uid:$as_uid's on the host" ||
		bad "--root: exit $rc: $out; $(stat -c '%u:%g' "$work/owned" 2>&1)"
fi
check_clean "sample runs"

# ---------------------------------------------------- recordings, both layouts
nrec=0
for rec in "${recs[@]}"; do
	[[ -e $rec ]] || continue
	nrec=$((nrec + 1))
	name=$(basename "$rec")
	# each recorded node: name, and the device's last path component
	# (a node with recorded contents is a plain file: no number to look up)
	nodes=$(awk '/^P: /{p=$2} /^N: [^=]*$/{n=$2; sub(/.*\//, "", p); print n, p}' "$rec")
	for layout in class devices; do
		# every node in udevadm's database export, and looked up by node
		# through /sys/dev/{char,block}/M:m (class and bus devices alike)
		script="$probe summary || exit 1; db=\$(udevadm info --export-db)"
		while read -r node dev; do
			[[ -n $node ]] || continue
			script+="; echo \"\$db\" | grep -qx 'N: $node' || { echo 'export-db: no $node'; exit 1; }"
			script+="; t=\$(stat -c '%F' /dev/$node); k=char; [ \"\$t\" = 'block special file' ] && k=block"
			script+="; mm=\$(printf '%d:%d' 0x\$(stat -c %t /dev/$node) 0x\$(stat -c %T /dev/$node))"
			script+="; [ -e /sys/dev/\$k/\$mm ] || { echo \"no /sys/dev/\$k/\$mm for /dev/$node\"; exit 1; }"
			script+="; udevadm info /dev/$node | grep -q '^P: .*/$dev\$' || { echo 'udevadm info /dev/$node: not $dev'; exit 1; }"
		done <<<"$nodes"
		if out=$("$run" --layout "$layout" --load "$rec" -- sh -c "$script" 2>&1); then
			ok "$name ($layout): udev-probe passes; udevadm --export-db has each of $(wc -l <<<"$nodes") nodes; udevadm info finds each by node"
		else
			bad "$name ($layout): $out"
		fi
	done
	# a recorded node with contents is a regular file holding those bytes
	hexnode=$(awk '/^N: .*=/{print $2; exit}' "$rec")
	if [[ -n $hexnode ]]; then
		node=${hexnode%%=*} hex=${hexnode#*=}
		got=$("$run" --load "$rec" -- sh -c "test -f /dev/$node && od -An -tx1 -v /dev/$node" |
		      tr -d ' \n' | tr a-f A-F) || true
		[[ $got == "$hex" ]] && ok "$name: /dev/$node holds the recorded bytes" ||
			bad "$name: /dev/$node contents: '$got' != '$hex'"
	fi
done
((nrec >= 3)) && ok "$nrec recordings tried" || bad "only $nrec recordings of ${recs[*]}"
# a USB device's number leads to it too (its node holds recorded bytes, so by /sys/dev)
out=$("$run" --load "$own/usb-mouse.umockdev" -- udevadm info /sys/dev/char/189:1 2>&1)
has "$out" "P: /devices/pci0000:00/0000:00:14.0/usb1/1-2$" &&
	has "$out" "N: bus/usb/001/002" && has "$out" "E: MAJOR=189" &&
	ok "udevadm info /sys/dev/char/189:1: the USB device, its node name" ||
	bad "udevadm info /sys/dev/char/189:1: $out"
# umockdev-run's spelling of --load
out=$("$run" -d "$own/usb-mouse.umockdev" -- udevadm info /sys/dev/char/189:1 2>&1)
has "$out" "N: bus/usb/001/002" && ok "-d FILE (umockdev-run's option) loads FILE" ||
	bad "-d FILE: $out"
check_clean "recording runs"

# records with nodes and links on the environment's own /dev entries
write_escape_records() {
	printf '%s\n' 'P: /devices/virtual/mem/escnode' 'N: fd/0/ESCNODE' 'E: SUBSYSTEM=mem' \
		'A: dev=1:1\n' >"$work/esc.umockdev"
	printf '%s\n' 'P: /devices/virtual/mem/lnk' 'N: lnk' 'S: stdout' 'S: ptmx' \
		'E: SUBSYSTEM=mem' 'A: dev=1:7\n' >"$work/lnk.umockdev"
	printf '%s\n' 'P: /devices/virtual/mem/ptl' 'N: ptl' 'S: ptmx' 'E: SUBSYSTEM=mem' \
		'A: dev=1:8\n' >"$work/ptl.umockdev"
}

# ------------------------------------------------- hotplug from outside (own daemon)
hotplug_outside() { # hotplug_outside LABEL [classfs-run options...]
	local label=$1 rdy=$work/ready.$1 sock out rc
	shift
	rm -f "$rdy" "$rdy.added"
	"$run" "$@" -- "$probe" monitor "$rdy" input event9 20 >"$work/mon.$label" 2>&1 &
	local pid=$!
	pids+=("$pid")
	if ! wait_file "$rdy" 20; then
		bad "$label: the monitor did not start"
		return
	fi
	sock=$(cat "$rdy")
	out=$("$classctl" --socket "$sock" add input event9 --dev 13:73 --attr name=probe 2>&1) ||
		bad "$label: classctl add: $out"
	# remove once the monitor has checked the add (node, database entry)
	wait_file "$rdy.added" 20 || true
	[[ -e $rdy.added ]] || bad "$label: the monitor did not hear the add"
	local rm_out rm_rc=0
	rm_out=$("$classctl" --socket "$sock" rm input event9 2>&1) || rm_rc=$?
	rc=0
	wait "$pid" || rc=$?
	out=$(cat "$work/mon.$label")
	# the monitor ends the environment once it heard the remove, which
	# may be before the daemon's answer to classctl went out
	if ((rm_rc != 0)) && ! { has "$out" "^remove input event9" &&
		[[ $rm_out == *"connection to classfsd lost"* ]]; }; then
		bad "$label: classctl rm: $rm_out"
	fi
	((rc == 0)) && has "$out" "^add input event9 /dev/event9" && has "$out" "^remove input event9" &&
		ok "$label: libudev monitor saw add (node and database entry there) then remove" ||
		bad "$label: monitor exit $rc: $out"
}
hotplug_outside outside-class --sample
hotplug_outside outside-devices --layout devices --sample
for rec in "${recs[@]}"; do
	[[ -e $rec ]] && hotplug_outside "outside-$(basename "$rec" .umockdev)" --load "$rec"
done

# ---------------------------------------------------- hotplug from inside
out=$("$run" --sample -- sh -c '
	r=$(mktemp -u)
	'"$probe"' monitor "$r" input event9 20 & p=$!
	i=0; while [ ! -s "$r" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i+1)); done
	'"$classctl_in"' add input event9 --dev 13:73 || exit 1
	for i in $(seq 200); do [ -e "$r.added" ] && break; sleep 0.1; done
	ls -l /dev/event9 /dev/char/13:73; cat /run/udev/data/c13:73
	'"$classctl_in"' rm input event9 || exit 1
	wait $p || exit 1
	for i in $(seq 50); do [ -e /dev/event9 ] || break; sleep 0.1; done
	test -e /dev/event9 && echo node-still-there; test -e /run/udev/data/c13:73 && echo db-still-there
	rm -f "$r" "$r.added"; exit 0' 2>&1) && rc=0 || rc=$?
((rc == 0)) && has "$out" "^crw------- .* 13, 73 .*/dev/event9" && has "$out" "^V:1$" &&
	has "$out" "/dev/char/13:73 -> ../event9" && ! has "$out" "still-there" &&
	ok "inside: classctl via CLASSFS_SOCKET; node 0600 13:73, char link, database entry; gone after remove" ||
	bad "inside: exit $rc: $out"
# a record loaded while the environment runs, in the class layout (its
# events name the device /class/...): the device's recorded properties
# reach its database entry, as its udev rules' would
printf '%s\n' 'P: /devices/virtual/input/event9' 'N: input/event9' 'A: dev=13:73\n' \
	'E: DEVNAME=/dev/input/event9' 'E: SUBSYSTEM=input' 'E: ID_CLASSFS_TEST=hotplugged' '' \
	>"$work/hot.umockdev"
chmod 0644 "$work/hot.umockdev"
out=$("$run" --sample -- sh -c '
	'"$classctl_in"' load '"$work/hot.umockdev"' || exit 1
	for i in $(seq 100); do [ -e /run/udev/data/c13:73 ] && break; sleep 0.1; done
	cat /run/udev/data/c13:73' 2>&1) && rc=0 || rc=$?
((rc == 0)) && has "$out" "^E:ID_CLASSFS_TEST=hotplugged" &&
	ok "class layout: a record loaded inside: its recorded property in the database entry" ||
	bad "class layout: a record loaded inside: exit $rc: $out"
# devices of the snapshot (the loaded record) removed: what was made for
# each goes, its node, number link, recorded S: link and database file
out=$("$run" --sample -- sh -c '
	link=/dev/input/by-id/usb-Logitech_USB_Optical_Mouse-event-mouse
	for f in /dev/input/event1 /dev/char/13:65 $link /run/udev/data/c13:65 \
	         /run/udev/data/+drm:card0-eDP-1; do test -e $f || echo "missing before: $f"; done
	'"$classctl_in"' rm input event1 && '"$classctl_in"' rm drm card0-eDP-1 || exit 1
	for i in $(seq 100); do [ -e /run/udev/data/+drm:card0-eDP-1 ] || break; sleep 0.1; done
	for f in /dev/input/event1 /dev/char/13:65 $link /run/udev/data/c13:65 \
	         /run/udev/data/+drm:card0-eDP-1; do test -e $f && echo "still there: $f"; done
	test -b /dev/sda && test -e /run/udev/data/b8:0 && echo others-intact' 2>&1) || true
has "$out" "^others-intact" && ! has "$out" "missing before" && ! has "$out" "still there" &&
	ok "snapshot devices removed: node, number link, S: link and database file gone, the rest intact" ||
	bad "snapshot devices removed: $out"
# a real monitor nobody here wrote: udevadm monitor --udev
out=$("$run" --sample -- sh -c '
	m="${TMPDIR:-/tmp}/mon.$$"
	udevadm monitor --udev --property --subsystem-match=input >"$m" 2>&1 & p=$!
	# it prints its header once its monitor listens
	i=0; until grep -qs "^UDEV - " "$m" || [ $i -ge 100 ]; do sleep 0.1; i=$((i+1)); done
	'"$classctl_in"' add input event9 --dev 13:73 && '"$classctl_in"' rm input event9
	i=0; until grep -qs "remove" "$m" || [ $i -ge 100 ]; do sleep 0.1; i=$((i+1)); done
	kill $p; wait $p; cat "$m"; rm -f "$m"' 2>&1) || true
has "$out" "^UDEV .* add .*/event9 (input)" && has "$out" "^UDEV .* remove .*/event9 (input)" &&
	has "$out" "^DEVNAME=/dev/event9" &&
	ok "udevadm monitor --udev inside sees the add and the remove" ||
	bad "udevadm monitor --udev: $out"
check_clean "hotplug runs"

# --------------------------------------------------- joining a running daemon
if [[ -n $as_uid ]]; then
	rc=0; out=$("$run" --socket "$work/none.sock" -- sh -c 'echo ran' 2>&1) || rc=$?
	((rc == 125)) && has "$out" "joining a running classfsd (--socket $work/none.sock) needs root" &&
		! has "$out" "^ran" && ok "join as uid $as_uid: refused, exit 125, COMMAND not run" ||
		bad "join as uid $as_uid: exit $rc: $out"
	echo "note: joining a running daemon, a daemon mounted elsewhere, a chroot: root's (skipped as uid $as_uid)"
	skip_root_only=1
fi
if [[ -z ${skip_root_only:-} ]]; then
mkdir -p "$work/mnt"
"$classfsd" --socket "$work/join.sock" --mount "$work/mnt" --sample >"$work/join.log" 2>&1 &
jpid=$!
pids+=("$jpid")
for i in $(seq 100); do [[ -S $work/join.sock ]] && break; sleep 0.1; done
out=$("$run" --socket "$work/join.sock" -- sh -c 'lsblk -l -o NAME; echo "sock=$CLASSFS_SOCKET"' 2>&1) || true
has "$out" "^sda1" && has "$out" "sda3" && has "$out" "sock=$work/join.sock" &&
	ok "join: lsblk sees the joined daemon's tree, CLASSFS_SOCKET is its socket" ||
	bad "join: $out"
hotplug_outside join --socket "$work/join.sock"
# records whose node or links name the environment's own entries, loaded by
# the daemon (classfs-run never saw the files): no node or link there, and
# nothing made outside the private /dev through its /dev/fd link
write_escape_records
mkdir "$work/stdin-dir"
for rec in esc lnk; do
	"$classctl" --socket "$work/join.sock" load "$work/$rec.umockdev" ||
		bad "join: classctl load $rec.umockdev"
done
out=$("$run" --socket "$work/join.sock" -- sh -c '
	echo "stdout -> $(readlink /dev/stdout)"; echo "ptmx -> $(readlink /dev/ptmx)"
	echo "fd -> $(readlink /dev/fd)"; ls -l /dev/lnk' <"$work/stdin-dir" 2>&1) || true
has "$out" "^stdout -> /proc/self/fd/1$" && has "$out" "^ptmx -> pts/ptmx$" &&
	has "$out" "^fd -> /proc/self/fd$" && has "$out" "^crw.* 1, 7 .*/dev/lnk" &&
	[[ -z $(ls -A "$work/stdin-dir") ]] &&
	ok "join: N: fd/0/ESCNODE made nothing (not in the directory on stdin), S: stdout and S: ptmx left the environment's links" ||
	bad "join: escape records: $out; in the stdin directory: $(ls -lA "$work/stdin-dir")"
kill "$jpid"
wait "$jpid" || bad "join: classfsd exit status $?"
check_clean "join runs"
fi

# ------------------------------------------------------------ static programs
if [[ -n $static ]]; then
	out=$("$run" --load "$own/usb-mouse.umockdev" -- "$static" /dev/input/event1 \
		/sys/class/input/event1/dev /sys/class/input/event1/uevent /dev/null 2>&1) || true
	has "$out" "^/dev/input/event1 c 13:65 open=ok" &&
		has "$out" "^/sys/class/input/event1/dev = 13:65" &&
		has "$out" "^/sys/class/input/event1/uevent = MAJOR=13" &&
		has "$out" "^/dev/null c 1:3 open=ok" &&
		ok "static program: node 13:65 seen and opened (an emulated node), /sys read, /dev/null usable" ||
		bad "static program: $out"
else
	echo "note: static probe not built (sanitizer build): static program test skipped"
fi
if [[ -x /bin/busybox ]]; then
	out=$("$run" --load "$own/usb-mouse.umockdev" -- /bin/busybox sh -c \
		'busybox ls -l /dev/input/event1; busybox cat /sys/class/input/event1/dev; busybox ls /sys/class/input' 2>&1) || true
	has "$out" "13, *65 .*/dev/input/event1" && has "$out" "^13:65" && has "$out" "input1" &&
		ok "static busybox: ls -l /dev/input/event1, cat /sys/class/input/event1/dev" ||
		bad "static busybox: $out"
else
	echo "note: no /bin/busybox (package busybox-static): busybox test skipped"
fi

# ------------------------------------------------------- exit status, signals
rc=0; out=$("$run" --sample -- sh -c 'exit 7' 2>&1) || rc=$?
((rc == 7)) && ok "exit status 7 passed through" || bad "exit status: $rc: $out"
rc=0; out=$("$run" --sample -- /nonexistent/program 2>&1) || rc=$?
((rc == 127)) && has "$out" "/nonexistent/program: No such file" && ok "missing COMMAND: 127" ||
	bad "missing COMMAND: $rc: $out"
rc=0; out=$("$run" --sample -- sh -c 'kill -9 $$' 2>&1) || rc=$?
((rc == 137)) && ok "COMMAND killed by SIGKILL: 137" || bad "COMMAND killed: $rc: $out"
check_clean "killed COMMAND"

rdy=$work/ready.term
"$run" --sample -- sh -c 'trap "exit 42" TERM; echo up >'"$rdy"'; while :; do sleep 0.1; done' 2>"$work/term.err" &
rpid=$!
pids+=("$rpid")
if wait_file "$rdy" 20; then
	kill -TERM "$rpid"
	rc=0; wait "$rpid" || rc=$?
	((rc == 42)) && ok "SIGTERM passed on to COMMAND (its trap's status 42)" || bad "SIGTERM: $rc"
else
	settle
	bad "SIGTERM: COMMAND did not start: $(cat "$work/term.err")"
fi
check_clean "SIGTERM"

rdy=$work/ready.kill
"$run" --sample -- sh -c 'echo $$ >'"$rdy"'.tmp; mv '"$rdy"'.tmp '"$rdy"'; exec sleep 60' &
rpid=$!
pids+=("$rpid")
if wait_file "$rdy" 20; then
	cmdpid=$(cat "$rdy")	# sh's pid, which became sleep's
	kill -KILL "$rpid"
	wait "$rpid" 2>/dev/null || true
	# the socket directory of a SIGKILLed classfs-run stays (empty): only processes count
	for i in $(seq 50); do
		! kill -0 "$cmdpid" 2>/dev/null &&
			! ps -eo args= | grep -F -- "$work/" | grep -v grep >/dev/null && break
		sleep 0.1
	done
	if kill -0 "$cmdpid" 2>/dev/null || ps -eo args= | grep -F -- "$work/" | grep -v grep >/dev/null; then
		bad "SIGKILL of classfs-run: left running: $(ps -o pid=,args= -p "$cmdpid" || true) $(ps -eo pid=,args= | grep -F -- "$work/" | grep -v grep || true)"
	else
		ok "SIGKILL of classfs-run: COMMAND, holder and daemon gone"
	fi
	ls "$TMPDIR"/classfs-run.*/control >/dev/null 2>&1 && bad "SIGKILL: daemon socket left" ||
		ok "SIGKILL of classfs-run: the daemon removed its socket"
	rm -rf "${TMPDIR:?}"/classfs-run.*
else
	bad "SIGKILL: COMMAND did not start"
fi

if [[ -z ${skip_root_only:-} ]]; then
# ------------------------------------------------ a daemon not mounted here
# classfsd says it is mounted on /sys, but in a mount namespace of its own:
# /sys here is the host's, and nothing may run against it
unshare -m --propagation private "$classfsd" --socket "$work/elsewhere.sock" --mount /sys \
	--sample >"$work/elsewhere.log" 2>&1 &
epid=$!
pids+=("$epid")
wait_file "$work/elsewhere.sock" 20 || bad "elsewhere: classfsd did not start: $(cat "$work/elsewhere.log")"
rc=0; out=$("$run" --socket "$work/elsewhere.sock" -- sh -c 'echo ran; lsblk -dn -o NAME' 2>&1) || rc=$?
((rc == 125)) && has "$out" "/sys in the environment is not the classfs tree" && ! has "$out" "^ran" &&
	ok "joined daemon mounted on /sys elsewhere: exit 125, COMMAND not run" ||
	bad "joined daemon mounted on /sys elsewhere: exit $rc: $out"

# ------------------------------------------------------------- in a chroot
# build chroots (sbuild's, pbuilder's) run test suites: classfs-run there
# must give COMMAND the tree, not the host's /sys and /dev.  One chroot is
# a bind of / (with its mounts) in this script's private namespace; the
# other a plain directory holding binds of /'s directories (its root is no
# mount point, as pbuilder's).
plain=$work/plain
mkdir "$plain"
for e in /*; do
	if [[ -L $e ]]; then
		cp -P "$e" "$plain/"
	elif [[ -d $e ]]; then
		mkdir "$plain/${e#/}"
		# /tmp holds $work: its mounts (this chroot's own) are not wanted twice
		if [[ $e == /tmp ]]; then mount --bind "$e" "$plain/tmp"; else mount --rbind "$e" "$plain/${e#/}"; fi
	fi
done
rc=0; out=$(chroot "$plain" "$run" --sample -- sh -c '
	awk '"'"'$2 == "/sys" { t = $3 } END { print "sys-type " t }'"'"' /proc/self/mounts
	lsblk -dn -o NAME' 2>&1) || rc=$?
((rc == 0)) && has "$out" "^sys-type fuse.classfs" && has "$out" "^sda$" &&
	ok "chroot into a plain directory: /sys is the tree, lsblk lists the sample's disks" ||
	bad "chroot into a plain directory: exit $rc: $out"
unbind "$plain" && rm -rf "$plain" || bad "chroot into a plain directory: cannot unmount it"

croot=$work/chroot
mkdir "$croot"
if mount --rbind / "$croot"; then
	sample_disks="loop0 nvme0n1 sda"
	rc=0; out=$(chroot "$croot" "$run" --sample -- sh -c '
		awk '"'"'$2 == "/sys" { t = $3 } END { print "sys-type " t }'"'"' /proc/self/mounts
		lsblk -dn -o NAME
		'"$probe"' summary' 2>&1) || rc=$?
	host_only=
	for disk in $(lsblk -dn -o NAME); do
		[[ " $sample_disks " == *" $disk "* ]] || ! has "$out" "^$disk\$" || host_only+=" $disk"
	done
	((rc == 0)) && has "$out" "^sys-type fuse.classfs" && has "$out" "^sda$" &&
		has "$out" "^nvme0n1$" && [[ -z $host_only ]] && has "$out" "^nodes-ok 32" &&
		ok "chroot: /sys is the tree, lsblk lists the sample's disks (not the host's), udev-probe found and passes" ||
		bad "chroot: exit $rc, host disks seen:${host_only:- none}: $out"
	rc=0; out=$(chroot "$croot" "$run" --sample -- sh -c 'exit 7' 2>&1) || rc=$?
	((rc == 7)) && ok "chroot: exit status 7 passed through" || bad "chroot: exit status: $rc: $out"
	rc=0; out=$(chroot "$croot" "$run" --socket "$work/elsewhere.sock" -- sh -c 'echo ran' 2>&1) || rc=$?
	((rc == 125)) && ! has "$out" "^ran" &&
		ok "chroot: joined daemon mounted on /sys elsewhere: exit 125, COMMAND not run" ||
		bad "chroot: joined daemon mounted on /sys elsewhere: exit $rc: $out"
	unbind "$croot" && rmdir "$croot" || bad "chroot: cannot unmount $croot"
else
	bad "chroot: cannot bind / onto $croot"
fi
kill "$epid"
wait "$epid" || true
check_clean "chroot and elsewhere runs"
fi

# ------------------------------------------------------ umockdev-run's name
# Run through a link named umockdev-run (as meson installs one), classfs-run
# stands in for umockdev-run: its --version is a umockdev release a
# runner's version check accepts (libfprint's wants >= 0.16.2 for pcap
# replay), and a runner's umockdev-run command line runs unchanged.
mkdir -m 0755 "$work/umd"
ln -s "${real_run:-$run_bin}" "$work/umd/umockdev-run"
umd_run() {
	if [[ -n $as_uid ]]; then
		cfs_stage_dir=$work/stage cfs_as_uid "$as_uid" "$work/umd/umockdev-run" "$@"
	else
		"$work/umd/umockdev-run" "$@"
	fi
}
v=$(umd_run --version 2>&1) || v="failed: $v"
own_v=$("$run" --version 2>&1) || own_v="failed: $own_v"
[[ $v =~ ^[0-9]+(\.[0-9]+)+$ && $(printf '0.16.2\n%s\n' "$v" | sort -V | head -n1) == 0.16.2 ]] &&
	[[ $own_v =~ ^[0-9]+(\.[0-9]+)+$ && $own_v != "$v" ]] &&
	ok "as umockdev-run: --version $v (classfs-run's own: $own_v)" ||
	bad "as umockdev-run: --version '$v', classfs-run's '$own_v'"
rc=0; out=$(umd_run -d "${recs[0]}" -- sh -c 'ls /sys/class/input; echo "exit $?"' 2>&1) || rc=$?
((rc == 0)) && has "$out" "^exit 0" && has "$out" "input" &&
	ok "as umockdev-run: -d RECORD -- COMMAND runs COMMAND in the environment" ||
	bad "as umockdev-run: -d RECORD: exit $rc: $out"
# its records' paths are the devices layout's, as umockdev's testbed shows them
rc=0; out=$(umd_run -d "${recs[0]}" -- udevadm info --query=path --name=/dev/input/event1 2>&1) || rc=$?
((rc == 0)) && [[ $out == /devices/pci0000:00/*/event1 ]] &&
	ok "as umockdev-run: the devices layout ($out)" ||
	bad "as umockdev-run: udevadm info --query=path: exit $rc: $out"
# killed by a signal, it dies of the same signal (as umockdev-run does), its
# environment gone; so does classfs-run itself
for r in umd_run "$run"; do
	rc=0
	out=$(python3 -c 'import subprocess, sys
p = subprocess.run(sys.argv[1:] + ["--", "sh", "-c", "kill -SEGV $$"], capture_output=True)
print(p.returncode)' "$([[ $r == umd_run ]] && echo "$work/umd/umockdev-run" || echo "$r")" 2>&1) || rc=$?
	[[ $out == -11 ]] &&
		ok "$([[ $r == umd_run ]] && echo umockdev-run || echo classfs-run): COMMAND killed by SIGSEGV, so is it (returncode $out)" ||
		bad "signal: $out"
done
check_clean "umockdev-run's name"

# ------------------------------------------------------------------ bad input
expect_fail() { # expect_fail DESCRIPTION PATTERN classfs-run-args...
	local what=$1 pat=$2 out rc=0
	shift 2
	out=$("$run" "$@" 2>&1) || rc=$?
	((rc == 125)) && has "$out" "$pat" && ok "$what: exit 125, says '$pat'" ||
		bad "$what: exit $rc: $out"
}
printf 'P: /devices/virtual/foo/bar\nX: what\n' >"$work/bad.umockdev"
expect_fail "missing record" "cannot read $work/nope.umockdev" --load "$work/nope.umockdev" -- true
expect_fail "malformed record" "bad.umockdev:2" --load "$work/bad.umockdev" -- true
expect_fail "bad layout" "--layout: 'sideways'" --layout sideways -- true
expect_fail "no command" "no COMMAND" --sample
# a record given without COMMAND is checked first, as umockdev-run does
expect_fail "malformed record, no command" "bad.umockdev:2" --load "$work/bad.umockdev"
[[ -n $as_uid ]] ||
	expect_fail "no daemon at socket" "cannot connect to classfsd at $work/none.sock" --socket "$work/none.sock" -- true
expect_fail "layout with socket" "cannot be given with --socket" --socket "$work/x" --layout devices -- true
# a record's node or link on the environment's own entries: refused at its line
write_escape_records
mkdir -p "$work/stdin-dir"
rc=0; out=$("$run" --load "$work/esc.umockdev" -- true <"$work/stdin-dir" 2>&1) || rc=$?
((rc == 125)) && has "$out" "esc.umockdev:2: node /dev/fd/0/ESCNODE" &&
	[[ -z $(ls -A "$work/stdin-dir") ]] &&
	ok "N: fd/0/ESCNODE: exit 125 at line 2, no node in the directory on stdin" ||
	bad "N: fd/0/ESCNODE: exit $rc: $out; in the stdin directory: $(ls -lA "$work/stdin-dir")"
expect_fail "S: stdout" "lnk.umockdev:3: link /dev/stdout" --load "$work/lnk.umockdev" -- true
expect_fail "S: ptmx" "ptl.umockdev:3: link /dev/ptmx" --load "$work/ptl.umockdev" -- true
check_clean "bad input"

# ------------------------------------------------ user namespaces refused
# A user namespace of root's (uids and gids 0-65535 mapped to themselves)
# in which user.max_user_namespaces is 0: classfs-run run by uid U there
# must say which setting refuses it and exit 125, running nothing.
if [[ -n $as_uid ]]; then
	cat >"$work/refused.sh" <<-'EOS'
		read -r _ <"$1"
		# an exec() as uid 0 of the mapped namespace: the capabilities that set the limit
		exec sh -c 'echo 0 >/proc/sys/user/max_user_namespaces && exec "$0" --sample -- echo ran' "$2"
	EOS
	mkfifo "$work/refused.fifo"
	unshare --user sh "$work/refused.sh" "$work/refused.fifo" "$run" >"$work/refused.out" 2>&1 &
	upid=$!
	pids+=("$upid")
	# its namespace exists once unshare made it
	for i in $(seq 100); do
		[[ $(readlink "/proc/$upid/ns/user") != "$(readlink /proc/self/ns/user)" ]] && break
		sleep 0.05
	done
	echo '0 0 65536' >"/proc/$upid/uid_map" && echo '0 0 65536' >"/proc/$upid/gid_map" ||
		bad "refused: cannot map the uids of the test's user namespace"
	echo go >"$work/refused.fifo"
	rc=0; wait "$upid" || rc=$?
	settle
	out=$(cat "$work/refused.out")
	((rc == 125)) && has "$out" "user.max_user_namespaces = 0" &&
		has "$out" "sysctl -w user.max_user_namespaces=" && ! has "$out" "^ran" &&
		ok "user namespaces refused (user.max_user_namespaces = 0): exit 125, the setting named, COMMAND not run" ||
		bad "user namespaces refused: exit $rc: $out"
	check_clean "user namespaces refused"
fi

settle
"$src/tests/stderr-only.sh" "$src/tests/run/test-classfs-run.stderr" --log "$stderr_log" &&
	ok "classfs-run's stderr: only the lines the cases expect" ||
	bad "classfs-run's stderr: lines no case expects (above)"
cfs_summary
