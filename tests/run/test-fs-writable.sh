#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-fs-writable.sh CLASSFS-RUN CLASSFSD [CLASSCTL] - /sys is writable as
# umockdev's is: under classfs-run (the sample machine), plain file calls
# through the kernel make, write, rename and remove files, directories
# and symlinks that are no devices (/sys/firmware/acpi/platform_profile,
# /sys/devices/system/cpu/cpufreq/policy0), inside a device's directory
# too, hide a device's `subsystem` and class links, chmod and truncate;
# a device's directory and code stay the tree's (EBUSY, EPERM); entries
# belong to the testbed's uid (st_uid, st_gid) so it writes a 0644
# attribute, and another uid follows the mode bits (EACCES).  As root,
# `chattr +i` makes a file immutable (power-profiles-daemon's test): no
# write, truncate, chmod, rm, mv, even for root, until `chattr -i`;
# `chattr +a` lets it be appended to only
# (skipped without chattr, and as uid U: the kernel wants
# CAP_LINUX_IMMUTABLE).  With CLASSCTL, in the devices layout, upower's
# test: a battery's class link unlinked, a record of a battery of the
# same name elsewhere loaded, /sys/class/power_supply/NAME is the new one,
# and the first one's parent is still removed with it.
#
# Run by root, and with CLASSFS_RUN_TEST_UID=U (meson's
# test-fs-writable-unpriv: 65534) as uid U, whose classfs-run makes a user
# namespace of U mapped to itself.  Needs root to switch (exit 77 else).
set -euo pipefail

if (($# < 2)); then
	echo "usage: $0 CLASSFS-RUN CLASSFSD [CLASSCTL]" >&2
	exit 2
fi
if ((EUID != 0)); then
	echo "SKIP: test-fs-writable needs root (it switches uids)"
	exit 77
fi
run=$(realpath "$1") classfsd=$(realpath "$2") classctl=${3:+$(realpath "$3")}
src=$(cd "$(dirname "$0")/../.." && pwd)
as_uid=${CLASSFS_RUN_TEST_UID:-}
work=$(mktemp -d /tmp/fs-writable.XXXXXX)
trap 'rm -rf "$work"' EXIT
chmod 0755 "$work"
export TMPDIR=$work/tmp
mkdir -p "$TMPDIR"
as=()
. "$src/tests/stage.sh"
. "$src/tests/lib.sh"
if [[ -n $as_uid ]]; then
	cfs_stage "$work/stage" classfsd ${classctl:+classctl} >/dev/null ||
		{ echo "FAIL: cannot stage the programs for uid $as_uid"; exit 1; }
	chown "$as_uid:$as_uid" "$work" "$TMPDIR"
	cfs_stage_dir=$work/as-uid
	as=(cfs_as_uid "$as_uid:$as_uid")
fi
export CLASSFSD=$classfsd

# what runs inside: the checks of tests/lib.sh (a copy every uid reads)
install -m 0644 "$src/tests/lib.sh" "$work/lib.sh"
cat >"$work/inside.sh" <<'EOF'
set -u
. "$(dirname "$0")/lib.sh"
expect() { # expect WANT COMMAND...: COMMAND's output is WANT
	local want=$1 got
	shift
	got=$("$@" 2>&1) || true
	if [[ $got == "$want" ]]; then
		ok "$*: $want"
	else
		bad "$*: got '$got', want '$want'"
	fi
}
refused() { # refused ERRTEXT COMMAND...: COMMAND fails saying ERRTEXT
	local why=$1 out
	shift
	if out=$("$@" 2>&1); then
		bad "$*: succeeded, want '$why'"
	elif [[ $out != *"$why"* ]]; then
		bad "$*: '$out', want '$why'"
	else
		ok "$*: refused ($why)"
	fi
}
me=$(id -u)
other=$2
chattr_ok=$3

# firmware/acpi: made, written, read, rewritten (write tmp, rename over)
mkdir -p /sys/firmware/acpi || bad "mkdir -p /sys/firmware/acpi"
printf 'balanced\n' >/sys/firmware/acpi/platform_profile || bad "write platform_profile"
expect balanced cat /sys/firmware/acpi/platform_profile
expect "$me $(id -g) 644 9 regular file" stat -c '%u %g %a %s %F' /sys/firmware/acpi/platform_profile
python3 -c "open('/sys/firmware/acpi/platform_profile','w').write('low-power\n')" ||
	bad "python rewrite"
expect low-power cat /sys/firmware/acpi/platform_profile
printf 'performance\n' >/sys/firmware/acpi/.pp.tmp && mv /sys/firmware/acpi/.pp.tmp \
	/sys/firmware/acpi/platform_profile || bad "rename over"
expect performance cat /sys/firmware/acpi/platform_profile
expect "platform_profile" ls /sys/firmware/acpi
printf 'more\n' >>/sys/firmware/acpi/platform_profile
expect "$(printf 'performance\nmore')" cat /sys/firmware/acpi/platform_profile
truncate -s 4 /sys/firmware/acpi/platform_profile
expect perf cat /sys/firmware/acpi/platform_profile
chmod 0600 /sys/firmware/acpi/platform_profile && expect 600 stat -c %a /sys/firmware/acpi/platform_profile
# cpufreq policies
mkdir -p /sys/devices/system/cpu/cpufreq/policy0 || bad "mkdir cpufreq"
echo powersave >/sys/devices/system/cpu/cpufreq/policy0/scaling_governor
expect powersave cat /sys/devices/system/cpu/cpufreq/policy0/scaling_governor
# power-profiles-daemon: chattr +i, and the daemon (root) may not write it
epp=/sys/devices/system/cpu/cpufreq/policy0/energy_performance_preference
echo balance_performance >$epp || bad "write $epp"
if [[ $chattr_ok == yes ]]; then
	expect "---------------------- $epp" lsattr $epp
	chattr +i $epp || bad "chattr +i"
	expect "----i----------------- $epp" lsattr $epp
	refused "not permitted" sh -c "echo power >$epp"
	refused "PermissionError" python3 -c "open('$epp', 'w').write('power')"
	refused "not permitted" truncate -s 0 $epp
	refused "not permitted" chmod 0600 $epp
	refused "not permitted" rm -f $epp
	refused "not permitted" mv $epp $epp.old
	echo x >$epp.new && refused "not permitted" mv $epp.new $epp
	rm -f $epp.new
	refused "not permitted" touch $epp
	expect balance_performance cat $epp
	expect "$me 644" stat -c '%u %a' $epp
	refused "not supported" chattr +i /sys/devices/system/cpu/cpufreq
	refused "not supported" chattr +a /sys/class/block/sda/removable
	# another uid may not change the flags (the kernel refuses it first)
	if [[ $other != - ]]; then
		refused "not permitted" bash -c '. "$0" && cfs_as_uid "$@"' "$STAGE_SH" \
			"$other:$other" chattr -i $epp
	fi
	chattr -i $epp || bad "chattr -i"
	expect "---------------------- $epp" lsattr $epp
	echo power >$epp || bad "write after chattr -i"
	expect power cat $epp
	chattr +i $epp || bad "chattr +i again"
	refused "not permitted" rm -r /sys/devices/system
	chattr -i $epp
	# append-only: >> only, nothing else
	log=${epp%/*}/log
	echo one >$log && chattr +a $log || bad "chattr +a"
	expect "-----a---------------- $log" lsattr $log
	echo two >>$log || bad "append to an append-only file"
	python3 -c "open('$log', 'a').write('three\n')" || bad "python append"
	refused "not permitted" sh -c "echo x >$log"
	refused "not permitted" truncate -s 0 $log
	refused "not permitted" rm -f $log
	refused "not permitted" mv $log $log.old
	expect "$(printf 'one\ntwo\nthree')" cat $log
	chattr -a $log && rm $log || bad "chattr -a, rm"
fi
# other ioctls: ENOTTY (isatty() of Python's open())
expect False python3 -c "import os; print(os.isatty(os.open('$epp', os.O_RDONLY)))"
# inside a device: a new attribute, a link; a stored attribute written back
dev=/sys/class/block/sda
echo 42 >$dev/new_attr && expect 42 cat $dev/new_attr
ln -s ../../foo $dev/driver && expect ../../foo readlink $dev/driver
expect "$me 644" stat -c '%u %a' $dev/removable
echo 1 >$dev/removable || bad "write a stored 0644 attribute"
expect 1 cat $dev/removable
mkdir $dev/power2 && echo on >$dev/power2/control && expect on cat $dev/power2/control
# a broken tree: no subsystem link, no class link; the device still works
rm $dev/subsystem || bad "rm subsystem"
refused "No such file" stat $dev/subsystem
rm /sys/class/block/sda1 2>/dev/null || true
rm /sys/block/sda || bad "rm block/sda"
refused "No such file" stat /sys/block/sda
grep -q DEVNAME=sda $dev/uevent || bad "uevent after the links went"
# what stays the tree's
refused "busy" rmdir /sys/class/block/sda
refused "not permitted" rm $dev/uevent
refused "not empty" rmdir /sys/devices/system/cpu
refused "Invalid argument" python3 -c "import os; os.rename('/sys/firmware', '/sys/firmware/acpi/x')"
rm -r /sys/devices/system /sys/firmware $dev/power2 || bad "rm -r"
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
		bad "another uid writing a 0666 file"
	expect 2 cat /sys/ro_for_others
	rm /sys/ro_for_others
fi
cfs_summary
EOF
chmod 0644 "$work/inside.sh"

# upower's test (devices layout): a battery's class link unlinked, a battery
# of the same name loaded elsewhere owns /sys/class/power_supply/NAME
cat >"$work/inside-upower.sh" <<'EOF'
set -u
. "$(dirname "$0")/lib.sh"
expect() {
	local want=$1 got
	shift
	got=$("$@" 2>&1) || true
	if [[ $got == "$want" ]]; then
		ok "$*: $want"
	else
		bad "$*: got '$got', want '$want'"
	fi
}
ctl=$1 work=$2
bat=hid-00:11:22:33:44:55-battery
hci=devices/usb1/bluetooth/hci0/hci0:01
"$ctl" load "$work/bat1.umockdev" || bad "load the first battery"
expect "../../$hci/1/power_supply/$bat" readlink /sys/class/power_supply/$bat
python3 -c "import os; os.unlink('/sys/class/power_supply/$bat')" || bad "unlink the class link"
[[ ! -e /sys/class/power_supply/$bat ]] || bad "the class link is still there"
[[ -f /sys/$hci/1/power_supply/$bat/uevent ]] || bad "the first battery went"
"$ctl" load "$work/bat2.umockdev" || bad "load a battery of the same name"
expect "../../$hci/2/power_supply/$bat" readlink /sys/class/power_supply/$bat
expect 20 cat /sys/class/power_supply/$bat/capacity
echo add >/sys/$hci/2/power_supply/$bat/uevent || bad "add uevent"
expect 1 sh -c "ls /sys/class/power_supply | grep -cx -- '$bat'"
expect "/$hci/2/power_supply/$bat" udevadm info -q path /sys/class/power_supply/$bat
# its udev database entry (+power_supply:NAME) is the second one's now
db=/run/udev/data/+power_supply:$bat
for i in $(seq 50); do [[ -e $db ]] && break; sleep 0.1; done
[[ -e $db ]] || bad "no database entry $db"
# the first battery still goes with its parent; the second stays, with its entry
"$ctl" rm bluetooth 1 || bad "remove the first battery's parent"
[[ ! -e /sys/$hci/1 ]] || bad "the first battery's parent is still there"
expect "../../$hci/2/power_supply/$bat" readlink /sys/class/power_supply/$bat
for i in 1 2 3 4 5; do
	sleep 0.2
	[[ -e $db ]] || { bad "$db went with the first battery"; break; }
done
# by class and name, the second
"$ctl" rm power_supply "$bat" || bad "remove the second battery by name"
[[ ! -e /sys/$hci/2/power_supply/$bat ]] || bad "the second battery is still there"
cfs_summary
EOF
for i in 1 2; do
	printf '%s\n' "P: /devices/usb1/bluetooth/hci0/hci0:01/$i" "E: SUBSYSTEM=bluetooth" "" \
		"P: /devices/usb1/bluetooth/hci0/hci0:01/$i/power_supply/hid-00:11:22:33:44:55-battery" \
		"E: SUBSYSTEM=power_supply" "E: POWER_SUPPLY_NAME=hid-00:11:22:33:44:55-battery" \
		"A: type=Battery" "A: capacity=${i}0" >"$work/bat$i.umockdev"
done
chmod 0644 "$work/inside-upower.sh" "$work"/bat*.umockdev

rc=0
# root: another uid (65534) checks the modes; uid U alone in its namespace has no other uid
other=-
[[ -z $as_uid ]] && other=65534
# chattr +i needs CAP_LINUX_IMMUTABLE in the first user namespace: root's
chattr_ok=no
if [[ -n $as_uid ]]; then
	echo "note: chattr skipped: uid $as_uid has no CAP_LINUX_IMMUTABLE"
elif ! command -v chattr >/dev/null || ! command -v lsattr >/dev/null; then
	echo "note: chattr skipped: chattr/lsattr not installed (e2fsprogs)"
else
	chattr_ok=yes
fi
(cd / && STAGE_SH=$src/tests/stage.sh "${as[@]}" "$run" --sample -- bash "$work/inside.sh" x \
	"$other" "$chattr_ok") || rc=$?
if ((rc != 0)); then
	bad "inside classfs-run${as_uid:+ as uid $as_uid} (exit $rc)"
	exit 1
fi
if [[ -z $classctl ]]; then
	echo "note: upower's case skipped: no CLASSCTL given"
elif ! command -v udevadm >/dev/null; then
	echo "note: upower's case skipped: udevadm not installed"
else
	(cd / && "${as[@]}" "$run" --layout devices -- bash "$work/inside-upower.sh" "$classctl" \
		"$work") || rc=$?
	if ((rc != 0)); then
		bad "upower's case inside classfs-run${as_uid:+ as uid $as_uid} (exit $rc)"
		exit 1
	fi
fi
ok "/sys writable${as_uid:+ as uid $as_uid}"
cfs_summary
