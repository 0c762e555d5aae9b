#!/bin/bash
# test-record-machine.sh CLASSFS-RUN CLASSCTL - `umockdev-record --all` of
# the machine the tests run on (recorded now; it only reads /sys) loads in
# both layouts, saves with every device at its recorded path, loads from
# its save to the same save, and inside classfs-run `udevadm info
# --export-db` lists every recorded device.  Skipped (77) without
# umockdev-record or udevadm, or when not root.  The temporary directory
# is deleted whatever happens; classfs-run leaves nothing running.
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
classfs_run=$1 classctl=$2

if ((EUID != 0)); then
	echo "SKIP: needs root (classfs-run's namespaces and mounts)"
	exit 77
fi
for p in umockdev-record udevadm; do
	if ! command -v "$p" >/dev/null; then
		echo "SKIP: $p is not installed"
		exit 77
	fi
done
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

rec=$tmp/machine.umockdev
# devices that come and go while it reads (network namespaces of other
# programs) make umockdev-record's udevadm fail now and then: three tries
for try in 1 2 3; do
	umockdev-record --all >"$rec" 2>"$tmp/err" && break
	if ((try == 3)); then
		echo "umockdev-record --all failed three times: $(cat "$tmp/err")"
		exit 1
	fi
	sleep 1
done
grep '^P: ' "$rec" | sort >"$tmp/recorded"
n=$(wc -l <"$tmp/recorded")
echo "recorded: $n devices ($(uname -r))"
((n > 0)) || bad "umockdev-record recorded nothing"

# the devices of the record, "PATH SUBSYSTEM"
awk '/^P: / { p = $2; s = "" } /^E: SUBSYSTEM=/ { s = substr($0, 14) }
     /^$/ && p != "" { print p, s; p = "" } END { if (p != "") print p, s }' "$rec" >"$tmp/devs"

for layout in class devices; do
	run=("$classfs_run" --layout "$layout")
	if ! "${run[@]}" --load "$rec" -- "$classctl" save >"$tmp/s1" 2>"$tmp/err"; then
		bad "$layout: load of the recording: $(cat "$tmp/err")"
		continue
	fi
	grep '^P: ' "$tmp/s1" | sort | diff "$tmp/recorded" - >"$tmp/diff" ||
		bad "$layout: saved paths differ from the recorded ones: $(head -20 "$tmp/diff")"
	if ! "${run[@]}" --load "$tmp/s1" -- "$classctl" save >"$tmp/s2" 2>"$tmp/err"; then
		bad "$layout: load of the save: $(cat "$tmp/err")"
	elif ! cmp -s "$tmp/s1" "$tmp/s2"; then
		bad "$layout: save -> load -> save differs: $(diff "$tmp/s1" "$tmp/s2" | head -20)"
	fi
	if ! "${run[@]}" --load "$rec" -- udevadm info --export-db >"$tmp/db" 2>"$tmp/err"; then
		bad "$layout: udevadm info --export-db: $(cat "$tmp/err")"
		continue
	fi
	# listed at its path, or (class layout) as /class/SUBSYSTEM/[...]/NAME
	missing=$(awk 'NR == FNR { if ($1 == "P:") { db[$2] = 1; if ($2 ~ /^\/class\//) {
				split($2, c, "/"); k = c[3] "|" c[length(c)]; cls[k] = 1 } } next }
		       !($1 in db) { nm = $1; sub(/.*\//, "", nm); if (!(($2 "|" nm) in cls)) print $1 }' \
		"$tmp/db" "$tmp/devs")
	if [[ -n $missing ]]; then
		bad "$layout: udevadm does not list $(wc -l <<<"$missing") recorded devices: $(head -10 <<<"$missing")"
	else
		ok "$layout: saved, loaded again, udevadm lists all $n"
	fi
done
cfs_summary
