#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# test-install.sh SOURCE_ROOT - install as a user does, for real: a build
# of SOURCE_ROOT with --prefix in a temporary directory, `meson install`
# (no DESTDIR: the paths built in are the installed ones), then with no
# LD_LIBRARY_PATH and no ldconfig run:
#   - classctl, classfsd and classfs-run start (their run path finds
#     libclassfs in the prefix's libdir), and the umockdev-run link in
#     libexec/classfs/umockdev says umockdev's version;
#   - Debian's /usr/bin/python3 imports classfs from the installed site
#     directory (PYTHONPATH naming it: a temporary prefix is not one
#     python3 searches) and its extension loads libclassfs the same way;
#   - as root, a classfs.Testbed of the installed package starts the
#     installed classfsd (its default path) and shows a device;
#   - for the default prefix /usr/local and for /usr, the site directory
#     the build chooses is one /usr/bin/python3 searches.
# Exit 77 (skipped, with the reason) without python3-dev.
set -uo pipefail
# shellcheck source=../lib.sh
source "$(dirname "$0")/../lib.sh"
src=$(realpath "${1:?usage: test-install.sh SOURCE_ROOT}")
py=/usr/bin/python3
if ! "$py" -c 'import sysconfig, os, sys; sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))'; then
	echo "SKIP: no Python.h for $py (python3-dev): the package is not built"
	exit 77
fi
tmp=$(mktemp -d /tmp/classfs-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

# the site directories /usr/bin/python3 searches, one a line
searched=$("$py" -c 'import sys; print("\n".join(sys.path))')
for p in /usr/local /usr; do
	d=$("$py" "$src/python/site-dir.py" "$p")
	if grep -qxF "$d" <<<"$searched"; then
		ok "prefix $p: the package goes to $d, which $py searches"
	else
		bad "prefix $p: the package goes to $d, which $py does not search"
	fi
done

unset LD_LIBRARY_PATH	# meson test points it at the build tree
echo "== meson setup --prefix $prefix, build, install"
if ! meson setup "$tmp/build" "$src" --prefix "$prefix" -Dwerror=false -Db_sanitize=none \
	>"$tmp/setup.log" 2>&1; then
	cat "$tmp/setup.log"
	bad "meson setup"
	exit 1
fi
if ! ninja -C "$tmp/build" >"$tmp/build.log" 2>&1; then
	tail -30 "$tmp/build.log"
	bad "build"
	exit 1
fi
if ! meson install -C "$tmp/build" --no-rebuild >"$tmp/install.log" 2>&1; then
	tail -30 "$tmp/install.log"
	bad "meson install"
	exit 1
fi
grep -q "ldconfig:" "$tmp/install.log" &&
	bad "ldconfig ran for a libdir ld.so does not search ($prefix)" ||
	ok "no ldconfig for a libdir ld.so does not search"

libdir=$(meson introspect --buildoptions "$tmp/build" |
	"$py" -c 'import json, sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"] == "libdir"))')
site=$(dirname "$(find "$prefix" -name '_classfs*.so' -path '*/classfs/*' | head -n1)")
site=${site%/classfs}
[[ -n $site && -f $site/classfs/__init__.py ]] && ok "the package is installed in $site" ||
	bad "no installed package under $prefix"
[[ $site == "$prefix/lib/python3."*/site-packages ]] &&
	ok "a prefix python3 does not search gets CPython's layout (lib/python3.X/site-packages)" ||
	bad "site directory $site"

for p in bin/classctl sbin/classfsd bin/classfs-run; do
	if out=$("$prefix/$p" --help 2>&1); then
		ok "$p runs (libclassfs from $(ldd "$prefix/$p" | awk '/libclassfs/ { print $3 }'))"
	else
		bad "$p: $out"
	fi
done
umd=$prefix/libexec/classfs/umockdev/umockdev-run
[[ $(readlink "$umd") == "$prefix/bin/classfs-run" ]] && out=$("$umd" --version 2>&1) &&
	[[ $out =~ ^[0-9]+\.[0-9]+\.[0-9]+$ && $out != "$("$prefix/bin/classfs-run" --version)" ]] &&
	ok "libexec/classfs/umockdev/umockdev-run links classfs-run and says umockdev's version ($out)" ||
	bad "libexec/classfs/umockdev/umockdev-run: $(ls -l "$umd" 2>&1): ${out:-}"
ldd "$prefix/bin/classctl" | grep -q "libclassfs.so.0 => $prefix/$libdir/" ||
	bad "classctl loads another libclassfs: $(ldd "$prefix/bin/classctl" | grep libclassfs)"

if out=$(cd / && PYTHONPATH=$site "$py" -c 'import classfs, classfs._classfs as c; print(c.__file__)' 2>&1); then
	ok "$py imports classfs from the install: $out"
else
	bad "$py -c 'import classfs' with PYTHONPATH=$site: $out"
fi

if ((EUID == 0)); then
	# the installed classfsd, found where the library was told it is
	out=$(cd / && env -u CLASSFSD PYTHONPATH="$site" "$py" -c '
import classfs
with classfs.Testbed() as tb:
    p = tb.add_device("block", "sdz", dev=(8, 240), devtype="disk")
    print("device", p, open(p + "/dev").read().strip())
' 2>&1) && grep -q "^device .*sdz 8:240$" <<<"$out" &&
		ok "a Testbed of the installed package, with the installed classfsd: $out" ||
		bad "a Testbed of the installed package: $out"
	out=$(env -u CLASSFSD "$prefix/bin/classfs-run" --sample -- cat /sys/class/block/sda/dev 2>&1) &&
		[[ $out == 8:0 ]] && ok "installed classfs-run runs the installed classfsd" ||
		bad "installed classfs-run: $out"
else
	echo "note: not root: no Testbed, no classfs-run"
fi
cfs_summary
