# SPDX-License-Identifier: LGPL-2.1-or-later
# The classfs package's own tests: each takes a fresh testbed from the
# package's pytest plugin (run-pytest.sh puts the build tree's package on
# sys.path and names the classfsd to start).
import inspect
import os
import subprocess

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


def _userns_refusal():
    """(why, every_test): why this process may not make a user namespace
    (None when it may), and whether no test can run without one.  The
    kernel refuses one to a process in a chroot, root included (as in the
    build chroots that run distributions' test suites); a setting may
    refuse it to other uids, whose Testbed then says which."""
    try:
        p = subprocess.run(["unshare", "-U", "true"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"unshare -U: {e}", False
    if p.returncode == 0:
        return None, False
    why = p.stderr.strip() or f"unshare -U exited {p.returncode}"
    if os.geteuid() == 0 and "not permitted" in why:
        why += " (a chroot? the kernel refuses a user namespace there even to root)"
    if os.geteuid() == 0:
        return why, False
    import classfs
    try:
        classfs.Testbed().close()
    except PermissionError as e:
        return str(e), True     # in the Testbed's own words
    return why, False


def pytest_collection_modifyitems(config, items):
    """Where no user namespace may be made, the tests that need one skip
    with the reason, and pass everywhere else: those that run unshare,
    and every test when this uid's Testbed needs one (not root's)."""
    why, every_test = _userns_refusal()
    if why is None:
        return
    for item in items:
        fn = getattr(item, "function", None)
        try:
            runs_unshare = fn is not None and '"unshare"' in inspect.getsource(fn)
        except (OSError, TypeError):
            runs_unshare = False
        if every_test or runs_unshare:
            item.add_marker(pytest.mark.skip(
                reason=f"no user namespace for uid {os.geteuid()} here: {why}"))
