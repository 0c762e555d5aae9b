# SPDX-License-Identifier: LGPL-2.1-or-later
# The classfs package's own tests: each takes a fresh testbed from the
# package's pytest plugin (run-pytest.sh puts the build tree's package on
# sys.path and names the classfsd to start).
import os

import pytest

pytest_plugins = ["classfs.pytest_plugin"]

SAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "data", "sample.umockdev")


@pytest.fixture
def sample_record():
    return SAMPLE


STAGE_SH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "stage.sh")


def as_uid(uid, cmd, gid=None):
    """The command that runs `cmd` (a list) as `uid` (and `gid`, default
    `uid`; no supplementary groups): through tests/stage.sh's cfs_as_uid,
    the one way the tests switch uid (the uid-switch test fails on any
    other).  A system program (python3, unshare) runs as it is; a program
    of the build tree from a copy the uid can reach, staged in
    $cfs_stage_dir (set it in the environment)."""
    ids = f"{uid}:{uid if gid is None else gid}"
    return ["bash", "-c", '. "$0" && cfs_as_uid "$@"', STAGE_SH, ids] + list(cmd)
