#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-harness-filter.sh PROGRAM - a test program of tests/harness.h runs
# the tests its arguments name, and a name that matches none of them is
# an error (exit 2, naming it), not a run of nothing that passes: a test
# renamed must not leave a meson test that names it green and empty.
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
prog=${1:?usage: check-harness-filter.sh PROGRAM}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$prog" no_such_test >"$tmp/out" 2>"$tmp/err"
rc=$?
check "a name that matches nothing exits 2 (exit $rc)" [ "$rc" = 2 ]
check "  saying which" grep -q 'no test named "no_such_test"' "$tmp/err"
check "  and runs no test" [ ! -s "$tmp/out" ]

"$prog" >"$tmp/all" 2>&1
first=$(sed -n 's/^ok   //p' "$tmp/all" | head -1)
check "the program has tests ($first first)" [ -n "$first" ]
"$prog" "$first" no_such_test >"$tmp/out" 2>"$tmp/err"
rc=$?
check "one name of two matching nothing fails too (exit $rc)" [ "$rc" = 2 ]
"$prog" "$first" >"$tmp/out" 2>&1
rc=$?
check "a name that matches runs that test only" \
	[ "$rc: $(tail -1 "$tmp/out")" = "0: 1 passed, 0 failed, 0 skipped" ]
cfs_summary
