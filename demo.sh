#!/usr/bin/env bash
# demo.sh - install what is missing, build, and show classfs serving the
# sample machine (data/sample.umockdev, docs/sample.md):
#   1. classfsd loads the sample and mounts it as a live sysfs;
#   2. classctl prints the class tree (nested class devices);
#   3. the real lsblk and udevadm read it, bound over /sys in a private
#      mount namespace (the machine's own /sys is never touched);
#   4. a hotplug: classctl adds a USB stick (disk + partition) while
#      classctl monitor follows the events, lsblk sees it, it goes again;
#   5. a Python test's testbed (examples/python-testbed.py, pyudev) as
#      root, then the same as the unprivileged uid 65534.
# Stops the daemon and leaves nothing mounted or running, however it ends.
# Needs root (mount namespaces, FUSE). CLASSFS_BUILD_DIR names another
# build directory than build/.
set -euo pipefail
cd "$(dirname "$0")"
# shellcheck source=scripts/deps.sh
source scripts/deps.sh

if ((EUID != 0)); then
	echo "demo.sh: run as root (it mounts a FUSE filesystem and uses mount namespaces)" >&2
	exit 1
fi

classfs_install_missing "${CLASSFS_BUILD_DEPS[@]}" "${CLASSFS_DEMO_DEPS[@]}"
# CLASSFS_BUILD_DIR: another build directory than build/
build=${CLASSFS_BUILD_DIR:-build}
[[ -f $build/meson-private/coredata.dat ]] || meson setup "$build"
ninja -C "$build"
# a build set up before python3-dev was there has no extension: set up again
if ! ls "$build"/python/classfs/_classfs*.so >/dev/null 2>&1; then
	meson setup --reconfigure "$build"
	ninja -C "$build"
fi

classfsd=$build/programs/classfsd/classfsd
classctl=$build/programs/classctl/classctl
work=$(mktemp -d "${TMPDIR:-/tmp}/classfs-demo.XXXXXX")
mnt=$work/sys
sock=$work/control
daemon_pid=
monitor_pid=

is_mounted() {
	awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts
}

# stop PID - SIGTERM, wait up to 10 s, then SIGKILL
stop() {
	local pid=$1 i

	kill -TERM "$pid" 2>/dev/null || return 0
	for ((i = 0; i < 100; i++)); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

cleanup() {
	local rc=$?

	trap - EXIT INT TERM
	[[ -n $monitor_pid ]] && stop "$monitor_pid"
	[[ -n $daemon_pid ]] && stop "$daemon_pid"
	if is_mounted "$mnt"; then
		fusermount3 -u "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
	fi
	rm -rf "$work"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# step TITLE - a heading
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

# show CMD... - print the command, then run it
show() {
	printf '$ %s\n' "$*"
	"$@"
}

# sys CMD... - CMD with the classfs mount over /sys, in a private mount
# namespace; a tmpfs over /run/udev keeps the host's udev database out of
# the answers, and sd-device is told not to insist on the sysfs magic
sys() {
	printf '$ %s\n' "$*"
	# shellcheck disable=SC2016 # expanded by the inner shell
	unshare -m --propagation private /bin/sh -c '
		set -e
		mount --bind "$1" /sys
		if [ -d /run/udev ]; then mount -t tmpfs tmpfs /run/udev; fi
		shift
		exec env SYSTEMD_DEVICE_VERIFY_SYSFS=0 "$@"' sh "$mnt" "$@"
}

cctl() { show "$classctl" --socket "$sock" "$@"; }

step "classfsd: the sample machine, mounted at $mnt"
mkdir "$mnt"
"$classfsd" --sample --mount "$mnt" --socket "$sock" 2>"$work/classfsd.log" &
daemon_pid=$!
for ((i = 0; i < 100; i++)); do
	[[ -S $sock ]] && is_mounted "$mnt" && break
	if ! kill -0 "$daemon_pid" 2>/dev/null; then
		echo "demo.sh: classfsd did not start:" >&2
		cat "$work/classfsd.log" >&2
		exit 1
	fi
	sleep 0.1
done
if ! [[ -S $sock ]] || ! is_mounted "$mnt"; then
	echo "demo.sh: classfsd did not get ready in 10 s" >&2
	cat "$work/classfsd.log" >&2
	exit 1
fi
cat "$work/classfsd.log"

step "the class tree: disks hold partitions, input devices their interfaces"
cctl tree

step "lsblk and udevadm read it as /sys"
sys lsblk
sys lsblk -o NAME,MAJ:MIN,SIZE,RO,TYPE,MODEL,TRAN,ROTA
sys udevadm info /sys/class/block/sda1
sys udevadm info /sys/class/block/nvme0n1p1
sys udevadm info --attribute-walk /sys/class/input/event0

step "hotplug: a USB stick arrives and leaves, classctl monitor follows"
# from the next SEQNUM on, so no event is missed however late it subscribes
seq=$(cat "$mnt/kernel/uevent_seqnum")
"$classctl" --socket "$sock" monitor --since "$((seq + 1))" >"$work/monitor.out" 2>&1 &
monitor_pid=$!
cctl add block sdb --dev 8:16 --type disk --attr size=62521344 --attr removable=1 --attr ro=0
cctl add block sdb1 --parent sdb --dev 8:17 --type partition \
	--attr size=62519296 --attr start=2048 --attr partition=1 --attr ro=0
sys lsblk -o NAME,MAJ:MIN,RM,SIZE,TYPE
cctl rm block sdb
# wait for the four events (add, add, remove, remove) to reach the monitor
for ((i = 0; i < 50; i++)); do
	(($(grep -c '^SEQNUM=' "$work/monitor.out" || true) >= 4)) && break
	sleep 0.1
done
stop "$monitor_pid"
monitor_pid=
echo "\$ $classctl --socket $sock monitor --since $((seq + 1))"
cat "$work/monitor.out"

step "stop: classfsd unmounts and exits"
stop "$daemon_pid"
daemon_pid=
if is_mounted "$mnt"; then
	echo "demo.sh: $mnt is still mounted" >&2
	exit 1
fi
step "Python: a test's testbed, as root and as uid 65534 (examples/python-testbed.py)"
if ! ls "$build"/python/classfs/_classfs*.so >/dev/null 2>&1; then
	echo "demo.sh: $build has no Python extension (python3-dev for /usr/bin/python3?)" >&2
	exit 1
fi
# the package, the example and classfsd staged where every uid can read
# them (the clone may be in root's home, 0700), as the tests stage them
# shellcheck source=tests/stage.sh
source tests/stage.sh
chmod 0755 "$work"
mkdir -p "$work/py/classfs"
cp "$build"/python/classfs/*.py "$build"/python/classfs/_classfs*.so "$work/py/classfs/"
cp examples/python-testbed.py "$build"/libclassfs.so.0 "$work/py/"
chmod -R a+rX "$work/py"
staged_classfsd=$classfsd
cfs_stage "$work/stage" staged_classfsd >/dev/null
cfs_stage_dir=$work/stage
pyenv=(env PYTHONPATH="$work/py" LD_LIBRARY_PATH="$work/py" CLASSFSD="$staged_classfsd")
show "${pyenv[@]}" /usr/bin/python3 "$work/py/python-testbed.py"
printf '$ %s\n' "(as uid 65534) ${pyenv[*]} /usr/bin/python3 $work/py/python-testbed.py"
cfs_as_uid 65534 "${pyenv[@]}" /usr/bin/python3 "$work/py/python-testbed.py"

echo "done: nothing left mounted or running"
