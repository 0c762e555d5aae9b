#!/bin/bash
# test-fresh-daemon.sh CLASSFSD CLASSCTL FRESH_WATCH - a value changed
# through the daemon's ways is never read stale through its mount by a
# reader that saw the change's uevent, with readers hammering the files
# meanwhile.
#
# A classfsd (devices layout) serves fresh/d0, published by classctl add
# with an attribute (computed by the daemon: its show() answers what
# the last store() took) and given a stored value with classctl set
# --create, and frec/r0, loaded from a record (a recorded attribute,
# stored).  fresh-watch follows the daemon's events, hammers every file
# below, and after each change the script made (then names to it) sends
# CHANGE itself, waits for that event and reads the files through the
# mount: by path, stat size, a descriptor kept open.  The ways:
#  - classctl set, on each of the three files;
#  - a write through the mount (echo VALUE > FILE: open O_TRUNC, one
#    write), read back at once by the writer, on each;
#  - a record reload: frec/r1 removed (classctl rm) and its record loaded
#    again with another `rec`, another number (its `dev`) and a MODALIAS
#    naming the load, whose ADD is the change's event (classctl load of a
#    device already there is refused: EEXIST); a descriptor kept open on
#    the removed device's files reads an error.
# Values vary in length (1 to 700 bytes; a third keep the length before).
# Runs in a private mount namespace; the daemon and the reader are
# stopped, the mount removed, whatever happens.
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
cfs_enter "$@"
shift
trap '' PIPE	# a reader that died fails its answers, not the script (its traps clean up)
classfsd=$1 classctl=$2 fresh_watch=$3
changes=${CLASSFS_FRESH_CHANGES:-100}	# per way and file

start_daemon a --layout devices
sock=$tmp/a/sock mnt=$tmp/a/mnt
ctl() { "$classctl" --socket "$sock" "$@"; }

D0=devices/virtual/fresh/d0 R0=devices/virtual/frec/r0 R1=devices/virtual/frec/r1

# record NAME MAJOR:MINOR MODALIAS REC - a device of class frec as a umockdev record
record() {
	printf 'P: /devices/virtual/frec/%s\nE: SUBSYSTEM=frec\nE: MODALIAS=%s\nA: dev=%s\\n\nA: rec=%s\\n\n' \
		"$1" "$3" "$2" "$4"
}

check "add fresh d0 with an attribute" ctl add fresh d0 --attr knob=start
check "set --create a stored value" ctl set --create fresh d0 value start
record r0 246:0 fresh:r0 start >"$tmp/r0.rec"
check "load frec r0" ctl load "$tmp/r0.rec"
record r1 245:0 fresh:0 start >"$tmp/r1.rec"
check "load frec r1" ctl load "$tmp/r1.rec"
# a device already there is not loaded again: a reload is a removal and a load
if ctl load "$tmp/r1.rec" 2>"$tmp/err"; then
	bad "loading r1 again is refused"
else
	check "loading r1 again is refused ($(head -1 "$tmp/err"))" grep -q "already" "$tmp/err"
fi
for f in $D0/knob $D0/value $R0/rec $R1/rec $R1/dev; do
	check "  $f in the mount" test -f "$mnt/$f"
done

coproc WATCH { exec "$fresh_watch" "$sock" "$mnt" $D0/knob $D0/value $R0/rec $R1/rec $R1/dev \
	2>"$tmp/watch.err"; }
watch_pid=$WATCH_PID	# bash unsets WATCH_PID once the coprocess is reaped
cfs_track "$watch_pid"
# copies of its pipes: bash closes the coprocess's own when it ends
exec {watch_in}>&"${WATCH[1]}" {watch_out}<&"${WATCH[0]}"
eval "exec ${WATCH[1]}>&- ${WATCH[0]}<&-"

# value N - change N's value: "N:" and a letter, 1 to 700 bytes; every
# third change keeps the length of the one before
len=1
value() {
	local n=$1 fill
	(( n % 3 == 0 )) || len=$(( (n * 7919 + 13) % 700 + 1 ))
	printf -v fill '%*s' "$len" ''
	fill=${fill// /${letters:n%26:1}}
	v=$n:$fill
	v=${v:0:len}
}
letters=abcdefghijklmnopqrstuvwxyz

# ask COMMAND... - one command to fresh-watch; its answer in $reply
ask() {
	echo "$*" >&"$watch_in"
	reply=
	read -r -t 60 reply <&"$watch_out" || reply="FAIL no answer from fresh-watch"
}

# way NAME CHANGE-FUNCTION - $changes changes through one way, each checked
way() {
	local name=$1 fn=$2 i good=0 bads=0 t0=$SECONDS
	for ((i = 1; i <= changes; i++)); do
		n=$((n + 1))
		value "$n"
		if ! "$fn"; then
			bad "$name: change $n failed"
			bads=$((bads + 1))
			break
		fi
		if [[ $reply == ok\ * ]]; then
			good=$((good + 1))
		else
			bads=$((bads + 1))
			((bads <= 5)) && echo "  $name: change $n: $reply"
			[[ $reply == "FAIL no answer"* ]] && break
		fi
	done
	if ((good == changes)); then
		ok "$name: $changes changes, none read stale ($((SECONDS - t0)) s)"
	else
		bad "$name: $good of $changes changes read fresh"
	fi
}

n=0
# classctl set: one store() of "VALUE\n" through the daemon
set_knob() { ctl set fresh d0 knob "$v" && ask change fresh d0 $D0/knob "$v"; }
set_value() { ctl set fresh d0 value "$v" && ask change fresh d0 $D0/value "$v"; }
set_rec() { ctl set frec r0 rec "$v" && ask change frec r0 $R0/rec "$v"; }
way "classctl set (the daemon's attribute)" set_knob
way "classctl set (a stored value)" set_value
way "classctl set (a recorded attribute)" set_rec

# echo VALUE > FILE through the mount, read back by the writer at once
wrote_back() {
	printf '%s\n' "$v" >"$mnt/$1" || return 1
	local back
	back=$(cat "$mnt/$1") || return 1
	[[ $back == "$v" ]] || { echo "  the writer read back \"${back:0:24}\", not \"${v:0:24}\""; return 1; }
}
write_knob() { wrote_back $D0/knob && ask change fresh d0 $D0/knob "$v"; }
write_value() { wrote_back $D0/value && ask change fresh d0 $D0/value "$v"; }
write_rec() { wrote_back $R0/rec && ask change frec r0 $R0/rec "$v"; }
way "write through the mount (the daemon's attribute)" write_knob
way "write through the mount (a stored value)" write_value
way "write through the mount (a recorded attribute)" write_rec

# the record of r1 loaded again: another value, number and MODALIAS
reload() {
	record r1 "245:$n" "fresh:$n" "$v" >"$tmp/r1.rec"
	ctl rm frec r1 && ctl load "$tmp/r1.rec" &&
		ask add /devices/virtual/frec/r1 "fresh:$n" $R1/rec "$v" $R1/dev "245:$n"
}
way "record reload (rm, load)" reload

exec {watch_in}>&-
summary=
read -r -t 60 summary <&"$watch_out"
while read -r -t 60 more <&"$watch_out"; do
	bad "fresh-watch: $more"
done
exec {watch_out}<&-
wait "$watch_pid"
rc=$?
check "fresh-watch ends well (exit $rc)" [ "$rc" = 0 ]
check "the files were hammered meanwhile ($summary)" bash -c '[[ $1 =~ ^hammer\ [1-9] ]]' _ "$summary"
if [[ -s $tmp/watch.err ]]; then
	echo "fresh-watch's stderr:"
	cat "$tmp/watch.err"
fi
cfs_summary
