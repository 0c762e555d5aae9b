#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# ldconfig.sh LIBDIR - run by `meson install` (not with DESTDIR: a staged
# install is a package's, whose own scripts run ldconfig): refresh ld.so's
# cache when LIBDIR is one of the directories it caches (/usr/local/lib/
# x86_64-linux-gnu on Debian), so that a program linked against
# libclassfs there runs at once, as after `make install` of a library.
# The installed programs and the Python extension need no cache (their
# run path names LIBDIR); a LIBDIR ld.so does not search is left alone.
libdir=$1
real=$(realpath "$libdir" 2>/dev/null) || exit 0
command -v ldconfig >/dev/null 2>&1 || PATH=$PATH:/sbin:/usr/sbin
cached=0
for d in $(ldconfig -v -N -X 2>/dev/null | sed -n 's|^\(/[^:]*\):.*|\1|p'); do
	[ "$(realpath "$d" 2>/dev/null)" = "$real" ] && cached=1
done
[ "$cached" = 1 ] || exit 0
if [ "$(id -u)" != 0 ]; then
	echo "ldconfig.sh: not root: run ldconfig as root for programs linked against $libdir/libclassfs.so.0"
	exit 0
fi
echo "ldconfig: refreshing ld.so's cache for $libdir"
ldconfig
