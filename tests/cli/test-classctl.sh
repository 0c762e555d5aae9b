#!/bin/bash
# test-classctl.sh CLASSFSD CLASSCTL JSON_GET - every classctl command
# against a live classfsd started from the build tree on a temporary
# socket and mount point: results checked through the mount and the
# daemon's answers; errors (unknown class, bad names, bad --dev, missing
# attribute...) must print a message, exit non-zero and change nothing;
# the monitor's udevadm format, its gap notice and its clean exit on
# SIGINT; tree --json parses; load/save round trip, and a failed save
# keeps the old file.  Runs in a private mount namespace; the daemons are
# stopped by PID and the temporary files removed whatever happens.
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
cfs_enter "$@"
shift
classfsd=$1 classctl=$2 json_get=$3

# stop_daemons - stop every daemon (and process) started so far
stop_daemons() {
	local p
	for p in "${cfs_pids[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	cfs_pids=()
}

ctl() { "$classctl" --socket "$sock" "$@"; }
# fails NAME PATTERN COMMAND... - the command exits non-zero, prints PATTERN on stderr, nothing on stdout
fails() {
	local name=$1 pat=$2 rc
	shift 2
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if ((rc != 0)) && grep -Eq -e "$pat" "$tmp/err" && [[ ! -s $tmp/out ]]; then
		ok "$name (exit $rc: $(head -1 "$tmp/err"))"
	else
		bad "$name (exit $rc)"; cat "$tmp/out" "$tmp/err"
	fi
}
# unchanged NAME COMMAND... - the command fails and the whole tree (as saved) stays as it was
unchanged() {
	local name=$1 pat=$2
	shift 2
	ctl save >"$tmp/before" 2>&1
	fails "$name" "$pat" "$@"
	ctl save >"$tmp/after" 2>&1
	check "  ... and changed nothing" cmp -s "$tmp/before" "$tmp/after"
}

start_daemon a
sock=$tmp/a/sock mnt=$tmp/a/mnt

echo "# help and the command line"
check "--help" bash -c '"$1" --help | grep -q "^Usage: classctl"' _ "$classctl"
fails "no command" "no command" "$classctl" --socket "$sock"
fails "unknown command" "unknown command 'frobnicate'" "$classctl" --socket "$sock" frobnicate
fails "missing socket" "cannot connect to $tmp/none" "$classctl" --socket "$tmp/none" tree
check "CLASSFS_SOCKET" env CLASSFS_SOCKET="$sock" "$classctl" tree
fails "missing operand" "missing operand" ctl add block
fails "extra operand" "unexpected operand" ctl rm block sda sdb

echo "# classes and devices"
check "mkclass" ctl mkclass block
check "  class directory in the mount" test -d "$mnt/class/block"
unchanged "mkclass twice" "block exists" ctl mkclass block
unchanged "mkclass bad name" "'a/b' is not a valid class name" ctl mkclass a/b
unchanged "mkclass name with control bytes, shown escaped" \
	"'a\\\\nb\\\\x1b' is not a valid class name" ctl mkclass $'a\nb\e'
check "add with --dev --type --attr" ctl add block sda --dev 8:0 --type disk --attr size=1000 --attr ro=0
check "  dev file" [ "$(cat "$mnt/class/block/sda/dev")" = 8:0 ]
check "  attribute as sysfs holds it" cmp -s "$mnt/class/block/sda/size" <(printf '1000\n')
check "  DEVTYPE in uevent" grep -qx DEVTYPE=disk "$mnt/class/block/sda/uevent"
check "add --parent (nested)" ctl add block sda1 --parent sda --dev 8:1 --type partition
check "  nested directory" test -d "$mnt/class/block/sda/sda1"
check "add creates the class" ctl add input input0
check "  class made" test -d "$mnt/class/input/input0"
check "tree (text)" diff <(ctl tree) - <<'T'
class block
  sda [8:0] (disk)
    sda1 [8:1] (partition)
class input
  input0
T
unchanged "add a name taken" "block/sda exists" ctl add block sda
unchanged "add bad name" "'a/b' is not a valid device name" ctl add block a/b
unchanged "add bad name ." "'\\.' is not a valid device name" ctl add block .
unchanged "add unknown parent" "nosuch not found" ctl add block sdz --parent nosuch
unchanged "add into a new class, unknown parent: no class left" "nosuch not found" \
	ctl add newcls x --parent nosuch
check "  no class directory" test ! -e "$mnt/class/newcls"
unchanged "add parent of another class" "input0" ctl add block sdz --parent input0
for bad in 8 a:b 0:1 8:1x 5000:1 8:-1 "" 8:1048576; do
	unchanged "add --dev '$bad'" "--dev '$bad' is not MAJOR:MINOR" ctl add block sdz --dev "$bad"
done
unchanged "add --attr without =" "not KEY=VALUE" ctl add block sdz --attr noequals
unchanged "add unknown option" "unknown option" ctl add block sdz --frob

echo "# attributes"
check "get" [ "$(ctl get block sda size)" = 1000 ]
check "set" ctl set block sda size 2000
check "  get after set" [ "$(ctl get block sda size)" = 2000 ]
check "  mount after set" cmp -s "$mnt/class/block/sda/size" <(printf '2000\n')
check "get a computed file" [ "$(ctl get block sda dev)" = 8:0 ]
unchanged "get missing attribute" "nope" ctl get block sda nope
unchanged "set missing attribute" "nope" ctl set block sda nope 1
unchanged "get unknown class" "nosuch" ctl get nosuch sda size
unchanged "get unknown device" "sdz" ctl get block sdz size
unchanged "set read-only (dev)" "dev" ctl set block sda dev 1:1

echo "# info"
check "info (text)" bash -c '"$@" | grep -qx "devt: 8:0"' _ "$classctl" --socket "$sock" info block sda
ctl info block sda --json >"$tmp/info.json"
check "info --json parses" diff <("$json_get" name class dev devtype attributes.size <"$tmp/info.json") - <<'T'
sda
block
8:0
disk
2000

T
unchanged "info unknown device" "sdz" ctl info block sdz

echo "# tree formats"
ctl tree --json >"$tmp/tree.json"
check "tree --json parses" diff <("$json_get" layout classes.0.name classes.0.devices.0.name \
	classes.0.devices.0.children.0.name classes.1.devices.0.name <"$tmp/tree.json") - <<'T'
class
block
sda
sda1
input0
T
if command -v dot >/dev/null; then
	check "tree --dot renders" bash -c '"$@" tree --dot | dot -Tsvg >/dev/null' _ "$classctl" --socket "$sock"
fi
fails "tree bad option" "unknown option" ctl tree --yaml
# the daemon's own options: a bad number is named, and nothing starts
fails "classfsd --max-requests-per-uid 0" "--max-requests-per-uid: '0' is not a number from 1 to 32" \
	"$classfsd" --socket "$tmp/never.sock" --max-requests-per-uid 0
fails "classfsd --max-requests-per-uid 33" "is not a number from 1 to 32" \
	"$classfsd" --socket "$tmp/never.sock" --max-requests-per-uid 33
check "no socket left by the refused daemons" test ! -e "$tmp/never.sock"

echo "# rename, trigger, monitor"
# from the next SEQNUM on, whenever the monitors get subscribed
next=$(( $(ctl tree --json | "$json_get" seqnum) + 1 ))
"$classctl" --socket "$sock" monitor --since $next >"$tmp/mon" 2>"$tmp/mon.err" &
mon=$!
"$classctl" --socket "$sock" monitor --json --since $next >"$tmp/mon.json" 2>&1 &
monj=$!
check "rename" ctl rename block sda1 sda9
check "  renamed in the mount" test -d "$mnt/class/block/sda/sda9"
unchanged "rename to a bad name" "'x/y' is not a valid device name" ctl rename block sda9 x/y
unchanged "rename unknown" "nosuch" ctl rename block nosuch sdq
check "trigger (default change)" ctl trigger block sda
check "trigger add" ctl trigger block sda add
unchanged "trigger bad action" "unknown action 'jump'" ctl trigger block sda jump
unchanged "trigger unknown device" "sdz" ctl trigger block sdz
for _ in $(seq 100); do	# the three events printed by both
	[[ $(grep -c '^KERNEL\[' "$tmp/mon") -ge 3 && $(wc -l <"$tmp/mon.json") -ge 3 ]] && break
	sleep 0.05
done
kill -INT $mon; wait $mon; rc=$?
check "monitor exits 0 on SIGINT" [ $rc = 0 ]
kill -TERM $monj; wait $monj; rc=$?
check "monitor --json exits 0 on SIGTERM" [ $rc = 0 ]
cat "$tmp/mon"
check "monitor: 3 events" [ "$(grep -c '^KERNEL\[' "$tmp/mon")" = 3 ]
check "monitor: udevadm header line" grep -Eq '^KERNEL\[[0-9]+\.[0-9]{6}\] move     /class/block/sda/sda9 \(block\)$' "$tmp/mon"
check "monitor: change header" grep -Eq '^KERNEL\[[0-9]+\.[0-9]{6}\] change   /class/block/sda \(block\)$' "$tmp/mon"
change=$(awk '/ change +\/class\/block\/sda /{on=1; next} on && /^$/{exit} on' "$tmp/mon" | grep -v '^SEQNUM=')
check "monitor: properties of the change" [ "$change" = "$(printf '%s\n' ACTION=change \
	DEVPATH=/class/block/sda SUBSYSTEM=block DEVNAME=/dev/sda DEVTYPE=disk MAJOR=8 MINOR=0)" ]
check "monitor: blank line after each event" [ "$(grep -c '^$' "$tmp/mon")" = 3 ]
check "monitor --json: one object per line" diff <("$json_get" --lines action devpath <"$tmp/mon.json") - <<'T'
move
/class/block/sda/sda9
change
/class/block/sda
add
/class/block/sda
T
check "monitor --since 1 replays from the start" bash -c \
	'timeout -s INT 1 "$1" --socket "$2" monitor --since 1 | grep -m1 "^KERNEL" | grep -q " add      /class/block/sda (block)$"' \
	_ "$classctl" "$sock"
fails "monitor --since junk" "is not a SEQNUM" ctl monitor --since x1
# variables: each arrives as SYNTH_ARG_KEY=VALUE; one that could forge a line is refused
next=$(( $(ctl tree --json | "$json_get" seqnum) + 1 ))
check "trigger with variables" ctl trigger block sda change FOO=bar LD_PRELOAD=/tmp/x.so
"$classctl" --socket "$sock" monitor --since $next >"$tmp/mon" 2>&1 &
mon=$!
# the whole event: its SEQNUM line and the blank line that ends it
for _ in $(seq 200); do
	awk '/^SEQNUM=/ { s = 1 } s && /^$/ { e = 1 } END { exit !e }' "$tmp/mon" && break
	sleep 0.05
done
kill -INT $mon; wait $mon
check "  they arrive as SYNTH_ARG_" [ "$(grep -E '^[A-Z_]*(FOO|LD_PRELOAD)=' "$tmp/mon" | paste -sd' ')" \
	= "SYNTH_ARG_FOO=bar SYNTH_ARG_LD_PRELOAD=/tmp/x.so" ]
unchanged "trigger with a newline in a value" "'FOO=x\\\\nACTION=remove' is not a valid variable" \
	ctl trigger block sda change $'FOO=x\nACTION=remove'
unchanged "trigger with a bad key" "'A-B=1' is not a valid variable" ctl trigger block sda change A-B=1
check "  no event was sent" [ "$(ctl tree --json | "$json_get" seqnum)" = "$next" ]

echo "# mount, save, load, rm"
check "mount" diff <(ctl mount) <(printf 'mountpoint: %s\nlayout: class\n' "$mnt")
ctl save >"$tmp/rec.stdout"
check "save to stdout" grep -qx 'P: /devices/virtual/block/sda' "$tmp/rec.stdout"
check "save FILE" ctl save "$tmp/rec.umockdev"
check "  same as stdout" cmp -s "$tmp/rec.stdout" "$tmp/rec.umockdev"
check "  no temporary file left" [ "$(ls -A "$tmp" | grep -c '^\.rec')" = 0 ]
# a save that fails (no room) keeps the old file and leaves no temporary one
mkdir "$tmp/small"
mount -t tmpfs -o size=8k tmpfs "$tmp/small"
echo old >"$tmp/small/rec"
big=$(head -c 3000 /dev/zero | tr '\0' x)
for i in $(seq 8); do ctl add big "b$i" --attr "v=$big" || bad "add big b$i"; done
fails "save with no room" "rec" ctl save "$tmp/small/rec"
check "  old file kept" [ "$(cat "$tmp/small/rec")" = old ]
check "  no temporary file left" [ "$(ls -A "$tmp/small")" = rec ]
umount "$tmp/small"
check "rmclass" ctl rmclass big
unchanged "rmclass unknown" "nosuch" ctl rmclass nosuch
check "rm (takes children along)" ctl rm block sda
check "  gone from the mount" test ! -e "$mnt/class/block/sda"
unchanged "rm unknown" "sda" ctl rm block sda
unchanged "rm unknown class" "nosuch" ctl rm nosuch sda

start_daemon b
check "load into another daemon" "$classctl" --socket "$tmp/b/sock" load "$tmp/rec.umockdev"
check "  same devices as saved" cmp -s <("$classctl" --socket "$tmp/b/sock" save) "$tmp/rec.umockdev"
check "  attribute value loaded" [ "$("$classctl" --socket "$tmp/b/sock" get block sda size)" = 2000 ]
printf 'P: /devices/virtual/block/zz\nQ: what\n' >"$tmp/bad.umockdev"
sock=$tmp/b/sock
unchanged "load a bad record" "bad.umockdev" ctl load "$tmp/bad.umockdev"
unchanged "load a missing file" "nofile" ctl load "$tmp/nofile"
mkdir -p "$tmp/b/mnt/firmware/acpi" && echo balanced >"$tmp/b/mnt/firmware/acpi/platform_profile"
check "reset" ctl reset
check "  no device left" [ -z "$(ctl save)" ]
check "  no file made through the mount left" test ! -e "$tmp/b/mnt/firmware"
check "  the classes gone" [ -z "$(ls "$tmp/b/mnt/class")" ]

# a subscriber asking for more than the replay ring holds is told of the
# gap, and stops there unless --lossy
start_daemon c --ring-size 16
sock=$tmp/c/sock
for i in $(seq 12); do ctl add gap "g$i" && ctl rm gap "g$i" || bad "add and rm gap g$i"; done
timeout -s INT 2 "$classctl" --socket "$sock" monitor --since 1 >"$tmp/gap.out" 2>"$tmp/gap.err"
rc=$?
check "monitor past the replay ring: gap notice on stderr" \
	grep -Eqx 'classctl: monitor: missed events 1-[0-9]+' "$tmp/gap.err"
check "  and exit status 1 at once" [ "$rc" = 1 ]
check "  no event after the gap" [ ! -s "$tmp/gap.out" ]
timeout -s INT 2 "$classctl" --socket "$sock" monitor --lossy --since 1 >"$tmp/gap.out" \
	2>"$tmp/gap.err"
check "monitor --lossy: gap notice on stderr" \
	grep -Eqx 'classctl: monitor: missed events 1-[0-9]+' "$tmp/gap.err"
check "  then the events still in the ring" [ "$(grep -c '^KERNEL\[' "$tmp/gap.out")" -ge 8 ]
first=$(grep -m1 '^SEQNUM=' "$tmp/gap.out" | cut -d= -f2)
last_missed=$(sed -E 's/.*-([0-9]+)$/\1/' "$tmp/gap.err")
check "  replay resumes right after the gap" [ "$first" = $((last_missed + 1)) ]

stop_daemons
check "daemons stopped, mounts gone" bash -c '! mountpoint -q "$1" && ! mountpoint -q "$2"' _ "$tmp/a/mnt" "$tmp/b/mnt"
cfs_summary
