#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# as-uid.sh UID PROGRAM [ARG]... - run a test program of the build tree as
# UID (gid UID, no supplementary groups), with $CLASSFSD: both staged
# where UID can run them (tests/stage.sh: cfs_stage, cfs_as_uid).  Root
# only (77 else).
set -euo pipefail

if ((EUID != 0)); then
	echo "SKIP: switching to uid ${1:-?} needs root"
	exit 77
fi
uid=${1:?usage: as-uid.sh UID PROGRAM [ARG]...}
test_prog=${2:?usage: as-uid.sh UID PROGRAM [ARG]...}
shift 2
. "$(dirname "$0")/../stage.sh"
dir=$(mktemp -d /tmp/as-uid.XXXXXX)
trap 'rm -rf "$dir"' EXIT
chmod 0755 "$dir"
daemon=${CLASSFSD:?as-uid.sh: CLASSFSD not set}
cfs_stage "$dir/stage" test_prog daemon >/dev/null
cfs_stage_dir=$dir/stage
rc=0
CLASSFSD=$daemon cfs_as_uid "$uid" "$test_prog" "$@" || rc=$?
exit "$rc"
