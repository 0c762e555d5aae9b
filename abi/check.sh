#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# abi/check.sh LIBRARY [--update] - compare libclassfs's ABI (its exported
# symbols, and the types reachable from the public headers) with the
# committed baseline abi/libclassfs.abi, using libabigail's abidw and
# abidiff.  Any difference fails: a change of the ABI is made on purpose,
# by running with --update and committing the new baseline (README "ABI"
# says when the soname changes with it).  Exit 77 (skipped) when abidw is
# not installed (abigail-tools; ./check.sh installs it).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
lib=${1:?usage: abi/check.sh LIBRARY [--update]}
baseline=$here/libclassfs.abi

if ! command -v abidw >/dev/null || ! command -v abidiff >/dev/null; then
	echo "SKIP: abidw/abidiff not installed (apt-get install abigail-tools)"
	exit 77
fi
current=$(mktemp)
trap 'rm -f "$current"' EXIT
# the exported functions and the types they reach that the public headers
# define, nothing else: the in-library interface (src/include/
# classfs-internal/) and the layers' own types have no place in it.
# Locations stay (abidiff tells public types from private ones by the
# header that declares them); the build directory's absolute path goes.
abidw --no-corpus-path --headers-dir "$here/../include/classfs" --drop-private-types \
	--exported-interfaces-only "$lib" |
	sed -E "s/ comp-dir-path='[^']*'//" >"$current"

if [[ ${2:-} == --update ]]; then
	install -m 0644 "$current" "$baseline"
	echo "abi: baseline written: $baseline ($(grep -c '<elf-symbol' "$baseline") symbols)"
	exit 0
fi
if [[ ! -f $baseline ]]; then
	echo "FAIL: no baseline $baseline (run: abi/check.sh $lib --update)"
	exit 1
fi
rc=0
abidiff --headers-dir1 "$here/../include/classfs" \
	--headers-dir2 "$here/../include/classfs" "$baseline" "$current" || rc=$?
if ((rc == 0)); then
	echo "abi: matches the baseline ($(grep -c '<elf-symbol' "$baseline") symbols)"
	exit 0
fi
if ((rc & 12)); then
	# 8: symbols removed (incompatible); 4: any other change, additions or
	# a changed layout or signature, which abidiff leaves to us to judge
	echo "FAIL: the ABI differs from abi/libclassfs.abi (above)."
	echo "  Only additions: run abi/check.sh $lib --update and commit the baseline."
	echo "  A removed symbol, a changed signature or public struct layout is incompatible:"
	echo "  README \"ABI\" says when the soname changes with it."
else
	echo "FAIL: abidiff exited $rc"
fi
exit 1
