#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# stderr-only.sh PATTERNS -- CMD [ARG]...
# stderr-only.sh PATTERNS --log FILE
#
# A warning nobody expects is a bug to look at, not noise: CMD runs with
# its stderr kept (and shown once it exits); every line of it
# must match one of the extended regular expressions of the file
# PATTERNS (one a line; empty lines and lines starting with '#' aside).
# A line none matches is printed, and fails the test (exit 1) even when
# CMD succeeded; else CMD's status is ours (77: skipped).  --log FILE
# checks a file of stderr lines some test collected instead.
set -uo pipefail
if (($# < 3)) || [[ $2 != -- && $2 != --log ]]; then
	echo "usage: $0 PATTERNS -- CMD [ARG]... | PATTERNS --log FILE" >&2
	exit 2
fi
pats=$1 mode=$2
shift 2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
grep -vE '^(#|$)' "$pats" >"$work/patterns" || true
rc=0
if [[ $mode == --log ]]; then
	cp "$1" "$work/stderr" || exit 1
else
	"$@" 2>"$work/stderr" || rc=$?
	cat "$work/stderr" >&2
fi
# (no pattern: every line is unexpected)
if [[ -s $work/patterns ]]; then
	grep -vE -f "$work/patterns" "$work/stderr" >"$work/unexpected"
else
	cp "$work/stderr" "$work/unexpected"
fi
if [[ -s $work/unexpected ]]; then
	echo "FAIL: unexpected on stderr (not in ${pats##*/tests/}):"
	sed 's/^/  | /' "$work/unexpected"
	exit 1
fi
exit "$rc"
