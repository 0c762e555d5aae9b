#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# as-uid.sh UID PROGRAM [ARG]... - run a test program of the build tree as
# UID (setpriv; gid UID, no supplementary groups), with $CLASSFSD: both
# staged by tests/stage.sh where UID can run them.  Root only (77 else).
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
rc=0
setpriv --reuid="$uid" --regid="$uid" --clear-groups env CLASSFSD="$daemon" "$test_prog" "$@" || rc=$?
exit "$rc"
