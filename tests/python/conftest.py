# SPDX-License-Identifier: LGPL-2.1-or-later
# The classfs package's own tests: each takes a fresh testbed from the
# package's pytest plugin (run-pytest.sh puts the build tree's package on
# sys.path and names the classfsd to start).
import atexit
import inspect
import os
import shutil
import subprocess
import tempfile

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


def _stage_for_other_uids():
    """As root: what a test hands another uid it runs - the package
    (PYTHONPATH), the libclassfs its run path ($ORIGIN/../..) names, and
    classfsd (CLASSFSD) - as copies every uid can read, the build tree
    being maybe out of their reach (/root is 0700).  Tests pass the
    environment on, so every uid's python3 imports the copy."""
    if os.geteuid() != 0:
        return
    import classfs
    stage = tempfile.mkdtemp(prefix="classfs-pytest.")
    atexit.register(shutil.rmtree, stage, True)
    os.chmod(stage, 0o755)
    pkg = os.path.dirname(os.path.abspath(classfs.__file__))
    shutil.copytree(pkg, os.path.join(stage, "build", "python", "classfs"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    lib = os.path.join(pkg, "..", "..", "libclassfs.so.0")
    if os.path.exists(lib):
        shutil.copy(os.path.realpath(lib), os.path.join(stage, "build", "libclassfs.so.0"))
    env = {"PYTHONPATH": os.path.join(stage, "build", "python")}
    daemon = os.environ.get("CLASSFSD")
    if daemon:
        # tests/stage.sh's cfs_stage: the program and the libraries of the build it loads
        out = subprocess.run(["bash", "-c", '. "$0" && v=$2 && cfs_stage "$1" v >/dev/null && echo "$v"',
                              STAGE_SH, os.path.join(stage, "daemon"), daemon],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"cannot stage {daemon}: {out.stderr.strip()}")
        env["CLASSFSD"] = out.stdout.strip()
    for d, _, files in os.walk(stage):
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o755)
    os.environ.update(env)


_stage_for_other_uids()
