#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-fs-writable.sh CLASSFS-RUN CLASSFSD - /sys is writable as
# umockdev's is: under classfs-run (the sample machine), plain file calls
# through the kernel make, write, rename and remove files, directories
# and symlinks that are no devices (/sys/firmware/acpi/platform_profile,
# /sys/devices/system/cpu/cpufreq/policy0), inside a device's directory
# too, hide a device's `subsystem` and class links, chmod and truncate;
# a device's directory and code stay the tree's (EBUSY, EPERM); entries
# belong to the testbed's uid (st_uid, st_gid) so it writes a 0644
# attribute, and another uid follows the mode bits (EACCES).
#
# Run by root, and with CLASSFS_RUN_TEST_UID=U (meson's
# test-fs-writable-unpriv: 65534) as uid U, whose classfs-run makes a user
# namespace of U mapped to itself.  Needs root to switch (exit 77 else).
set -euo pipefail

if (($# < 2)); then
	echo "usage: $0 CLASSFS-RUN CLASSFSD" >&2
	exit 2
fi
if ((EUID != 0)); then
	echo "SKIP: test-fs-writable needs root (it switches uids)"
	exit 77
fi
run=$(realpath "$1") classfsd=$(realpath "$2")
src=$(cd "$(dirname "$0")/../.." && pwd)
as_uid=${CLASSFS_RUN_TEST_UID:-}
work=$(mktemp -d /tmp/fs-writable.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"
as=()
. "$src/tests/stage.sh"
if [[ -n $as_uid ]]; then
	cfs_stage "$work/stage" classfsd >/dev/null ||
		{ echo "FAIL: cannot stage the programs for uid $as_uid"; exit 1; }
	chown "$as_uid:$as_uid" "$work" "$TMPDIR"
	cfs_stage_dir=$work/as-uid
	as=(cfs_as_uid "$as_uid:$as_uid")
fi
export CLASSFSD=$classfsd

# what runs inside: every check prints "FAIL: ..." and counts
cat >"$work/inside.sh" <<'EOF'
set -u
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() { # expect WANT COMMAND...: COMMAND's output is WANT
	local want=$1 got
	shift
	got=$("$@" 2>&1) || true
	[[ $got == "$want" ]] || fail "$*: got '$got', want '$want'"
}
refused() { # refused ERRTEXT COMMAND...: COMMAND fails saying ERRTEXT
	local why=$1 out
	shift
	if out=$("$@" 2>&1); then
		fail "$*: succeeded, want '$why'"
	elif [[ $out != *"$why"* ]]; then
		fail "$*: '$out', want '$why'"
	fi
}
me=$(id -u)
other=$2

# firmware/acpi: made, written, read, rewritten (write tmp, rename over)
mkdir -p /sys/firmware/acpi || fail "mkdir -p /sys/firmware/acpi"
printf 'balanced\n' >/sys/firmware/acpi/platform_profile || fail "write platform_profile"
expect balanced cat /sys/firmware/acpi/platform_profile
expect "$me $(id -g) 644 9 regular file" stat -c '%u %g %a %s %F' /sys/firmware/acpi/platform_profile
python3 -c "open('/sys/firmware/acpi/platform_profile','w').write('low-power\n')" ||
	fail "python rewrite"
expect low-power cat /sys/firmware/acpi/platform_profile
printf 'performance\n' >/sys/firmware/acpi/.pp.tmp && mv /sys/firmware/acpi/.pp.tmp \
	/sys/firmware/acpi/platform_profile || fail "rename over"
expect performance cat /sys/firmware/acpi/platform_profile
expect "platform_profile" ls /sys/firmware/acpi
printf 'more\n' >>/sys/firmware/acpi/platform_profile
expect "$(printf 'performance\nmore')" cat /sys/firmware/acpi/platform_profile
truncate -s 4 /sys/firmware/acpi/platform_profile
expect perf cat /sys/firmware/acpi/platform_profile
chmod 0600 /sys/firmware/acpi/platform_profile && expect 600 stat -c %a /sys/firmware/acpi/platform_profile
# cpufreq policies
mkdir -p /sys/devices/system/cpu/cpufreq/policy0 || fail "mkdir cpufreq"
echo powersave >/sys/devices/system/cpu/cpufreq/policy0/scaling_governor
expect powersave cat /sys/devices/system/cpu/cpufreq/policy0/scaling_governor
# inside a device: a new attribute, a link; a stored attribute written back
dev=/sys/class/block/sda
echo 42 >$dev/new_attr && expect 42 cat $dev/new_attr
ln -s ../../foo $dev/driver && expect ../../foo readlink $dev/driver
expect "$me 644" stat -c '%u %a' $dev/removable
echo 1 >$dev/removable || fail "write a stored 0644 attribute"
expect 1 cat $dev/removable
mkdir $dev/power2 && echo on >$dev/power2/control && expect on cat $dev/power2/control
# a broken tree: no subsystem link, no class link; the device still works
rm $dev/subsystem || fail "rm subsystem"
refused "No such file" stat $dev/subsystem
rm /sys/class/block/sda1 2>/dev/null || true
rm /sys/block/sda || fail "rm block/sda"
refused "No such file" stat /sys/block/sda
grep -q DEVNAME=sda $dev/uevent || fail "uevent after the links went"
# what stays the tree's
refused "busy" rmdir /sys/class/block/sda
refused "not permitted" rm $dev/uevent
refused "not empty" rmdir /sys/devices/system/cpu
refused "Invalid argument" python3 -c "import os; os.rename('/sys/firmware', '/sys/firmware/acpi/x')"
rm -r /sys/devices/system /sys/firmware $dev/power2 || fail "rm -r"
refused "No such file" stat /sys/firmware
# another uid follows the mode bits (system programs: tests/stage.sh's
# cfs_as_uid runs them as they are)
as_other() { bash -c '. "$0" && cfs_as_uid "$@"' "$STAGE_SH" "$other:$other" "$@"; }
if [[ $other != - ]]; then
	echo 0 >/sys/ro_for_others
	refused "Permission denied" as_other sh -c 'echo 1 >/sys/ro_for_others'
	refused "Permission denied" as_other mkdir /sys/x
	expect 0 as_other cat /sys/ro_for_others
	chmod 0666 /sys/ro_for_others
	as_other sh -c 'echo 2 >/sys/ro_for_others' ||
		fail "another uid writing a 0666 file"
	expect 2 cat /sys/ro_for_others
	rm /sys/ro_for_others
fi
exit $((fails > 0))
EOF
chmod 0644 "$work/inside.sh"

rc=0
# root: another uid (65534) checks the modes; uid U alone in its namespace has no other uid
other=-
[[ -z $as_uid ]] && other=65534
(cd / && STAGE_SH=$src/tests/stage.sh "${as[@]}" "$run" --sample -- bash "$work/inside.sh" x "$other") || rc=$?
if ((rc != 0)); then
	echo "FAIL: inside classfs-run${as_uid:+ as uid $as_uid} (exit $rc)"
	exit 1
fi
echo "ok: /sys writable${as_uid:+ as uid $as_uid}"
