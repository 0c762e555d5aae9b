#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-faults.sh CLASSFSD CLASSCTL FAULT_DRIVER ALLOC_TEST - what survives
# each fault, against live classfsd daemons in a private mount namespace:
#   - a publishing client killed (-9) in the middle of its batches;
#   - a driver whose show() hangs, and one whose show() crashes it;
#   - a subscriber that never reads while events pour in (it catches up
#     from the replay ring), one that lags past the ring (told, and stops
#     unless --lossy);
#   - the daemon killed (-9) and restarted under a reconnecting client;
#   - allocation failures injected in the core (every N of a scenario);
#   - the disk filling up while a record is saved;
#   - a publisher (uid 65534) answering with errors the kernel refuses or a
#     reader would misread (its reader gets EIO at once, or an errno a
#     read may end with as it is);
#   - a dozen readers waiting on a publisher that never answers (the rest
#     of the mount is served meanwhile; a killed reader is freed at once),
#     and 40 daemon reads of it by one uid (another uid is served);
#   - four monitors while a 30,000-device record loads (every event each).
# Each case asserts what must hold and adds a row to
# $CLASSFS_RELIABILITY_DIR/faults.tsv (case, expected, got, ok|FAIL).
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../stage.sh
source "$(dirname "$0")/../stage.sh"
cfs_enter "$@"
shift
classfsd=$1 classctl=$2 driver=$3 alloc_test=$4

results=${CLASSFS_RELIABILITY_DIR:-$tmp}/faults.tsv
mkdir -p "$(dirname "$results")"
: >"$results"
# row CASE EXPECTED GOT - record a case; it holds when GOT is EXPECTED
row() {
	local verdict=ok
	[[ $3 == "$2" ]] || verdict=FAIL
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$verdict" >>"$results"
	if [[ $verdict == ok ]]; then
		ok "$1: expected \"$2\", got \"$3\""
	else
		bad "$1: expected \"$2\", got \"$3\""
	fi
}

entries() { find "$1" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
# seq_order FILE - "N events, in order" when the SEQNUMs of a monitor's
# output follow each other one by one, else where they do not
seq_order() {
	awk -F= '$1 == "SEQNUM" { n++; if (p && $2 != p + 1 && !bad) bad = p " then " $2; p = $2 }
		END { print n + 0 " events, " (bad ? "out of order at " bad : "in order") }' "$1"
}
# ms COMMAND... - run it; print how long it took in milliseconds
ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}
# ms_ok COMMAND... - as ms, and COMMAND's exit status
ms_ok() {
	local t0 t1 rc=0
	t0=$(date +%s%N)
	"$@" >/dev/null 2>&1 || rc=$?
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
	return "$rc"
}

# ---- 1. a publisher killed in the middle of its batches ----
start_daemon kill
sock=$tmp/kill/sock mnt=$tmp/kill/mnt
"$classctl" --socket "$sock" monitor >"$tmp/kill/events" 2>"$tmp/kill/monitor.err" &
cfs_track $!
mon=$!
sleep 0.3
"$driver" "$sock" bulk 40000 >"$tmp/kill/driver.out" 2>&1 &
cfs_track $!
drv=$!
wait_for 20 grep -q '^batch 3$' "$tmp/kill/driver.out"
kill -9 "$drv"
wait "$drv" 2>/dev/null
wait_for 20 test "$(entries "$mnt/class/fault")" -eq 0
row "publisher killed -9 mid-batch: its bound devices" "none left" \
	"$([[ $(entries "$mnt/class/fault") == 0 ]] && echo "none left" || echo "$(entries "$mnt/class/fault") left")"
# the monitor has every event once the daemon's SEQNUM is reached
sleep 1
adds=$(grep -c '^KERNEL\[.*\] add .*(fault)$' "$tmp/kill/events")
removes=$(grep -c '^KERNEL\[.*\] remove .*(fault)$' "$tmp/kill/events")
row "publisher killed -9 mid-batch: REMOVE per ADD" "$adds" "$removes"
# deepest first: every partition's REMOVE comes before its disk's
order=$(awk '$2 == "remove" && $4 == "(fault)" { n = split($3, p, "/"); seen[p[n]] = 1;
		if (n == 5 && !seen[p[4]]) ; else if (n == 5) bad++ }
	END { print bad + 0 }' "$tmp/kill/events")
row "publisher killed -9 mid-batch: children removed before parents" "0 out of order" \
	"$order out of order"
row "publisher killed -9 mid-batch: events seen" "more than 0" \
	"$( ((adds > 0)) && echo "more than 0" || echo 0)"
kill "$mon"

# ---- 2. a driver whose show() hangs ----
start_daemon hang --call-timeout 1000
sock=$tmp/hang/sock mnt=$tmp/hang/mnt
"$driver" "$sock" hang >"$tmp/hang/driver.out" 2>&1 &
cfs_track $!
drv=$!
wait_for 10 grep -q ready "$tmp/hang/driver.out"
cat "$mnt/class/fault/hang0/state" >/dev/null 2>"$tmp/hang/cat.err" &
blocked=$!
sleep 0.2
t=$(ms cat "$mnt/class/fault/hang0/size")
row "show() that hangs: other reads meanwhile" "served" \
	"$( ((t < 1000)) && echo served || echo "took $t ms")"
wait "$blocked"
rc=$?
row "show() that hangs: its reader" "EIO within the timeout" \
	"$(grep -q 'Input/output error' "$tmp/hang/cat.err" && ((rc != 0)) &&
		echo "EIO within the timeout" || echo "exit $rc: $(cat "$tmp/hang/cat.err")")"
kill -9 "$drv"
wait "$drv" 2>/dev/null
wait_for 10 test ! -e "$mnt/class/fault/hang0"
row "show() that hangs: driver killed, its device" "removed" \
	"$([[ -e $mnt/class/fault/hang0 ]] && echo present || echo removed)"

# ---- 3. a driver whose show() crashes it ----
sock=$tmp/hang/sock mnt=$tmp/hang/mnt
"$driver" "$sock" crash >"$tmp/hang/crash.out" 2>&1 &
cfs_track $!
drv=$!
wait_for 10 grep -q ready "$tmp/hang/crash.out"
t0=$(date +%s%N)
cat "$mnt/class/fault/crash0/state" >/dev/null 2>"$tmp/hang/crash.err"
rc=$?
t=$((($(date +%s%N) - t0) / 1000000))
row "show() that crashes its driver: the reader" "EIO" \
	"$(grep -q 'Input/output error' "$tmp/hang/crash.err" && ((rc != 0)) && echo EIO ||
		echo "exit $rc after $t ms: $(cat "$tmp/hang/crash.err")")"
wait_for 10 test ! -e "$mnt/class/fault/crash0"
row "show() that crashes its driver: its device" "removed" \
	"$([[ -e $mnt/class/fault/crash0 ]] && echo present || echo removed)"
row "show() that crashes its driver: the daemon" "serving" \
	"$("$classctl" --socket "$sock" mount >/dev/null 2>&1 && echo serving || echo down)"

# ---- 4. a subscriber that never reads ----
start_daemon slow --subscriber-queue 4000
sock=$tmp/slow/sock mnt=$tmp/slow/mnt
"$classctl" --socket "$sock" monitor >"$tmp/slow/stalled" 2>"$tmp/slow/stalled.err" &
cfs_track $!
stalled=$!
"$classctl" --socket "$sock" monitor >"$tmp/slow/fast" 2>"$tmp/slow/fast.err" &
cfs_track $!
fast=$!
sleep 0.3
kill -STOP "$stalled"
"$driver" "$sock" bulk 6000 >"$tmp/slow/driver.out" 2>&1 &
cfs_track $!
drv=$!
wait_for 30 grep -q ready "$tmp/slow/driver.out"
t=$(ms "$classctl" --socket "$sock" mount)
row "subscriber that never reads: the daemon meanwhile" "answers" \
	"$( ((t < 2000)) && echo answers || echo "took $t ms")"
kill -9 "$drv"
wait "$drv" 2>/dev/null
wait_for 20 test "$(entries "$mnt/class/fault")" -eq 0
wait_for 10 test "$(grep -c '^KERNEL' "$tmp/slow/fast")" -ge 12000
row "subscriber that never reads: another subscriber" "12000 events, no gap" \
	"$(grep -c '^KERNEL' "$tmp/slow/fast") events, $(grep -q "missed event" "$tmp/slow/fast.err" && echo gap || echo "no gap")"
kill -CONT "$stalled"
# it lagged past its queue: it catches up from the replay ring, losing nothing
wait_for 20 test "$(grep -c '^KERNEL' "$tmp/slow/stalled")" -ge 12000
row "subscriber that never reads, once it reads: from the replay ring" \
	"12000 events, in order, no gap" \
	"$(seq_order "$tmp/slow/stalled"), $(grep -q "missed event" "$tmp/slow/stalled.err" && echo gap || echo "no gap")"
kill "$stalled" "$fast" 2>/dev/null

# ---- 4b. a subscriber that lags past the replay ring ----
start_daemon ring --subscriber-queue 100 --ring-size 1024
sock=$tmp/ring/sock mnt=$tmp/ring/mnt
"$classctl" --socket "$sock" monitor >"$tmp/ring/strict" 2>"$tmp/ring/strict.err" &
cfs_track $!
strict=$!
"$classctl" --socket "$sock" monitor --lossy >"$tmp/ring/lossy" 2>"$tmp/ring/lossy.err" &
cfs_track $!
lossy=$!
sleep 0.3
kill -STOP "$strict" "$lossy"
# 20,000 events: more than the ring and the stopped monitors' sockets hold
"$driver" "$sock" bulk 10000 >"$tmp/ring/driver.out" 2>&1 &
cfs_track $!
drv=$!
wait_for 30 grep -q ready "$tmp/ring/driver.out"
kill -CONT "$strict" "$lossy"
if wait_for 10 bash -c '! kill -0 "$1" 2>/dev/null' _ "$strict"; then
	wait "$strict" 2>/dev/null
	rc=$?
else
	rc="none, still running"
fi
row "subscriber past the replay ring: monitor" "told, exit 1" \
	"$(grep -q "missed event" "$tmp/ring/strict.err" && grep -q "stopping" "$tmp/ring/strict.err" &&
		echo told || echo "not told"), exit $rc"
"$classctl" --socket "$sock" trigger fault bulk0 change >/dev/null
wait_for 10 grep -q ' change ' "$tmp/ring/lossy"
row "subscriber past the replay ring: monitor --lossy" "told, goes on" \
	"$(grep -q "missed events" "$tmp/ring/lossy.err" && echo told || echo "not told"), $(kill -0 "$lossy" 2>/dev/null && echo "goes on" || echo ended)"
kill -9 "$drv"
wait "$drv" 2>/dev/null
kill "$lossy" 2>/dev/null

# ---- 5. the daemon killed and restarted ----
start_daemon restart
sock=$tmp/restart/sock mnt=$tmp/restart/mnt
"$driver" "$sock" reconnect 50 >"$tmp/restart/driver.out" 2>&1 &
cfs_track $!
drv=$!
wait_for 10 grep -q ready "$tmp/restart/driver.out"
kill -9 "$daemon"
wait "$daemon" 2>/dev/null
umount -l "$mnt" 2>/dev/null
rm -f "$sock"
start_daemon restart
wait_for 20 test "$(entries "$mnt/class/fault")" -eq 50
row "daemon killed -9 and restarted: the client's devices" "50 published again" \
	"$(entries "$mnt/class/fault") published again"
half=0
for d in "$mnt"/class/fault/*; do
	[[ -f $d/size && -f $d/state && $(cat "$d/state" 2>/dev/null) == ok ]] || half=$((half + 1))
done
row "daemon killed -9 and restarted: devices without all their attributes" "0" "$half"
kill -9 "$drv"

# ---- 6. allocation failures in the core ----
if "$alloc_test" >"$tmp/alloc.out" 2>&1; then got="tree unchanged, nothing leaked"
else got="$(tail -3 "$tmp/alloc.out" | tr '\n' ' ')"; fi
row "allocation failures (every N of each scenario)" "tree unchanged, nothing leaked" "$got"

# ---- 7. the disk fills up while a record is saved ----
start_daemon save
sock=$tmp/save/sock mnt=$tmp/save/mnt
mkdir -p "$tmp/small"
mount -t tmpfs -o size=16k tmpfs "$tmp/small"	# unmounted with $tmp
"$classctl" --socket "$sock" add block sdz --dev 8:240 --attr size=8 >/dev/null
"$classctl" --socket "$sock" save "$tmp/small/machine.umockdev"
cp "$tmp/small/machine.umockdev" "$tmp/before"
for i in $(seq 300); do
	echo "add block d$i --dev 9:$i --attr size=$i --attr model=a-rather-long-model-name-$i"
done | while read -r _ c n rest; do
	# shellcheck disable=SC2086
	"$classctl" --socket "$sock" add "$c" "$n" $rest >/dev/null
done
"$classctl" --socket "$sock" save "$tmp/small/machine.umockdev" 2>"$tmp/save/err"
rc=$?
row "disk full while saving: classctl" "fails" "$( ((rc != 0)) && echo fails || echo "exit 0")"
row "disk full while saving: the old file" "intact" \
	"$(cmp -s "$tmp/before" "$tmp/small/machine.umockdev" && echo intact || echo changed)"
row "disk full while saving: temporary files" "0" "$(($(entries "$tmp/small") - 1))"

# ---- 8. a publisher answering with errors a reader cannot be given ----
# The kernel refuses an error reply of -512 and below: the request stays
# unanswered and its reader in state D, deaf to SIGKILL, until the daemon
# goes.  The publisher is uid 65534, the reader root; the call timeout is
# long, so "at once" cannot be the timeout's EIO.
start_daemon errno --group nogroup --mount-options allow_other --call-timeout 30000
sock=$tmp/errno/sock mnt=$tmp/errno/mnt
# outcome CMD... - what CMD ends with within 3 s: "ok", its error text, or
# whether it can still be killed
outcome() {
	local p err=$tmp/errno/err
	"$@" >/dev/null 2>"$err" &
	p=$!
	cfs_track "$p"
	if wait_for 3 bash -c "! kill -0 $p 2>/dev/null || grep -q '^State:.*Z' /proc/$p/status"; then
		wait "$p" 2>/dev/null && echo ok || sed -n '$s/.*: //p' "$err"
		return
	fi
	kill -9 "$p"
	sleep 1
	grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null || ! kill -0 "$p" 2>/dev/null &&
		echo "waited 3 s, then killed" || echo "waits after 3 s, and after SIGKILL"
}
for n in 600 512 2147483648 11 38 22 19; do
	cfs_as_uid --exec 65534 "$driver" "$sock" errno "$n" >"$tmp/errno/driver.out" 2>&1 &
	cfs_track $!
	drv=$!
	wait_for 10 grep -q ready "$tmp/errno/driver.out"
	case $n in
	22) want="Invalid argument" ;;
	19) want="No such device" ;;
	*) want="Input/output error" ;;
	esac
	row "publisher (uid 65534) answering -$n: root's read" "$want" \
		"$(outcome cat "$mnt/class/fault/errno0/state")"
	row "publisher (uid 65534) answering -$n: root's write" "$want" \
		"$(outcome bash -c 'printf 1 >"$1"' bash "$mnt/class/fault/errno0/ctl")"
	kill -9 "$drv"
	wait "$drv" 2>/dev/null
	wait_for 10 test ! -e "$mnt/class/fault/errno0"
done
row "publishers answering bad errors: the daemon" "serving" \
	"$("$classctl" --socket "$sock" mount >/dev/null 2>&1 && echo serving || echo down)"

# ---- 9. readers waiting on a publisher that never answers ----
# They wait for the call timeout (5 s), holding no thread of the mount:
# the rest of it is served meanwhile (the bound is generous: bench/remote/
# stall.sh measures it), and a reader killed while it waits goes at once.
start_daemon stall --group nogroup	# uids 65534 and 65533 (group nogroup) connect too
sock=$tmp/stall/sock mnt=$tmp/stall/mnt
"$driver" "$sock" hang >"$tmp/stall/driver.out" 2>&1 &
cfs_track $!
drv=$!
wait_for 10 grep -q ready "$tmp/stall/driver.out"
ls "$mnt" >/dev/null
cat "$mnt/class/fault/hang0/size" >/dev/null
readers=()
for i in $(seq 12); do
	cat "$mnt/class/fault/hang0/state" >/dev/null 2>"$tmp/stall/reader.$i" &
	readers+=($!)
	cfs_track $!
done
sleep 0.3
ms ls "$mnt" >"$tmp/stall/t.ls" &
p=$!
ms cat "$mnt/class/fault/hang0/size" >"$tmp/stall/t.cat" &
wait "$p" $!
t=$(cat "$tmp/stall/t.ls")
row "12 readers waiting on a publisher that never answers: ls of the mount" "served" \
	"$( ((t < 1000)) && echo served || echo "took $t ms")"
t=$(cat "$tmp/stall/t.cat")
row "12 readers waiting on a publisher that never answers: a value the daemon holds" "read" \
	"$( ((t < 1000)) && echo read || echo "took $t ms")"
cat "$mnt/class/fault/hang0/state" >/dev/null 2>&1 &
k=$!
cfs_track $k
sleep 0.2
t0=$(date +%s%N)
kill -9 "$k"
wait "$k" 2>/dev/null
t=$((($(date +%s%N) - t0) / 1000000))
row "a reader killed while it waits on that publisher" "gone at once" \
	"$( ((t < 1000)) && echo "gone at once" || echo "gone after $t ms")"
eio=0
for i in "${!readers[@]}"; do
	wait "${readers[$i]}" 2>/dev/null
	grep -q 'Input/output error' "$tmp/stall/reader.$((i + 1))" && eio=$((eio + 1))
done
row "12 readers waiting on a publisher that never answers: their reads" "12 EIO" "$eio EIO"
# The same reads through the daemon (ATTR_GET): each holds a worker for the
# call timeout.  40 of them by one uid take at most its share of the
# workers; another uid's request is answered meanwhile.
getters=()
cfs_as_uid_prog "$classctl" >/dev/null	# staged once, before the 40 at once
for i in $(seq 40); do
	cfs_as_uid --exec 65534 "$classctl" --socket "$sock" get fault hang0 state >/dev/null \
		2>"$tmp/stall/get.$i" &
	getters+=($!)
	cfs_track $!
done
sleep 0.5
# served_while_they_wait WHO COMMAND... - COMMAND answered while all 40
# still wait (they end only at the call timeout): served beside them, not
# after them, however slow the machine or the build (TSan: 2.4 s)
served_while_they_wait() {
	local who=$1 t waiting=0 p
	shift
	if ! t=$(ms_ok "$@"); then
		row "40 daemon reads by uid 65534 waiting on that publisher: $who's read" "served" "failed"
		return
	fi
	for p in "${getters[@]}"; do
		kill -0 "$p" 2>/dev/null && waiting=$((waiting + 1))
	done
	echo "  ($who's read: $t ms)"
	row "40 daemon reads by uid 65534 waiting on that publisher: $who's read" \
		"served while 40 wait" "served while $waiting wait"
}
served_while_they_wait "uid 65533" cfs_as_uid 65533:65534 "$classctl" --socket "$sock" get fault hang0 size
served_while_they_wait root "$classctl" --socket "$sock" get fault hang0 size
wait "${getters[@]}" 2>/dev/null
row "40 daemon reads by uid 65534 waiting on that publisher: their reads" "40 EIO" \
	"$(cat "$tmp"/stall/get.* | grep -c 'Input/output error') EIO"
kill -9 "$drv"
# ---- 10. four monitors while a 30,000-device record loads ----
# a queue of 1,000 events: each lags past it in the burst, and all catch up
# from the replay ring (262,144 events)
start_daemon burst --subscriber-queue 1000
sock=$tmp/burst/sock mnt=$tmp/burst/mnt
awk 'BEGIN { for (i = 0; i < 30000; i++)
	printf "P: /devices/virtual/burst/b%d\nE: SUBSYSTEM=burst\nA: size=%d\n\n", i, i }' \
	>"$tmp/burst/record"
mons=()
for i in 1 2 3 4; do
	"$classctl" --socket "$sock" monitor >"$tmp/burst/mon$i" 2>"$tmp/burst/mon$i.err" &
	cfs_track $!
	mons+=($!)
done
sleep 0.3
"$classctl" --socket "$sock" load "$tmp/burst/record"
for i in 1 2 3 4; do
	wait_for 60 test "$(grep -c '^KERNEL.* add .*(burst)$' "$tmp/burst/mon$i")" -ge 30000
	row "4 monitors, 30,000-device load: monitor $i" "30000 events, in order, no gap" \
		"$(seq_order "$tmp/burst/mon$i"), $([[ -s $tmp/burst/mon$i.err ]] && head -c 200 "$tmp/burst/mon$i.err" || echo "no gap")"
done
kill "${mons[@]}" 2>/dev/null

cfs_summary
