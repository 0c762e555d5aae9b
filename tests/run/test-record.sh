#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-record.sh CLASSFS-RECORD CLASSFS-RUN CLASSFSD NODE-PROBE RECORD-PTY [STATIC-NODE-PROBE]
#
# classfs-record on a real device: a pty (record-pty opens it and plays
# the modem on its master) whose slave node-probe opens, writes "AT\r" to
# and reads the answer from; --script records that dialogue, with its
# escapes, as umockdev-record --script does; classfs-run -s plays the
# recording back to the same program; --evemu-events records the input
# events a program reads from a pty that plays them, and classfs-run -e
# plays them back; a FILE holding a recording of DEV is added to, one of
# another node's refused; COMMAND's exit status and signal
# are classfs-record's; refusals (no character device, a missing one, a
# file that cannot be written, no COMMAND, nothing to record) exit 1
# with a message naming what, COMMAND not run, no file left behind.
#
# There is no USB, evdev or hidraw device here: --ioctl end to end is
# tests/devio/test-record's round trip (a replay as the device); here it
# is run on the pty, whose terminal requests it lets through unrecorded.
#
# With CLASSFS_RUN_TEST_UID=U everything runs as uid U (tests/stage.sh),
# with the same assertions.  STATIC-NODE-PROBE (node-probe linked
# statically, which no LD_PRELOAD reaches) is recorded too when given.
# Needs root (77 otherwise).
set -uo pipefail

if (($# < 5)); then
	echo "usage: $0 CLASSFS-RECORD CLASSFS-RUN CLASSFSD NODE-PROBE RECORD-PTY" >&2
	exit 2
fi
if ((EUID != 0)); then
	echo "SKIP: test-record.sh needs root (it runs as root and as another uid)"
	exit 77
fi
record=$(realpath "$1") run=$(realpath "$2") classfsd=$(realpath "$3")
probe=$(realpath "$4") pty=$(realpath "$5") static=${6:+$(realpath "$6")}
src=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=../lib.sh
. "$src/tests/lib.sh"
# shellcheck source=../stage.sh
. "$src/tests/stage.sh"
tmp=$(mktemp -d /tmp/test-record.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp"
data=$tmp/data
mkdir -m 0777 "$data"
install -m 0644 "$src/tests/run/data/modem.umockdev" "$src/tests/run/data/keyboard.umockdev" "$data/"
as_uid=${CLASSFS_RUN_TEST_UID:-}
export CLASSFSD=$classfsd
if [[ -n $as_uid ]]; then
	cfs_stage "$tmp/stage" record run classfsd probe pty ${static:+static} >/dev/null ||
		{ echo "FAIL: cannot stage the programs for uid $as_uid"; exit 1; }
	# what cfs_as_uid runs from there is staged already (with its libraries)
	cfs_stage_dir=$tmp/stage
	export CLASSFSD=$classfsd
	mkdir -m 0777 "$tmp/tmp" && export TMPDIR=$tmp/tmp
fi

# as ARG... - a program as the test's uid; stdout and stderr to $tmp/out, $tmp/err
as() {
	if [[ -n $as_uid ]]; then
		cfs_as_uid "$as_uid" "$@" >"$tmp/out" 2>"$tmp/err"
	else
		"$@" >"$tmp/out" 2>"$tmp/err"
	fi
}

has() { grep -qE -- "$2" "$1"; }
show() { echo "exit $rc; out: $(cat "$tmp/out"); err: $(cat "$tmp/err"); script: $(cat "$1" 2>/dev/null)"; }

# ---- a modem's dialogue on a pty, recorded
as "$pty" $'OK\r\n' -- "$record" --script "@PTY@=$data/modem.script" -- \
	"$probe" echo @PTY@ $'AT\r'
rc=$?
s=$data/modem.script
node=$(sed -n 's/^pty: //p' "$tmp/out")
if ((rc == 0)) && has "$tmp/out" '^got: AT\^M$' && grep -q $'^read: OK\r' "$tmp/out"; then
	ok "the program's dialogue goes through classfs-record unchanged"
else
	bad "dialogue: $(show "$s")"
fi
if [[ -n $node ]] && [[ $(head -n 1 "$s") == "d 0 $node" ]] &&
	grep -qE '^w [0-9]+ AT\^M$' "$s" && grep -qE '^r [0-9]+ OK\^M\^J$' "$s" &&
	(($(wc -l <"$s") == 3)); then
	ok "--script records the write and the read with their escapes, the node first"
else
	bad "the script: $(show "$s")"
fi

# the recording is the recording uid's
if [[ -e $s && $(stat -c %u "$s") == "${as_uid:-0}" ]]; then
	ok "the recording belongs to uid ${as_uid:-0}, who ran classfs-record"
else
	bad "the recording's owner: $(stat -c %u "$s" 2>&1)"
fi

# ---- the recording plays back: classfs-run -s, the same program
if [[ -s $s ]]; then
	as "$run" -d "$data/modem.umockdev" -s "/dev/ttyCFS0=$s" -- "$probe" echo /dev/ttyCFS0 $'AT\r'
	rc=$?
	((rc == 0)) && grep -q $'^read: OK\r' "$tmp/out" &&
		ok "classfs-run -s plays the recorded script back to the program" ||
		bad "playback: $(show "$s")"
fi

# ---- a statically linked program is recorded alike
if [[ -n $static ]]; then
	as "$pty" $'OK\r\n' -- "$record" -s "@PTY@=$data/static.script" -- \
		"$static" echo @PTY@ $'AT\r'
	rc=$?
	((rc == 0)) && grep -qE '^w [0-9]+ AT\^M$' "$data/static.script" &&
		grep -qE '^r [0-9]+ OK\^M\^J$' "$data/static.script" &&
		ok "a statically linked program's dialogue is recorded" ||
		bad "static: $(show "$data/static.script")"
fi

# ---- --evemu-events: the input events a program reads (a pty playing an
# input device's: a key pressed and released, each with its SYN_REPORT)
ev_le() { # SEC USEC TYPE CODE VALUE -> input_event's bytes, little-endian, as hex
	local s
	s=$(printf '%016x' "$1" | fold -w2 | tac | tr -d '\n')
	s+=$(printf '%016x' "$2" | fold -w2 | tac | tr -d '\n')
	s+=$(printf '%04x' "$3" | fold -w2 | tac | tr -d '\n')
	s+=$(printf '%04x' "$4" | fold -w2 | tac | tr -d '\n')
	s+=$(printf '%08x' "$(($5 & 0xffffffff))" | fold -w2 | tac | tr -d '\n')
	printf '%s' "$s"
}
events=$(ev_le 1 500000 1 30 1)$(ev_le 1 500000 0 0 0)$(ev_le 1 750000 1 30 0)$(ev_le 1 750000 0 0 0)
as "$pty" "hex:$events" -- "$record" -e "@PTY@=$data/keys.evemu" -- "$probe" evdev @PTY@ 4
rc=$?
node=$(sed -n 's/^pty: //p' "$tmp/out")
expect=$(printf '# EVEMU 1.2\n# device %s\nE: 1.500000 0001 001E 1\nE: 1.500000 0000 0000 0\nE: 1.750000 0001 001E 0\nE: 1.750000 0000 0000 0' "$node")
((rc == 0)) && [[ $(cat "$data/keys.evemu") == "$expect" ]] &&
	(($(grep -c '^event: ' "$tmp/out") == 4)) &&
	ok "--evemu-events records the events read, as umockdev-record writes them" ||
	bad "evemu: $(show "$data/keys.evemu")"
if [[ -s $data/keys.evemu ]]; then
	as "$run" -d "$data/keyboard.umockdev" -e "/dev/input/event3=$data/keys.evemu" -- \
		"$probe" evdev /dev/input/event3 4
	rc=$?
	((rc == 0)) && [[ $(grep '^event: ' "$tmp/out" | tr '\n' ' ') == \
		"event: type 1 code 30 value 1 event: type 0 code 0 value 0 event: type 1 code 30 value 0 event: type 0 code 0 value 0 " ]] &&
		ok "classfs-run -e plays the recorded events back to the program" ||
		bad "evemu playback: $(show "$data/keys.evemu")"
fi
# a write to the node runs unrecorded, and bytes that are no whole event are left out: said once each
as "$pty" $'OK\r\n' -- "$record" -e "@PTY@=$data/tty.evemu" -- "$probe" echo @PTY@ $'AT\r'
rc=$?
((rc == 0)) && (($(wc -l <"$data/tty.evemu") == 2)) &&
	has "$tmp/err" 'a write to an input device is not recorded in an evemu file' &&
	has "$tmp/err" 'a read of 4 bytes, not whole input events' &&
	ok "--evemu-events of a tty: its write runs, unrecorded; a partial event is left out (both said)" ||
	bad "evemu of a tty: $(show "$data/tty.evemu")"

# ---- --ioctl and --script of the same pty: a terminal's requests run, none recorded
as "$pty" $'OK\r\n' -- "$record" -i "@PTY@=$data/pty.ioctl" -s "@PTY@=$data/both.script" -- \
	"$probe" echo @PTY@ $'AT\r'
rc=$?
((rc == 0)) && [[ $(cat "$data/pty.ioctl") == "@DEV /dev/pts/"* ]] &&
	(($(wc -l <"$data/pty.ioctl") == 1)) && grep -q '^r [0-9]* OK' "$data/both.script" &&
	ok "-i and -s of one node: the tree holds its @DEV line only, the script the dialogue" ||
	bad "-i and -s: $(show "$data/pty.ioctl")"

# ---- COMMAND's status is classfs-record's; the recording is written anyway
as "$pty" $'OK\r\n' -- "$record" -s "@PTY@=$data/fail.script" -- \
	sh -c '"$1" echo "$2" "$3" >/dev/null; exit 7' sh "$probe" @PTY@ $'AT\r'
rc=$?
((rc == 7)) && grep -q '^w ' "$data/fail.script" &&
	ok "COMMAND's exit status (7) is classfs-record's, the recording written" ||
	bad "exit status: $(show "$data/fail.script")"
as "$record" -s "/dev/null=$data/null.script" -- sh -c 'kill -TERM $$'
rc=$?
((rc == 143)) && [[ $(cat "$data/null.script") == "d 0 /dev/null" ]] &&
	ok "COMMAND killed by SIGTERM: 143" || bad "signal: $(show "$data/null.script")"

# ---- a FILE that holds a recording of DEV is added to, as umockdev-record does
rm -f "$data/more.script" "$data/more.ioctl"
as "$record" -s "/dev/null=$data/more.script" -- sh -c 'printf one >/dev/null'
rc1=$?
as "$record" -s "/dev/null=$data/more.script" -- sh -c 'printf two >/dev/null'
rc=$?
((rc1 == 0 && rc == 0)) && (($(grep -c '^d 0 /dev/null$' "$data/more.script") == 1)) &&
	grep -qE '^w [0-9]+ one$' "$data/more.script" && grep -qE '^w [0-9]+ two$' "$data/more.script" &&
	[[ $(head -n 1 "$data/more.script") == "d 0 /dev/null" ]] &&
	[[ $(grep -n 'one$' "$data/more.script" | cut -d: -f1) -lt $(grep -n 'two$' "$data/more.script" | cut -d: -f1) ]] &&
	ok "--script into a recording of the same node: the dialogue goes on after it" ||
	bad "appended script: $(show "$data/more.script")"
# a tree recorded before keeps its answers (nothing of /dev/null's is recordable)
printf '@DEV /dev/null\nEVIOCGVERSION 0 01000100\n' >"$data/more.ioctl"
[[ -n $as_uid ]] && chown "$as_uid" "$data/more.ioctl"
as "$record" -i "/dev/null=$data/more.ioctl" -- true
rc=$?
((rc == 0)) && [[ $(cat "$data/more.ioctl") == $'@DEV /dev/null\nEVIOCGVERSION 0 01000100' ]] &&
	ok "--ioctl into a recording of the same node: its answers kept" ||
	bad "appended tree: $(show "$data/more.ioctl")"
# another node's recording is refused, unchanged, COMMAND not run
for f in other.script other.ioctl other.evemu; do
	case $f in
	*.script) printf '# a comment\nd 0 /dev/zero\nw 0 x\n' >"$data/$f"; opt=-s ;;
	*.evemu) printf '# EVEMU 1.2\n# device /dev/zero\nE: 0.000000 0000 0000 0\n' >"$data/$f"; opt=-e ;;
	*) printf '@DEV /dev/zero\nEVIOCGVERSION 0 01000100\n' >"$data/$f"; opt=-i ;;
	esac
	[[ -n $as_uid ]] && chown "$as_uid" "$data/$f"
	before=$(cat "$data/$f")
	rm -f "$data/ran"
	as "$record" "$opt" "/dev/null=$data/$f" -- touch "$data/ran"
	rc=$?
	((rc == 1)) && has "$tmp/err" "$f:[0-9]+: a recording of /dev/zero, not of /dev/null" &&
		[[ ! -e $data/ran && $(cat "$data/$f") == "$before" ]] &&
		ok "refused: $opt into $f, a recording of another node (file unchanged)" ||
		bad "$opt into another node's recording: $(show "$data/$f")"
done

# ---- refusals: exit 1, a message naming what, COMMAND not run, no file made
refused() {
	local what=$1 pattern=$2
	shift 2
	rm -f "$data/ran" "$data/refused.rec"
	as "$record" "$@" touch "$data/ran"
	rc=$?
	if ((rc == 1)) && has "$tmp/err" "$pattern" && [[ ! -e $data/ran ]] &&
		[[ ! -e $data/refused.rec ]]; then
		ok "refused: $what"
	else
		bad "$what: $(show /dev/null)"
	fi
}
refused "a DEV that is no character device" "/tmp is no character device" \
	-i "/tmp=$data/refused.rec" --
refused "a missing DEV" "cannot access device /dev/classfs-nonexistent" \
	-s "/dev/classfs-nonexistent=$data/refused.rec" --
refused "a FILE that cannot be written" "cannot write /nonexistent/x.ioctl" \
	-i "/dev/null=$data/refused.rec" -i /dev/null=/nonexistent/x.ioctl --
refused "no DEV=FILE" "expected DEV=FILE" -s /dev/null --
refused "nothing to record" "nothing to record" --
rm -f "$data/refused.rec"
as "$record" -s "/dev/null=$data/refused.rec"
rc=$?
((rc == 1)) && has "$tmp/err" "no COMMAND" && [[ ! -e $data/refused.rec ]] &&
	ok "refused: no COMMAND" || bad "no COMMAND: $(show /dev/null)"
as "$record" --help
rc=$?
((rc == 0)) && has "$tmp/out" '--ioctl DEV=FILE' && has "$tmp/out" '--script DEV=FILE' &&
	ok "--help names the options" || bad "--help: $(show /dev/null)"

cfs_summary
