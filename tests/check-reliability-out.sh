#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# check-reliability-out.sh SOURCE_ROOT - scripts/reliability.sh, as
# ./check.sh runs it, writes its tables beside the build (build/
# reliability.md) and leaves every tracked file as it was: a check run
# leaves the clone clean; docs/reliability.md changes only when asked
# (./check.sh --update-reliability).
set -uo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
root=${1:?usage: check-reliability-out.sh SOURCE_ROOT}
cd "$root" || exit 1
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "SKIP: $root is no git work tree (the tracked files are git's)"
	exit 77
fi
before=$(git status --porcelain --untracked-files=no; sha256sum docs/reliability.md)
bash scripts/reliability.sh >/dev/null
rc=$?
check "scripts/reliability.sh ran (exit $rc: 0, or 1 for a violation recorded)" [ "$rc" -le 1 ]
after=$(git status --porcelain --untracked-files=no; sha256sum docs/reliability.md)
check "no tracked file changed (docs/reliability.md included)" [ "$before" = "$after" ]
check "the tables are in build/reliability.md" grep -q '^# Reliability' build/reliability.md
check "./check.sh runs it with build/reliability.md" \
	grep -q '^[[:space:]]*bash scripts/reliability.sh build/reliability.md' check.sh
cfs_summary
