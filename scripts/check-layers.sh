#!/bin/sh
# check-layers.sh STAMP DIR... - refuse, in the sources below each DIR
# (src/, and python/: the extension is a user of the library), an
# #include that names a file outside the including file's folder:
# "../../core/internal.h", "src/core/bytes.h", <../core/internal.h>.
# "classfs/NAME.h" and <classfs/NAME.h>, the public headers, are allowed.
# A layer reaches other layers through their public headers and util.h,
# found on the include path its meson.build gives it (README "Layout").
# Run by every build of the library; the build fails when it does.
set -eu
stamp=$1
shift
inc='[[:space:]]*#[[:space:]]*include[[:space:]]*'
bad=$( (grep -rnE "^$inc\"[^\"]*/" "$@" --include='*.c' --include='*.h' |
	grep -vE ":[0-9]+:$inc\"classfs/[^/\"]*\"" || true
	grep -rnE "^$inc<[^>]*\.\./" "$@" --include='*.c' --include='*.h' || true) | sort)
if [ -n "$bad" ]; then
	echo "check-layers.sh: an #include reaches outside its folder (use the layer's public" >&2
	echo "header, or util.h for what layers share):" >&2
	echo "$bad" >&2
	exit 1
fi
: >"$stamp"
