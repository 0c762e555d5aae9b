#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# abi/exports.sh LIBRARY INSTALLED_HEADER... - libclassfs.so exports the
# public API and nothing else: each function it exports is declared
# CLASSFS_PUBLIC in a header that is installed (the arguments after the
# library, as meson.build installs them), and each function so declared
# is exported.  The in-library interface (src/include/classfs-internal/:
# view plumbing, the core's value storage, test hooks) is not, whatever
# its name.  Runs in every build (abi/check.sh, the full ABI comparison,
# needs libabigail and plain builds).
set -euo pipefail
lib=${1:?usage: abi/exports.sh LIBRARY INSTALLED_HEADER...}
shift
(($# > 0)) || { echo "usage: abi/exports.sh LIBRARY INSTALLED_HEADER..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
internal=$here/../src/include/classfs-internal

# the functions a set of headers declares CLASSFS_PUBLIC (a declaration may
# span lines: each header is read as one line)
declared() {
	local h
	for h in "$@"; do
		tr '\n' ' ' <"$h" | grep -oE 'CLASSFS_PUBLIC[^;(]*[^[:alnum:]_](classfs_[[:alnum:]_]+)[[:space:]]*\(' |
			grep -oE 'classfs_[[:alnum:]_]+[[:space:]]*\($' | tr -d '( ' || true
	done | sort -u
}
# the functions an in-library header declares, CLASSFS_PUBLIC or not
internal_names() {
	cat "$internal"/*.h | tr '\n' ' ' | sed -E 's|/\*([^*]\|\*+[^*/])*\*+/||g' |
		grep -oE '[^[:alnum:]_](classfs_[[:alnum:]_]+)[[:space:]]*\(' |
		grep -oE 'classfs_[[:alnum:]_]+' | sort -u || true
}

exported=$(nm -D --defined-only "$lib" | awk '$2 == "T" || $2 == "W" { sub(/@.*/, "", $3); print $3 }' | sort -u)
public=$(declared "$@")
rc=0
extra=$(comm -23 <(echo "$exported") <(echo "$public"))
missing=$(comm -13 <(echo "$exported") <(echo "$public"))
leaked=$(comm -12 <(echo "$exported") <(internal_names))
if [[ -n $extra ]]; then
	echo "FAIL: exported, but declared CLASSFS_PUBLIC in no installed header:"
	echo "$extra" | sed 's/^/  /'
	rc=1
fi
if [[ -n $leaked ]]; then
	echo "FAIL: exported, but part of the in-library interface (src/include/classfs-internal/):"
	echo "$leaked" | sed 's/^/  /'
	rc=1
fi
if [[ -n $missing ]]; then
	echo "FAIL: declared CLASSFS_PUBLIC in an installed header, but not exported:"
	echo "$missing" | sed 's/^/  /'
	rc=1
fi
((rc == 0)) && echo "ok: $(echo "$exported" | wc -l) exported functions, each declared in an installed header, none of the in-library interface"
exit $rc
