#!/bin/sh
# check-layers.sh STAMP DIR... [--users DIR...] - the build's include rules
# (README "Layout"); writes STAMP when they hold, else names each faulty
# line and fails the build.
#
# In the sources below every DIR (the library's layers: src/) and every
# user DIR (programs/, python/ and examples/: users of libclassfs.so), an
# #include may not name a file outside the including file's folder
# ("../../core/internal.h", "src/core/internal.h", <../core/internal.h>).
# Allowed with a folder: "classfs/NAME.h" and <classfs/NAME.h>, the public
# headers, and "classfs-internal/NAME.h", the in-library interface
# (src/include/classfs-internal/) - but that one only in a layer: a user
# DIR may not include it in any spelling, the library not exporting it.
# A layer reaches other layers through their public headers, the
# in-library interface and util.h, found on the include path its
# meson.build gives it.
set -eu
stamp=${1:?usage: check-layers.sh STAMP DIR... [--users DIR...]}
shift
lib=
users=
to=lib
for d in "$@"; do
	if [ "$d" = --users ]; then
		to=users
	elif [ ! -d "$d" ]; then
		echo "check-layers.sh: $d: not a directory" >&2
		exit 2
	elif [ $to = lib ]; then
		lib="$lib $d"
	else
		users="$users $d"
	fi
done

inc='[[:space:]]*#[[:space:]]*include[[:space:]]*'
# every #include line with a slash in the name, as FILE:LINE:TEXT
includes() {
	# shellcheck disable=SC2086 # the folders are words
	[ -z "$*" ] || grep -rnE "^$inc[\"<][^\">]*/" $* --include='*.c' --include='*.h' || true
}
outside=$( (includes $lib $users | grep -vE ":[0-9]+:$inc(\"classfs(-internal)?/[^/\"]*\"|<[^>]*>)" || true
	includes $lib $users | grep -E ":[0-9]+:$inc<[^>]*\.\./" || true) | sort)
internal=$(includes $users | grep -E ":[0-9]+:$inc[\"<][^\">]*classfs-internal/" | sort || true)
if [ -n "$outside" ]; then
	echo "check-layers.sh: an #include reaches outside its folder (use the layer's public" >&2
	echo "header, the in-library interface or util.h for what layers share):" >&2
	echo "$outside" >&2
fi
if [ -n "$internal" ]; then
	echo "check-layers.sh: a program, the Python extension or an example includes the" >&2
	echo "in-library interface (src/include/classfs-internal/), which libclassfs.so does" >&2
	echo "not export; use the public headers (<classfs/*.h>):" >&2
	echo "$internal" >&2
fi
[ -z "$outside" ] && [ -z "$internal" ] || exit 1
: >"$stamp"
