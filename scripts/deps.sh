# shellcheck shell=bash disable=SC2034  # the lists are used by the sourcing scripts
# Sourced by demo.sh and check.sh: install the Debian packages classfs needs,
# and only those that are missing (so a prepared machine makes no apt call).

# build: compiler, build system, libumockdev (bench reference), libfuse3,
# json-c (JSON output of the printers and classctl);
# the real tools the tests run against the mount: lsblk, udevadm, systool
CLASSFS_BUILD_DEPS=(build-essential meson ninja-build pkg-config
                    libumockdev-dev umockdev libfuse3-dev fuse3
                    libjson-c-dev util-linux udev sysfsutils libpcap-dev)
# demo.sh's Python part: Debian's python3 headers (the extension is built
# only with them) and pyudev (examples/python-testbed.py)
CLASSFS_DEMO_DEPS=(python3-dev python3-pyudev)
# check: clang and its sanitizer runtimes (ThreadSanitizer build, libFuzzer);
# graphviz (the DOT printer's output is checked by rendering it); libudev
# (a libudev program runs under classfs-run) and a static busybox (a
# statically linked program sees the tree too); libabigail's abidw and
# abidiff (the ABI check against abi/libclassfs.abi); Debian's python3
# headers, pytest and pyudev (the Python package and its tests); PyGObject
# with GUdev and dbus-daemon (a suite shaped as device daemons' umockdev
# suites: GUdev, a private D-Bus); e2fsprogs's chattr and lsattr (an
# immutable file through the mount, test-fs-writable); evtest and
# evemu-tools (real programs reading an emulated event node); usbutils
# (lsusb -v, through libusb-1.0, reads a USB device whose usbdevfs node
# answers from a usbmon capture, test-nodes.sh)
CLASSFS_CHECK_DEPS=(clang libclang-rt-14-dev graphviz libudev-dev busybox-static
                    abigail-tools python3-dev python3-pytest python3-pyudev
                    python3-gi gir1.2-gudev-1.0 dbus-daemon e2fsprogs
                    evtest evemu-tools usbutils)

# classfs_install_missing PKG... - apt-get install the PKGs not yet installed
classfs_install_missing() {
	local pkg missing=()
	if ! command -v dpkg-query >/dev/null; then
		echo "deps: not a Debian system; install by hand: $*" >&2
		return 0
	fi
	for pkg in "$@"; do
		# "installed" only when fully installed (not "config-files" etc.)
		[[ "$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null)" == installed ]] ||
			missing+=("$pkg")
	done
	((${#missing[@]})) || return 0
	echo "deps: installing ${missing[*]}"
	local sudo=()
	((EUID == 0)) || sudo=(sudo)
	export DEBIAN_FRONTEND=noninteractive
	"${sudo[@]}" apt-get update -q
	"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
}
