#!/bin/sh
# check-layers.sh SRC_DIR STAMP - refuse an #include "..." in SRC_DIR's
# sources that names a file outside the including file's folder
# ("../../core/internal.h", "src/core/bytes.h"; "classfs/NAME.h", a
# public header, is allowed): a layer reaches other
# layers through their public headers (<classfs/...>) and util.h, found on
# the include path its meson.build gives it (README "Layout").  Run by
# every build; the build fails when it does.
set -eu
src=$1 stamp=$2
bad=$(grep -rnE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' "$src" \
	--include='*.c' --include='*.h' | grep -v '#[[:space:]]*include[[:space:]]*"classfs/' || true)
if [ -n "$bad" ]; then
	echo "check-layers.sh: an #include reaches outside its folder (use the layer's public" >&2
	echo "header, or util.h for what layers share):" >&2
	echo "$bad" >&2
	exit 1
fi
: >"$stamp"
