#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# as-uid.sh UID PROGRAM [ARG]... - run a test program of the build tree as
# UID (gid UID, no supplementary groups), with $CLASSFSD: both staged
# where UID can run them (tests/stage.sh: cfs_stage, cfs_as_uid), with the
# sample machine ($CLASSFS_SAMPLE, cfs_as_uid) and the records of
# tests/record/data ($CLASSFS_TEST_RECORDS) copied there too.  Root only
# (77 else).
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
install -d -m 0755 "$dir/stage/records"
install -m 0644 "$(dirname "$0")"/../record/data/*.umockdev "$dir/stage/records/"
rc=0
CLASSFSD=$daemon CLASSFS_TEST_RECORDS=$dir/stage/records cfs_as_uid "$uid" "$test_prog" "$@" || rc=$?
exit "$rc"
