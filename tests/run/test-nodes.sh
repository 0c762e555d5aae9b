#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-nodes.sh CLASSFS-RUN CLASSFSD NODE-PROBE MAKE-CAPTURE [STATIC-NODE-PROBE]
#
# classfs-run's device nodes that answer, with programs nobody here wrote
# (evtest, python3, lsusb) and with node-probe, linked statically when given
# (umockdev's preload library cannot reach it): umockdev-run's options
# -i (ioctl recording, and SPI transfer log), -e (evemu events), -s
# (read/write script), -u (a socket's script), -p (usbmon captures, which
# MAKE-CAPTURE writes here: no binary file in the repository) on the
# repo's own made-up devices (tests/run/data, tests/devio/data); a script
# the program does not follow, named by file:line; a bulk transfer the
# capture does not hold left without completion, an SPI transfer the log
# does not hold refused, both logged; bad options and files refused with
# exit 125 and a message naming what, before COMMAND runs.
#
# With CLASSFS_RUN_TEST_UID=U every classfs-run runs as uid U (tests/stage.sh),
# with the same assertions.  Needs root (77 otherwise).
set -uo pipefail

if (($# < 4)); then
	echo "usage: $0 CLASSFS-RUN CLASSFSD NODE-PROBE MAKE-CAPTURE [STATIC-NODE-PROBE]" >&2
	exit 2
fi
if ((EUID != 0)); then
	echo "SKIP: test-nodes.sh needs root (it runs as root and as another uid)"
	exit 77
fi
run=$(realpath "$1") classfsd=$(realpath "$2") probe=$(realpath "$3")
make_capture=$(realpath "$4") static=${5:+$(realpath "$5")}
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib.sh
. "$src/tests/lib.sh"
tmp=$(mktemp -d /tmp/test-nodes.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
data=$tmp/data
mkdir -m 0755 "$data"
cp "$src"/tests/run/data/* "$src/tests/devio/data/keyboard.ioctl" "$data/"
# root writes them: the uid under test only reads them, as the other recordings
"$make_capture" probe "$data/usbdev.pcap" && "$make_capture" lsusb "$data/lsusb.pcap" ||
	{ echo "FAIL: make-capture"; exit 1; }
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
usbsys=/sys/devices/platform/dummy_hcd.0/usb1/1-1
usbdev=(-d "$data/usbdev.umockdev" -p "$usbsys=$data/usbdev.pcap")
spidev=(-d "$data/spidev.umockdev" -i "/dev/spidev0.0=$data/spidev.ioctl")

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

# ---- lsusb -v through libusb: the descriptors from /sys and the node, the
# requests it makes of the device (qualifier, debug, status) from a capture
if command -v lsusb >/dev/null; then
	crun -d "$data/usbdev.umockdev" -p "$usbsys=$data/lsusb.pcap" -- \
		timeout 10 lsusb -v -d 1234:5678
	rc=$?
	((rc == 0)) && has "$tmp/out" '^Bus 001 Device 005: ID 1234:5678 ' &&
		has "$tmp/out" '^  iProduct +2 classfs test bulk device$' &&
		has "$tmp/out" '^        bEndpointAddress +0x81 +EP 1 IN$' &&
		has "$tmp/out" '^        bEndpointAddress +0x02 +EP 2 OUT$' &&
		has "$tmp/out" '^Device Qualifier \(for other device speed\):$' &&
		has "$tmp/out" '^Device Status: +0x0000$' && ! has "$tmp/err" 'stuck|cannot' &&
		ok "lsusb -v reads the USB device through libusb, its control requests from a capture" ||
		bad "lsusb: exit $rc, $(cat "$tmp/out" "$tmp/err")"
else
	echo "note: lsusb (usbutils) not installed: its test skipped"
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

	# usbdevfs as libusb drives it, answered from the capture: device 1/5's
	# packets only (1/6's and 2/5's are left out)
	crun "${usbdev[@]}" -- "$p" usb /dev/bus/usb/001/005 70696e67
	has "$tmp/out" '^fstat: char 189:4$' && has "$tmp/out" '^capabilities: 0x1f$' &&
		has "$tmp/out" '^control: status 0, 18 bytes 12 01 00 02 ff 00 00 40 34 12 78 56 00 01 01 02 00 01$' &&
		has "$tmp/out" '^bulk out: status 0, 4 bytes$' &&
		has "$tmp/out" '^bulk in: status 0, 4 bytes 70 6f 6e 67$' &&
		ok "$kind node-probe: the node of recorded contents is char 189:4, a usbmon capture answers GET_DESCRIPTOR and a bulk exchange" ||
		bad "$kind node-probe usb: $(cat "$tmp/out" "$tmp/err")"
	# other bulk data than the capture's: no completion (umockdev's way),
	# so the probe gives up, discards the URB as libusb does at its
	# timeout, and the replay says it never saw that URB
	crun "${usbdev[@]}" -- "$p" usb /dev/bus/usb/001/005 70696e68
	rc=$?
	((rc == 1)) && has "$tmp/out" '^control: status 0, 18 bytes 12 01 ' &&
		has "$tmp/out" '^bulk out: no completion \(Resource temporarily unavailable\)$' &&
		has "$tmp/out" '^bulk out: discarded, status -2$' && ! has "$tmp/out" '^bulk in' &&
		has "$tmp/err" 'replay of .*/usbdev\.pcap may be stuck: reaping a discarded BULK URB for ep 0x02, 4 bytes, that the capture never submitted' &&
		ok "$kind node-probe: a bulk OUT the capture does not hold gets no completion (EAGAIN), logged" ||
		bad "$kind node-probe usb, other data: exit $rc, $(cat "$tmp/out" "$tmp/err")"

	# spidev: SPI_IOC_MESSAGE answered from the SPI log, byte by byte
	crun "${spidev[@]}" -- "$p" spi /dev/spidev0.0 9f/3 03000000/5 0500 0500
	has "$tmp/out" '^fstat: char 153:0$' &&
		has "$tmp/out" '^spi 9f/3: 4 errno 0 read ef 40 18$' &&
		has "$tmp/out" '^spi 03000000/5: 9 errno 0 read 68 65 6c 6c 6f$' &&
		has "$tmp/out" '^spi 0500: 2 errno 0 read 00 02$' &&
		has "$tmp/out" '^spi 0500: -1 errno 2 ' &&
		has "$tmp/err" 'classfs: /dev/spidev0.0: an SPI transfer past the end of the recording .*/spidev\.ioctl' &&
		ok "$kind node-probe: an SPI log answers SPI_IOC_MESSAGE(1) and (2); past its end ENOENT" ||
		bad "$kind node-probe spi: $(cat "$tmp/out" "$tmp/err")"
	# a byte written that the log does not have: ENOMSG, named by file:line
	crun "${spidev[@]}" -- "$p" spi /dev/spidev0.0 9f/3 03000001/5
	has "$tmp/out" '^spi 9f/3: 4 errno 0 read ef 40 18$' &&
		has "$tmp/out" '^spi 03000001/5: -1 errno 42 ' &&
		has "$tmp/err" 'classfs: /dev/spidev0.0: an SPI transfer is not the one at .*/spidev\.ioctl:7 \(other bytes written\)' &&
		ok "$kind node-probe: an SPI transfer the log does not hold is ENOMSG, logged by file:line" ||
		bad "$kind node-probe spi mismatch: $(cat "$tmp/out" "$tmp/err")"
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
	# below /dev, its missing directories are made (root's tmpfs /dev); the
	# devtmpfs-style view another uid's /dev is cannot hold a socket: said so
	crun -u "/dev/socket/modem=$data/modem.script" -- python3 -c '
import socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect("/dev/socket/modem")
s.sendall(b"AT\r")
print(repr(s.recv(100)))'
	rc=$?
	if [[ -z $as_uid ]]; then
		((rc == 0)) && has "$tmp/out" "OK" &&
			ok "a socket's script at /dev/socket/modem: /dev/socket made, a client answered" ||
			bad "socket below /dev: exit $rc, $(cat "$tmp/out" "$tmp/err")"
	else
		((rc == 125)) && has "$tmp/err" "/dev/socket/modem: cannot make its directory" &&
			ok "a socket's script below another uid's /dev: exit 125, said why" ||
			bad "socket below /dev as uid $as_uid: exit $rc, $(cat "$tmp/out" "$tmp/err")"
	fi
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
