#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-nodes.sh CLASSFS-RUN CLASSFSD NODE-PROBE [STATIC-NODE-PROBE]
#
# classfs-run's device nodes that answer, with programs nobody here wrote
# (evtest, python3) and with node-probe, linked statically when given
# (umockdev's preload library cannot reach it): umockdev-run's options
# -i (ioctl recording), -e (evemu events), -s (read/write script), -u (a
# socket's script) on the repo's own made-up devices (tests/run/data,
# tests/devio/data); a script the program does not follow, named by
# file:line; bad options and files refused with exit 125 and a message
# naming what, before COMMAND runs.
#
# With CLASSFS_RUN_TEST_UID=U every classfs-run runs as uid U (tests/stage.sh),
# with the same assertions.  Needs root (77 otherwise).
set -uo pipefail

if (($# < 3)); then
	echo "usage: $0 CLASSFS-RUN CLASSFSD NODE-PROBE [STATIC-NODE-PROBE]" >&2
	exit 2
fi
if ((EUID != 0)); then
	echo "SKIP: test-nodes.sh needs root (it runs as root and as another uid)"
	exit 77
fi
run=$(realpath "$1") classfsd=$(realpath "$2") probe=$(realpath "$3") static=${4:+$(realpath "$4")}
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib.sh
. "$src/tests/lib.sh"
tmp=$(mktemp -d /tmp/test-nodes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
data=$tmp/data
mkdir -m 0755 "$data"
cp "$src"/tests/run/data/* "$src/tests/devio/data/keyboard.ioctl" "$data/"
chmod -R a+rX "$tmp"
export CLASSFSD=$classfsd TMPDIR=$tmp
as_uid=${CLASSFS_RUN_TEST_UID:-}
if [[ -n $as_uid ]]; then
	. "$src/tests/stage.sh"
	chmod 0755 "$tmp"
	cfs_stage "$tmp/stage" classfsd probe run ${static:+static} >/dev/null ||
		{ echo "FAIL: cannot stage the programs for uid $as_uid"; exit 1; }
	cfs_stage_dir=$tmp/stage
	export CLASSFSD=$classfsd
	mkdir -m 0777 "$tmp/tmp" && export TMPDIR=$tmp/tmp
fi

# crun ARG... - classfs-run as the test's uid; stdout and stderr to $tmp/out, $tmp/err
crun() {
	if [[ -n $as_uid ]]; then
		cfs_as_uid "$as_uid" "$run" "$@" >"$tmp/out" 2>"$tmp/err"
	else
		"$run" "$@" >"$tmp/out" 2>"$tmp/err"
	fi
}

has() { grep -qE -- "$2" "$1"; }

kbd=(-d "$data/keyboard.umockdev" -i "/dev/input/event3=$data/keyboard.ioctl"
     -e "/dev/input/event3=$data/keyboard.evemu")

# ---- evtest: its queries from the ioctl recording, the events from evemu
if command -v evtest >/dev/null; then
	crun "${kbd[@]}" -- timeout 2 evtest /dev/input/event3
	has "$tmp/out" 'Input device name: "classfs test keyboard"' &&
		has "$tmp/out" 'Input device ID: bus 0x3 vendor 0x1d6b product 0x104 version 0x111' &&
		has "$tmp/out" 'type 1 \(EV_KEY\), code 30 \(KEY_A\), value 1' &&
		has "$tmp/out" 'type 1 \(EV_KEY\), code 30 \(KEY_A\), value 0' &&
		has "$tmp/out" 'type 1 \(EV_KEY\), code 28 \(KEY_ENTER\), value 1' &&
		ok "evtest reads the keyboard: name and id from the ioctl recording, keys from evemu" ||
		bad "evtest: $(cat "$tmp/out" "$tmp/err")"
else
	echo "note: evtest not installed: its test skipped"
fi

# ---- node-probe, dynamic and static: fstat, the queries, the events
for p in "$probe" ${static:+"$static"}; do
	kind=dynamic
	[[ $p == "$static" ]] && kind=static
	crun "${kbd[@]}" -- "$p" evdev /dev/input/event3 3
	has "$tmp/out" '^fstat: char 13:67$' && has "$tmp/out" '^version: 0x10001$' &&
		has "$tmp/out" '^name: classfs test keyboard$' &&
		has "$tmp/out" '^event: type 4 code 4 value 458756$' &&
		has "$tmp/out" '^event: type 1 code 30 value 1$' &&
		ok "$kind node-probe: the node is char 13:67, its ioctls and events answer" ||
		bad "$kind node-probe: $(cat "$tmp/out" "$tmp/err")"
	# a request the recording lacks: ENOTTY for a non-evdev request, logged with its number
	crun "${kbd[@]}" -- "$p" ioctl /dev/input/event3 80085501
	has "$tmp/out" '^ioctl 0x80085501: -1 errno 25 ' &&
		has "$tmp/err" 'classfs: /dev/input/event3: ioctl 0x80085501 .*size 8.* not in the recording' &&
		ok "$kind node-probe: an ioctl not recorded is ENOTTY, logged with its number and size" ||
		bad "$kind node-probe unrecorded ioctl: $(cat "$tmp/out" "$tmp/err")"
done

# ---- a modem's dialogue (-s), through a pty
crun -d "$data/modem.umockdev" -s "/dev/ttyCFS0=$data/modem.script" -- \
	"$probe" echo /dev/ttyCFS0 $'AT\r'
has "$tmp/out" '^read: ' && grep -q $'OK\r' "$tmp/out" &&
	ok "a read/write script answers AT with OK on the tty node" ||
	bad "modem script: $(cat "$tmp/out" "$tmp/err")"
crun -d "$data/modem.umockdev" -s "/dev/ttyCFS0=$data/modem.script" -- \
	timeout 2 "$probe" echo /dev/ttyCFS0 $'ATZ\r'
has "$tmp/err" 'modem.script:3: expected' &&
	ok "a write the script does not expect is named by file:line" ||
	bad "script mismatch: $(cat "$tmp/out" "$tmp/err")"

# ---- a socket's script (-u), a Python client
if command -v python3 >/dev/null; then
	crun -u "/tmp/classfs-test-modem.sock=$data/modem.script" -- python3 -c '
import socket, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("/tmp/classfs-test-modem.sock")
s.sendall(b"AT\r")
print(repr(s.recv(100)))'
	has "$tmp/out" "OK" && ok "a Unix socket plays its script to a client" ||
		bad "socket script: $(cat "$tmp/out" "$tmp/err")"
	[[ ! -e /tmp/classfs-test-modem.sock ]] && ok "the socket is gone afterwards" ||
		bad "/tmp/classfs-test-modem.sock left behind"
fi

# ---- refusals: exit 125, a message naming what, COMMAND not run
refused() {
	local what=$1 pattern=$2
	shift 2
	rm -f "$tmp/ran"
	crun "$@" -- touch "$tmp/ran"
	local rc=$?
	if ((rc == 125)) && has "$tmp/err" "$pattern" && [[ ! -e $tmp/ran ]]; then
		ok "refused: $what"
	else
		bad "$what: exit $rc, $(cat "$tmp/err")"
	fi
}
printf 'EVIOCGVERSION 0 01000100\nEVIOCGNOPE 0 00\n' >"$data/bad.ioctl"
printf 'E: 0.000000 0001 001e\n' >"$data/bad.evemu"
refused "-i without =FILE" "expected TARGET=FILE" "${kbd[@]:0:2}" -i /dev/input/event3
refused "-i of a missing file" "nonexistent.ioctl" "${kbd[@]:0:2}" -i /dev/input/event3=/nonexistent.ioctl
refused "-i of an empty file" "/dev/null" "${kbd[@]:0:2}" -i /dev/input/event3=/dev/null
refused "-i of a bad line, by file:line" "bad.ioctl:2" "${kbd[@]:0:2}" -i "/dev/input/event3=$data/bad.ioctl"
refused "-i for a node there is not" "/dev/input/event9" "${kbd[@]:0:2}" -i "/dev/input/event9=$data/keyboard.ioctl"
refused "-i for the host's /dev/null" "not a device node of the environment" "${kbd[@]:0:2}" -i "/dev/null=$data/keyboard.ioctl"
refused "-e of a bad line, by file:line" "bad.evemu:1" "${kbd[@]:0:2}" -e "/dev/input/event3=$data/bad.evemu"
refused "-p for a device that is no USB device" "no USB device" "${kbd[@]:0:2}" -p "/sys/devices/platform/classfs-kbd=$data/keyboard.ioctl"

cfs_summary
