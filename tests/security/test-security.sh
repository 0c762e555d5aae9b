#!/bin/bash
# test-security.sh CLASSFSD CLASSCTL SEC_OP SEC_PRELOAD - the security
# matrix: what an unprivileged uid (65534, "nobody", switched to for real
# with setpriv) can and cannot do against a live classfsd, through its
# control socket (default socket and --group nogroup) and through its FUSE
# mount (allow_other off and on); what its TRIGGER variables become in
# the environment of a root uevent helper (SEC_PRELOAD: an LD_PRELOAD
# probe) and in `classctl monitor`; how names and attribute paths with
# `..`, `/`, control characters or too many bytes are refused, as root
# and as nobody, through the client library and through classctl, with
# the tree (classctl save and tree --json) unchanged; what a second
# unprivileged uid (65533, "other") and nobody can do to each other's
# devices through their own; and the per-uid limits.
#
# Every row is "section who via operation expected got ok|FAIL" (tabs),
# printed and appended to $CLASSFS_RELIABILITY_DIR/security.tsv (truncated
# first).  Exit 1 on any FAIL.  Runs in a private mount namespace; the
# daemons are stopped by PID, their mounts removed and the temporary
# directory deleted whatever happens.
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
# shellcheck source=../stage.sh
source "$(dirname "$0")/../stage.sh"
cfs_enter "$@"
shift
classfsd=$1 classctl=$2 secop=$3 preload=$4
# what nobody runs, where nobody can run it (the build tree may be out of its reach)
chmod 0755 "$tmp"
cfs_stage "$tmp/stage" classctl secop || exit 1
cfs_stage_dir=$tmp/stage	# cfs_as_uid runs these copies as they are
# nobody is uid 65534; other a second unprivileged uid, in group nogroup
# so that it reaches a --group nogroup socket
NOBODY=65534 OTHER=65533:65534

outdir=${CLASSFS_RELIABILITY_DIR:-.}
mkdir -p "$outdir" || exit 1
tsv=$outdir/security.tsv
: >"$tsv" || exit 1

rows=0
# row SECTION WHO VIA OPERATION EXPECTED GOT - EXPECTED may list alternatives: "EACCES|EPERM"
row() {
	local res=FAIL
	[[ "|$5|" == *"|$6|"* ]] && res=ok
	rows=$((rows + 1))
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" "$res" >>"$tsv"
	if [[ $res == ok ]]; then
		ok "$1: $2 via $3: $4: expected $5, got $6"
	else
		bad "$1: $2 via $3: $4: expected $5, got $6"
		[[ -s $tmp/err ]] && sed 's/^/#   message: /' "$tmp/err"
	fi
}
# as WHO COMMAND... - run the command as root, as nobody (65534) or as other (65533)
as() {
	if [[ $1 == nobody ]]; then
		cfs_as_uid "$NOBODY" "${@:2}"
	elif [[ $1 == other ]]; then
		cfs_as_uid "$OTHER" "${@:2}"
	else
		"${@:2}"
	fi
}
# so WHO ARGS... - sec-op's outcome token ("ok", "EPERM", ...)
so() {
	as "$1" "$secop" "${@:2}" 2>"$tmp/err" >"$tmp/out"
	head -n1 "$tmp/out"
}
# t SECTION WHO OPERATION EXPECTED SEC_OP_ARGS... - one row through the socket
t() {
	local got
	got=$(so "$2" "$sock" "${@:5}")
	row "$1" "$2" socket "$3" "$4" "$got"
}
# tf SECTION WHO OPERATION EXPECTED FS_OP ARGS... - one row through the mount
tf() {
	local got
	got=$(so "$2" - "${@:5}")
	row "$1" "$2" mount "$3" "$4" "$got"
}
# tc SECTION WHO OPERATION EXPECTED CLASSCTL_ARGS... - one row through
# classctl: "ok" (exit 0), "refused" (non-zero exit, a message on stderr,
# nothing on stdout), "refused-silently" (no message), "refused-unclear"
# (the message does not match $tc_why when that is set)
tc_why=
tc() {
	local got=ok
	as "$2" "$classctl" --socket "$sock" "${@:5}" >"$tmp/out" 2>"$tmp/err"
	if (($? != 0)); then
		got=refused
		if [[ ! -s $tmp/err || -s $tmp/out ]]; then
			got=refused-silently
		elif [[ -n $tc_why ]] && ! grep -Eq -e "$tc_why" "$tmp/err"; then
			got=refused-unclear
		fi
	fi
	row "$1" "$2" classctl "$3" "$4" "$got"
}
# value WHO ARGS... - sec-op's data lines (after the token)
value() {
	as "$1" "$secop" "${@:2}" 2>/dev/null | tail -n +2
}
# hold WHO FILE ARGS... - a background sec-op (hold, or a classctl
# monitor) as WHO, output to FILE; tracked, its PID appended to $held
held=()
hold() {
	local -a who=()
	[[ $1 == nobody ]] && who=(cfs_as_uid --exec "$NOBODY")
	[[ $1 == other ]] && who=(cfs_as_uid --exec "$OTHER")
	# cfs_as_uid --exec and setpriv exec: $! is the holder itself
	"${who[@]}" "${@:3}" >"$2" 2>&1 &
	cfs_track $!
	held+=($!)
}
# release - stop what hold started (not left for the daemons' exit rows)
release() {
	local i p
	for p in "${held[@]}"; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
		for i in "${!cfs_pids[@]}"; do
			[[ ${cfs_pids[$i]} == "$p" ]] && unset "cfs_pids[$i]"
		done
	done
	held=()
}
# snapshot FILE - the tree as classctl save and tree --json show it
snapshot() {
	{ "$classctl" --socket "$sock" save; "$classctl" --socket "$sock" tree --json; } >"$1" 2>&1
}
# shown NAME - a name printable in one TSV cell
shown() {
	if ((${#1} > 40)); then
		printf '<%d bytes>' "${#1}"
	else
		printf '%q' "$1"
	fi
}

echo "# socket with its default mode (0660, group root)"
start_daemon def
sock=$tmp/def/sock
row socket-0660 root stat "socket mode and group" "660 root" "$(stat -c '%a %G' "$sock")"
t socket-0660 root "connect" ok connect
t socket-0660 nobody "connect" EACCES connect
tc socket-0660 nobody "tree" refused tree
t socket-0660 nobody "mkclass" EACCES mkclass ncls

echo "# socket with --group nogroup; mount without allow_other"
start_daemon grp --group nogroup
sock=$tmp/grp/sock mnt=$tmp/grp/mnt
S=socket-group
row $S root stat "socket mode and group" "660 nogroup" "$(stat -c '%a %G' "$sock")"
t $S root "mkclass rcls" ok mkclass rcls
t $S root "add rcls rdev (rw 0644, ro 0444, secret 0400, wo 0200)" ok \
	add rcls rdev rw:0644:1 ro:0444:1 secret:0400:s3cret wo:0200:w
t $S nobody "connect" ok connect
t $S nobody "mkclass ncls (its own)" ok mkclass ncls
t $S nobody "add ncls ndev (rw 0644, ro 0444, mine 0400)" ok add ncls ndev rw:0644:a ro:0444:b mine:0400:m1ne
t $S nobody "add ncls nkid --parent ndev" ok add ncls nkid --parent ndev
t $S nobody "get own rw" ok get ncls ndev rw
t $S nobody "set own rw" ok set ncls ndev rw 2
row $S nobody socket "get own rw reads back the set value" "2" "$(value nobody "$sock" get ncls ndev rw)"
t $S nobody "set own 0444 attribute" EACCES set ncls ndev ro x
t $S root "set nobody's 0444 attribute (mode holds for root)" EACCES set ncls ndev ro x
t $S nobody "rename own ndev -> ndev2" ok rename ncls ndev ndev2
t $S nobody "rename own ndev2 -> ndev" ok rename ncls ndev2 ndev
t $S nobody "trigger change on own device" ok trigger ncls ndev change
t $S nobody "trigger change on own device with DEVPATH=/devices/evil" EINVAL \
	trigger ncls ndev change DEVPATH=/devices/evil
t $S nobody "trigger change on own device with SUBSYSTEM=block" EINVAL \
	trigger ncls ndev change SUBSYSTEM=block
t $S nobody "remove own child nkid" ok rm ncls nkid
t $S nobody "get root's rw (0644)" ok get rcls rdev rw
t $S nobody "get root's secret (0400)" EACCES get rcls rdev secret
t $S nobody "get own mine (0400: the owner bits)" ok get ncls ndev mine
t $S root "get root's secret (0400)" ok get rcls rdev secret
t $S root "get nobody's mine (0400)" ok get ncls ndev mine
t $S nobody "get root's wo (0200)" EACCES get rcls rdev wo
t $S nobody "set root's rw" EPERM set rcls rdev rw 9
t $S nobody "set root's ro" EPERM set rcls rdev ro 9
t $S nobody "set root's uevent" EPERM set rcls rdev uevent add
t $S nobody "rename root's rdev" EPERM rename rcls rdev stolen
t $S nobody "remove root's rdev" EPERM rm rcls rdev
t $S nobody "trigger change on root's rdev" EPERM trigger rcls rdev change
t $S nobody "trigger remove on root's rdev" EPERM trigger rcls rdev remove
t $S nobody "remove root's class rcls" EPERM rmclass rcls
t $S nobody "mkclass rcls (root's name)" EEXIST mkclass rcls
t $S nobody "add rcls rdev (root's device's name)" EEXIST add rcls rdev
row $S root socket "root's rdev unchanged after nobody's attempts" "1" "$(value root "$sock" get rcls rdev rw)"
t $S nobody "add a device to root's class (anyone may publish)" ok add rcls nguest
# another uid's device is its owner's, as a directory is (docs/security.md, "Squatting")
t $S nobody "add a child under root's rdev (not added --open)" EPERM add rcls nsub --parent rdev
t $S nobody "add a device with a number (a /dev node is root's)" EPERM add ncls nnum --dev 8:9
t $S root "add rcls rnum --dev 8:9 (root may)" ok add rcls rnum --dev 8:9
t $S nobody "make an attribute in root's rdev" EPERM create rcls rdev nattr x
t $S nobody "make a directory named power in root's rdev" EPERM create rcls rdev power/x x
t $S nobody "make dev in own ndev (no number: the tree's name still)" EEXIST create ncls ndev dev garbage
t $S nobody "make device in own ndev" EEXIST create ncls ndev device x
t $S nobody "make g/dev in own ndev (at any depth)" EEXIST create ncls ndev g/dev x
t $S nobody "add a child named dev below own ndev" EEXIST add ncls dev --parent ndev
t $S nobody "add a child named device below own ndev" EEXIST add ncls device --parent ndev
t $S root "remove rnum" ok rm rcls rnum
# its own device's links lead to root's devices: owning nguest gives no right there
t $S nobody "get root's secret through own device's subsystem link" EACCES get rcls nguest subsystem/rdev/secret
t $S nobody "get root's rw through own device's subsystem link" ok get rcls nguest subsystem/rdev/rw
t $S nobody "set root's rw through own device's subsystem link" EPERM set rcls nguest subsystem/rdev/rw 7
t $S nobody "get through a link that names nothing" ENOENT get rcls nguest subsystem/none/rw
t $S nobody "set through a path that names nothing" ENOENT set rcls nguest none/rw 7
t $S root "set root's rw through nguest's subsystem link (root may)" ok set rcls nguest subsystem/rdev/rw 1
t $S nobody "remove own device in root's class" ok rm rcls nguest
t $S root "set nobody's rw (root may change anything)" ok set ncls ndev rw 3
t $S root "trigger change on nobody's device" ok trigger ncls ndev change
# removing a class or device removes what is in or below it: also another uid's
t $S root "add rootdev into nobody's class ncls" ok add ncls rootdev rw:0644:1
t $S root "add rkid under nobody's ndev" ok add ncls rkid --parent ndev rw:0644:1
t $S nobody "remove own class ncls holding root's rootdev" EBUSY rmclass ncls
t $S nobody "remove own ndev holding root's rkid" EBUSY rm ncls ndev
row $S root socket "root's devices in nobody's class still there" "1 1" \
	"$(value root "$sock" get ncls rootdev rw) $(value root "$sock" get ncls rkid rw)"
t $S root "remove rkid" ok rm ncls rkid
t $S root "remove rootdev" ok rm ncls rootdev
t $S nobody "add nown and nown1 below it" ok add ncls nown
t $S nobody "add nown1 --parent nown" ok add ncls nown1 --parent nown
t $S nobody "remove own nown with only its own devices below" ok rm ncls nown
t $S nobody "nown1 went with it" ENOENT get ncls nown1 uevent
t $S nobody "mkclass ncls2, add a device, remove the class" ok mkclass ncls2
t $S nobody "add ncls2 d0" ok add ncls2 d0
t $S nobody "remove own class ncls2 holding only its own device" ok rmclass ncls2
# what nobody may read and follow
t $S nobody "save (a record holds 0400 values)" EPERM save
tc $S nobody "save (classctl)" refused save
t $S root "save" ok save
row $S nobody socket "save leaks no 0400 value" absent \
	"$(value nobody "$sock" save | grep -q s3cret && echo present || echo absent)"
tc $S nobody "info rcls rdev --json (it has a 0400 attribute)" refused info rcls rdev --json
row $S nobody classctl "info leaks no 0400 value" absent \
	"$(grep -q s3cret "$tmp/out" && echo present || echo absent)"
so root "$sock" add rcls rplain rw:0644:p >/dev/null
tc $S nobody "info rcls rplain (all readable)" ok info rcls rplain
tc $S nobody "info own ncls ndev (its 0400 by the owner bits)" ok info ncls ndev --json
row $S nobody classctl "info of own device shows its 0400 value" present \
	"$(grep -q m1ne "$tmp/out" && echo present || echo absent)"
tc $S root "info rcls rdev --json" ok info rcls rdev --json
t $S nobody "tree --json" ok tree
row $S nobody socket "tree leaks no 0400 value" absent \
	"$(value nobody "$sock" tree | grep -q s3cret && echo present || echo absent)"
t $S nobody "subscribe (events from SEQNUM 1, root's included)" ok subscribe
t $S nobody "replay 1..5" ok replay 1 5
as nobody timeout -s INT 1 "$classctl" --socket "$sock" monitor --since 1 >"$tmp/mon" 2>"$tmp/err"
row $S nobody classctl "monitor --since 1 sees root's events" ok \
	"$(grep -q 'rcls/rdev' "$tmp/mon" && echo ok || echo none)"
# a record loaded by nobody
cat >"$tmp/rec.umockdev" <<'R'
P: /devices/virtual/nrec/nrec0
E: SUBSYSTEM=nrec
A: dev=250:7\n
R
t $S nobody "load a record (its devices would be root's)" EPERM load "$tmp/rec.umockdev"
tc $S nobody "load a record (classctl)" refused load "$tmp/rec.umockdev"
t $S nobody "remove a device of the refused record" ENOENT rm nrec nrec0
t $S root "load a record" ok load "$tmp/rec.umockdev"
t $S nobody "get an attribute of root's loaded device" ok get nrec nrec0 dev
t $S nobody "remove root's loaded device" EPERM rm nrec nrec0
t $S nobody "trigger change on root's loaded device" EPERM trigger nrec nrec0 change
t $S nobody "set an attribute of root's loaded device" EPERM set nrec nrec0 dev 1:1
t $S nobody "remove the loader's class" EPERM rmclass nrec
t $S root "remove its loaded device" ok rm nrec nrec0
# the mount without allow_other: nobody is refused by the kernel
S=mount-private
tf $S nobody "stat the mount point" EACCES fs-stat "$mnt"
tf $S nobody "read root's rw" EACCES fs-read "$mnt/class/rcls/rdev/rw"
tf $S nobody "read own rw" EACCES fs-read "$mnt/class/ncls/ndev/rw"
tf $S nobody "write own rw" EACCES fs-write "$mnt/class/ncls/ndev/rw" 5
tf $S root "read root's rw" ok fs-read "$mnt/class/rcls/rdev/rw"

echo "# the mount with allow_other"
start_daemon oth --group nogroup --mount-options allow_other
sock=$tmp/oth/sock mnt=$tmp/oth/mnt
S=mount-allow_other
so root "$sock" add rcls rdev rw:0644:1 ro:0444:1 secret:0400:s3cret wo:0200:w >/dev/null
so nobody "$sock" add ncls ndev rw:0644:a ro:0444:b >/dev/null
d=$mnt/class/rcls/rdev n=$mnt/class/ncls/ndev
tf $S nobody "stat the mount point" ok fs-stat "$mnt"
tf $S nobody "read root's rw (0644)" ok fs-read "$d/rw"
tf $S nobody "read root's uevent" ok fs-read "$d/uevent"
tf $S nobody "read root's secret (0400)" EACCES fs-read "$d/secret"
tf $S nobody "write root's rw (0644)" EACCES fs-write "$d/rw" 9
tf $S nobody "write root's uevent" EACCES fs-write "$d/uevent" add
tf $S nobody "read own rw" ok fs-read "$n/rw"
row $S nobody mount "owner of own device's files (stat uid mode)" "0 0644" "$(value nobody - fs-stat "$n/rw")"
tf $S nobody "write own rw (files are root's: set it through the socket)" EACCES fs-write "$n/rw" 5
tf $S nobody "write own ro (0444)" EACCES fs-write "$n/ro" 5
tf $S nobody "write own uevent" EACCES fs-write "$n/uevent" change
# another uid: the mode bits of root's 0755 directories and 0644 files
for who in nobody; do
	tf $S $who "create a file in root's device" "EACCES|EPERM" fs-create "$d/new"
	tf $S $who "create a file in own/nobody's device" "EACCES|EPERM" fs-create "$n/new"
	tf $S $who "unlink root's rw" "EACCES|EPERM" fs-unlink "$d/rw"
	tf $S $who "mkdir in root's device" "EACCES|EPERM" fs-mkdir "$d/newdir"
	tf $S $who "rmdir root's device" "EACCES|EPERM" fs-rmdir "$d"
	tf $S $who "rename root's rw" "EACCES|EPERM" fs-rename "$d/rw" "$d/rw2"
	tf $S $who "rename root's device directory" "EACCES|EPERM" fs-rename "$d" "$mnt/class/rcls/x"
	tf $S $who "symlink in root's device" "EACCES|EPERM" fs-symlink /etc/passwd "$d/link"
	tf $S $who "hard link of root's rw" "EACCES|EPERM" fs-link "$d/rw" "$d/rw2"
	tf $S $who "chown root's rw" "EPERM" fs-chown "$d/rw" 65534
done
tf $S nobody "chmod root's ro to 0666" EPERM fs-chmod "$d/ro" 0666
# root, the tree's owner: files, directories and links as in a tmpfs;
# devices' directories and computed entries stay the tree's
tf $S root "create a file in root's device" ok fs-create "$d/new"
tf $S root "rename it" ok fs-rename "$d/new" "$d/new2"
tf $S root "unlink it" ok fs-unlink "$d/new2"
tf $S root "mkdir in root's device" ok fs-mkdir "$d/newdir"
tf $S root "rmdir it" ok fs-rmdir "$d/newdir"
tf $S root "symlink in root's device" ok fs-symlink /etc/passwd "$d/link"
tf $S root "unlink it" ok fs-unlink "$d/link"
tf $S root "rmdir root's device" EBUSY fs-rmdir "$d"
tf $S root "rename root's device directory" EBUSY fs-rename "$d" "$mnt/class/rcls/x"
tf $S root "unlink root's uevent" EPERM fs-unlink "$d/uevent"
tf $S root "hard link of root's rw" EPERM fs-link "$d/rw" "$d/rw2"
tf $S root "chown root's rw" EPERM fs-chown "$d/rw" 65534
tf $S root "chmod root's uevent" EPERM fs-chmod "$d/uevent" 0666
tf $S root "chmod root's ro to 0666 (the daemon's attribute)" EPERM fs-chmod "$d/ro" 0666
row $S root mount "modes unchanged (ro, rw)" "0 0444 0 0644" \
	"$(value root - fs-stat "$d/ro" | tr '\n' ' ')$(value root - fs-stat "$d/rw")"

echo "# the uevent helper (run as root) and the variables of a client's TRIGGER"
hdir=$tmp/helper
mkdir -p "$hdir"
chmod 0755 "$hdir"
probe=$hdir/probe.so
cp "$preload" "$probe"
chmod 0755 "$probe"
# the helper keeps the raw environment it was started with (duplicates too)
cat >"$hdir/hotplug" <<H
#!/bin/sh
cat /proc/\$\$/environ >"$hdir/env.\$SEQNUM.tmp" && mv "$hdir/env.\$SEQNUM.tmp" "$hdir/env.\$SEQNUM"
H
chmod 0755 "$hdir/hotplug"
S=uevent-helper
LD_PRELOAD=$probe /bin/true
row $S root exec "the LD_PRELOAD probe leaves its mark when preloaded" "uid=0" \
	"$(cat "$probe.ran" 2>/dev/null)"
rm -f "$probe.ran"
SEC_DAEMON_OWN=leak start_daemon hlp --group nogroup --mount-options allow_other \
	--uevent-helper "$hdir/hotplug"
sock=$tmp/hlp/sock mnt=$tmp/hlp/mnt
# helper_env PATTERN - the helper environment (one entry a line) holding an
# entry matching PATTERN; waits up to 30 s (the helper is a fork and exec
# the daemon runs after the event: on a loaded CI machine 5 s was too few)
helper_env() {
	local f
	for _ in $(seq 600); do
		f=$(grep -lzE "$1" "$hdir"/env.* 2>/dev/null | head -n1)
		[[ -n $f ]] && { tr '\0' '\n' <"$f"; return 0; }
		sleep 0.05
	done
	return 1
}
# preload_vars - the helper environment's entries naming LD_PRELOAD, on one line
preload_vars() {
	grep -E '^[A-Za-z0-9_]*LD_PRELOAD=' "$tmp/henv" | sed "s|$probe|<probe>|g" | paste -sd' '
}
t $S nobody "mkclass hcls" ok mkclass hcls
t $S nobody "add hcls hdev" ok add hcls hdev
t $S nobody "trigger change on own device with LD_PRELOAD=<probe>" ok \
	trigger hcls hdev change "LD_PRELOAD=$probe"
helper_env "^(SYNTH_ARG_)?LD_PRELOAD=" >"$tmp/henv"
row $S nobody helper "the helper gets it only as SYNTH_ARG_LD_PRELOAD" "SYNTH_ARG_LD_PRELOAD=<probe>" \
	"$(preload_vars)"
row $S nobody helper "the probe did not run in the root helper" "not run" \
	"$( [[ -e $probe.ran ]] && echo "ran: $(paste -sd' ' "$probe.ran")" || echo "not run")"
row $S nobody helper "the helper's HOME and PATH are fixed, nothing of the daemon's environment" \
	"HOME=/ PATH=/sbin:/bin:/usr/sbin:/usr/bin" \
	"$(grep -E '^(HOME|PATH|SEC_DAEMON_OWN)=' "$tmp/henv" | sort | paste -sd' ')"
row $S nobody helper "the event's ACTION and DEVPATH are the tree's" \
	"ACTION=change DEVPATH=/class/hcls/hdev" \
	"$(grep -E '^(ACTION|DEVPATH)=' "$tmp/henv" | paste -sd' ')"
t $S nobody "trigger with FOO=x<newline>ACTION=remove" EINVAL \
	trigger hcls hdev change $'FOO=x\nACTION=remove'
t $S nobody "trigger with FOO=x<CR>ACTION=remove" EINVAL \
	trigger hcls hdev change $'FOO=x\rACTION=remove'
t $S nobody "trigger with an escape sequence in a value" EINVAL \
	trigger hcls hdev change $'FOO=\e[2K'
t $S nobody "trigger with key A-B" EINVAL trigger hcls hdev change A-B=1
t $S nobody "trigger with an empty value" EINVAL trigger hcls hdev change FOO=
t $S nobody "trigger with key DEVPATH (refused, not renamed)" EINVAL \
	trigger hcls hdev change DEVPATH=/class/hcls/other
tc_why='not a valid variable'
tc $S nobody "trigger FOO=x<newline>ACTION=remove (classctl)" refused \
	trigger hcls hdev change $'FOO=x\nACTION=remove'
tc_why=
tc $S nobody "trigger change FOO=bar (classctl)" ok trigger hcls hdev change FOO=bar
tf $S root "write 'change UUID FOO=x<newline>ACTION=remove' to uevent" EINVAL \
	fs-write "$mnt/class/hcls/hdev/uevent" \
	$'change 12345678-1234-1234-1234-123456789abc FOO=x\nACTION=remove\n'
tf $S root "write 'change UUID LD_PRELOAD=<probe>' to uevent" ok \
	fs-write "$mnt/class/hcls/hdev/uevent" "change 12345678-1234-1234-1234-123456789abc LD_PRELOAD=$probe"
helper_env "^SYNTH_UUID=12345678-" >"$tmp/henv"
row $S root helper "a uevent write's LD_PRELOAD reaches the helper only as SYNTH_ARG_LD_PRELOAD" \
	"SYNTH_ARG_LD_PRELOAD=<probe>" "$(preload_vars)"
row $S root helper "the probe did not run in the root helper" "not run" \
	"$( [[ -e $probe.ran ]] && echo "ran: $(paste -sd' ' "$probe.ran")" || echo "not run")"
as nobody timeout -s INT 1 "$classctl" --socket "$sock" monitor --since 1 >"$tmp/mon" 2>"$tmp/err"
row $S nobody classctl "monitor: one ACTION line per event" same \
	"$( (( $(grep -c '^KERNEL\[' "$tmp/mon") == $(grep -c '^ACTION=' "$tmp/mon") )) && echo same || echo differs)"
row $S nobody classctl "monitor: no forged ACTION=remove line" absent \
	"$(grep -q '^ACTION=remove' "$tmp/mon" && echo present || echo absent)"
row $S nobody classctl "monitor: each line KEY=VALUE, a header or blank" clean \
	"$(grep -vE '^(KERNEL\[[0-9.]+\] .*|[A-Za-z0-9_]+=.*|)$' "$tmp/mon" | grep -q . && echo forged || echo clean)"
row $S nobody classctl "monitor: the client's variable as SYNTH_ARG_FOO=bar" present \
	"$(grep -qx 'SYNTH_ARG_FOO=bar' "$tmp/mon" && echo present || echo absent)"

echo "# two unprivileged uids, nobody (65534) and other (65533), on the allow_other daemon"
S=two-uids
t $S nobody "add demo Q (not open)" ok add demo Q
t $S other "add demo C0 --parent Q (Q is nobody's, not open)" EPERM add demo C0 --parent Q
t $S nobody "add demo P --open (others may publish below it)" ok add demo P --open rw:0644:p
t $S other "add demo C --parent P (pub 0644, secret 0600)" ok \
	add demo C --parent P pub:0644:c secret:0600:c0nf
# a path through P's directory names C's files: C's owner and modes decide
t $S nobody "set C's pub through P (P/C/pub)" EPERM set demo P C/pub pwned
tc $S nobody "set demo P C/pub pwned (classctl)" refused set demo P C/pub pwned
t $S nobody "get C's 0600 secret through P" EACCES get demo P C/secret
t $S nobody "set C's uevent through P (a remove for C)" EPERM set demo P C/uevent remove
t $S nobody "get C's 0644 pub through P (the other bits allow it)" ok get demo P C/pub
row $S other socket "C and its pub unchanged after nobody's attempts" "c" \
	"$(value other "$sock" get demo C pub)"
t $S other "set own C's pub through P's path" ok set demo P C/pub mine
t $S other "get own C's 0600 secret through P's path" ok get demo P C/secret
t $S other "set P's own rw (P is nobody's)" EPERM set demo P rw x
t $S root "set C's pub through P (root may)" ok set demo P C/pub c
t $S nobody "set own P's rw" ok set demo P rw q
# another uid's device that depends on nobody's objects: removing them is refused
t $S nobody "add physical device pA --open" ok add - pA --open
t $S nobody "add acls x --phys pA --open" ok add acls x --phys pA --open
t $S other "add vcls v2 --phys acls/x" ok add vcls v2 --phys acls/x rw:0644:v
t $S nobody "remove own class acls (other's v2 is on x)" EBUSY rmclass acls
t $S nobody "remove own acls/x (other's v2 is on it)" EBUSY rm acls x
t $S nobody "remove own physical pA (x, then v2, are on it)" EBUSY rm - pA
tc_why='vcls/v2'
tc $S nobody "rmclass acls (classctl names vcls/v2)" refused rmclass acls
tc $S nobody "rm acls x (classctl names vcls/v2)" refused rm acls x
tc_why=
t $S nobody "remove own P (other's C below it)" EBUSY rm demo P
row $S other socket "v2, x and C still there" "v ok c" \
	"$(value other "$sock" get vcls v2 rw) $(so root "$sock" get acls x uevent) $(value other "$sock" get demo C pub)"
t $S other "remove own v2" ok rm vcls v2
t $S nobody "remove own acls/x (nothing of others' on it)" ok rm acls x
t $S other "add vcls v3 --phys pA" ok add vcls v3 --phys pA
t $S root "remove nobody's pA with other's v3 on it (root may)" ok rm - pA
t $S other "v3 went with pA" ENOENT get vcls v3 rw
t $S root "remove nobody's P with other's C below it (root may)" ok rm demo P
t $S other "C went with P" ENOENT get demo C pub
timeout -s INT 1 "$classctl" --socket "$sock" monitor --since 1 >"$tmp/mon" 2>/dev/null
row $S root classctl "REMOVE order: v3 before pA, C before P (deepest first)" "v3 pA C P" \
	"$(grep -E '^(KERNEL|UDEV)?.*remove' "$tmp/mon" | grep -oE '/(C|P|v3|pA)( |$)' | tr -d '/ ' |
		tr '\n' ' ' | sed 's/ $//')"

echo "# two uids, the devices layout: a class device in its physical device's directory"
start_daemon devl --group nogroup --layout devices
sock=$tmp/devl/sock
S=two-uids-devices
t $S nobody "add physical device pB (not open)" ok add - pB
t $S other "add ocls y0 --phys pB (pB is nobody's, not open)" EPERM add ocls y0 --phys pB
t $S nobody "remove pB" ok rm - pB
t $S nobody "add physical device pB --open" ok add - pB --open
t $S other "add ocls y --phys pB (pub 0644, secret 0600)" ok \
	add ocls y --phys pB pub:0644:y secret:0600:s3
t $S nobody "set y's pub through pB (pB/ocls/y/pub)" EPERM set - pB ocls/y/pub pwned
t $S nobody "get y's 0600 secret through pB" EACCES get - pB ocls/y/secret
t $S other "set own y's pub through pB's path" ok set - pB ocls/y/pub mine
row $S other socket "y's pub is other's value" mine "$(value other "$sock" get ocls y pub)"
t $S nobody "add acls x2 --open" ok add acls x2 --open
t $S other "add vcls v4 --phys acls/x2 (in x2's directory; secret 0600)" ok \
	add vcls v4 --phys acls/x2 secret:0600:s4
t $S nobody "get v4's 0600 secret through x2 (x2/v4/secret)" EACCES get acls x2 v4/secret
t $S nobody "set v4's uevent through x2" EPERM set acls x2 v4/uevent remove
t $S other "get own v4's secret through x2's path" ok get acls x2 v4/secret

echo "# per-uid limits (--max-connections-per-uid 6, --max-objects-per-uid 3,"
echo "# --max-subscribers-per-uid 1)"
start_daemon quota --group nogroup --max-connections-per-uid 6 --max-objects-per-uid 3 \
	--max-subscribers-per-uid 1
sock=$tmp/quota/sock
S=quota
t $S nobody "mkclass q (1 object)" ok mkclass q
t $S nobody "add q d1 (2)" ok add q d1
t $S nobody "add q d2 --parent d1 (3)" ok add q d2 --parent d1
t $S nobody "add q d3 (4th object)" EDQUOT add q d3
tc_why='limit|max-objects'
tc $S nobody "add q d3 (classctl says why)" refused add q d3
tc $S nobody "mkclass q2 (4th object)" refused mkclass q2
t $S nobody "add q4 d0 (its class and it: 2 more)" EDQUOT add q4 d0
t $S root "q4 was not made by the refused add" ENOENT rmclass q4
# nobody is at its limit: other counts its own, root has none
t $S other "mkclass o (other's 1st object)" ok mkclass o
t $S other "add o o1 (2nd)" ok add o o1
t $S other "add o o2 (3rd)" ok add o o2
t $S root "mkclass r" ok mkclass r
for i in 1 2 3 4; do so root "$sock" add r "r$i" >/dev/null; done
t $S root "add r r5 (root's 6th object)" ok add r r5
t $S nobody "remove d1 (d2 goes with it: 2 freed)" ok rm q d1
t $S nobody "add q d3 (2 of 3)" ok add q d3
t $S nobody "add q d4 (3 of 3)" ok add q d4
t $S nobody "add q d5 (4th)" EDQUOT add q d5
# a device the core removes with its bound parent stops counting too
t $S nobody "remove d4, d3" ok rm q d4
so nobody "$sock" rm q d3 >/dev/null
hold nobody "$tmp/bound" "$secop" "$sock" add q bp --bind
wait_for 5 grep -q '^ok' "$tmp/bound"
t $S nobody "add q bc below the bound bp (3 of 3)" ok add q bc --parent bp
release
wait_for 5 bash -c "! $secop $sock tree | grep -q '\"bp\"'"
# (the tree, not a lookup by name: a lookup would drop bc's entry itself)
row $S root socket "bp went with its connection, bc with it" gone \
	"$(value root "$sock" tree | grep -q '"bc"' && echo present || echo gone)"
t $S nobody "add q e1 (2 of 3)" ok add q e1
t $S nobody "add q e2 (3 of 3: bc no longer counts)" ok add q e2
t $S nobody "add q e3 (4th)" EDQUOT add q e3
# subscriptions: a held subscriber has one (and two connections)
hold nobody "$tmp/hold0" "$secop" "$sock" hold sub
wait_for 5 grep -q '^ok' "$tmp/hold0"
row $S nobody socket "a subscription held" ok "$(head -n1 "$tmp/hold0")"
tc_why='subscri'
tc $S nobody "classctl monitor (2nd subscription)" refused monitor
t $S nobody "subscribe (2nd subscription)" EMFILE subscribe
t $S other "other's first subscription" ok subscribe
# connections: the subscriber's two and four held ones make six
for i in 1 2 3 4; do hold nobody "$tmp/hold$i" "$secop" "$sock" hold; done
wait_for 5 bash -c "cat $tmp/hold[1-4] 2>/dev/null | grep -c '^ok' | grep -qx 4"
row $S nobody socket "four more connections held" 4 "$(cat "$tmp"/hold[1-4] | grep -c '^ok')"
t $S nobody "a 7th connection" EMFILE connect
tc_why='connections'
tc $S nobody "classctl tree (7th connection)" refused tree
tc_why=
t $S other "other's connection" ok connect
t $S root "root's connection" ok connect
release
# the daemon sees the held connections close a moment after they are killed
wait_for 5 as nobody "$secop" "$sock" subscribe >/dev/null 2>&1
t $S nobody "connections and subscription free again: subscribe" ok subscribe
sock=$tmp/grp/sock

echo "# names and paths: refused, nothing changed"
sock=$tmp/grp/sock
S=names
tc_why='not a valid|[Ii]nvalid|No such'
long256=$(printf 'a%.0s' $(seq 256))
long255=${long256:1}
bad_names=(.. . "" a/b / ../x $'a\nb' $'a\tb' $'a\x01b' $'a\x1bb' $'a\x7fb' "$long256")
bad_paths=(../uevent ../../uevent ../../../../etc/passwd /etc/passwd /uevent ./uevent
	a/../uevent "" a//b a/b/c rw/ $'rw\n')
for who in root nobody; do
	so $who "$sock" add ncls "own-$who" rw:0644:1 >/dev/null
	snapshot "$tmp/before"
	for nm in "${bad_names[@]}"; do
		q=$(shown "$nm")
		t $S $who "mkclass $q" EINVAL mkclass "$nm"
		t $S $who "add CLASS $q" EINVAL add ncls "$nm"
		t $S $who "add $q NAME" EINVAL add "$nm" dev0
		t $S $who "add NAME --parent $q" EINVAL add ncls dev0 --parent "$nm"
		t $S $who "rename own device to $q" EINVAL rename ncls "own-$who" "$nm"
		# "a/b" is a valid attribute path (one directory level)
		[[ $nm == a/b ]] || t $S $who "add with attribute $q" EINVAL add ncls dev0 "$nm:0644:1"
		tc $S $who "mkclass $q" refused mkclass "$nm"
		tc $S $who "add CLASS $q" refused add ncls "$nm"
		tc $S $who "rename own device to $q" refused rename ncls "own-$who" "$nm"
	done
	for p in "${bad_paths[@]}"; do
		q=$(shown "$p")
		# a/b/c is a well-formed path that names nothing: ENOENT will do
		exp=EINVAL
		[[ $p == a/b/c ]] && exp="EINVAL|ENOENT"
		t $S $who "get attribute $q" "$exp" get ncls "own-$who" "$p"
		t $S $who "set attribute $q" "$exp" set ncls "own-$who" "$p" x
		t $S $who "add with attribute path $q" EINVAL add ncls dev0 "$p:0644:1"
		tc $S $who "get attribute $q" refused get ncls "own-$who" "$p"
		tc $S $who "set attribute $q" refused set ncls "own-$who" "$p" x
	done
	t $S $who "add with mode 01000000 (not permission bits)" EINVAL add ncls dev0 rw:1000000:1
	snapshot "$tmp/after"
	row $S $who both "tree (save, tree --json) unchanged after the refusals" same \
		"$(cmp -s "$tmp/before" "$tmp/after" && echo same || echo changed)"
	t $S $who "add a 255-byte name (the limit)" ok add ncls "$long255"
	t $S $who "remove it" ok rm ncls "$long255"
	t $S $who "remove own-$who" ok rm ncls "own-$who"
done

echo "# the daemons stop cleanly (no sanitizer report, exit 0 on SIGTERM)"
for i in "${!cfs_pids[@]}"; do
	kill "${cfs_pids[$i]}" 2>/dev/null
	wait "${cfs_pids[$i]}"
	rc=$?
	unset "cfs_pids[$i]"
	row daemon root signal "daemon $i exits 0 on SIGTERM" 0 "$rc"
done
for log in "$tmp"/*/log; do
	: >"$tmp/err"
	got=clean
	if grep -Eq 'Sanitizer|runtime error|LeakSanitizer' "$log"; then
		got=reports
		cp "$log" "$tmp/err"
	fi
	row daemon root log "$(basename "$(dirname "$log")") log has no sanitizer report" clean "$got"
done

echo "# $rows rows; table in $tsv"
cfs_summary
