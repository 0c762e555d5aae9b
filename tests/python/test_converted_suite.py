# SPDX-License-Identifier: LGPL-2.1-or-later
"""A suite written for umockdev and moved by changing its import
(suite_power_daemon.py) passes started plainly and under classfs-run,
as whichever uid runs this file."""
import os
import subprocess
import sys

import pytest

SUITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "suite_power_daemon.py")


def _needs_gudev_and_dbus():
    probe = subprocess.run([sys.executable, "-c", "import gi; gi.require_version('GUdev', '1.0');"
                            " from gi.repository import GUdev"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("PyGObject with GUdev is missing (python3-gi, gir1.2-gudev-1.0)")
    if not any(os.access(os.path.join(d, "dbus-daemon"), os.X_OK)
               for d in os.environ.get("PATH", "/usr/bin").split(":")):
        pytest.skip("dbus-daemon is missing")


def _run(argv):
    p = subprocess.run(argv, capture_output=True, text=True, timeout=240, cwd="/tmp")
    out = p.stdout + p.stderr
    assert p.returncode == 0, out
    assert "Ran 3 tests" in out and "\nOK" in out, out


def test_started_plainly():
    _needs_gudev_and_dbus()
    _run([sys.executable, SUITE])


def test_started_under_classfs_run():
    _needs_gudev_and_dbus()
    run = os.environ.get("CLASSFS_RUN")
    if not run:
        pytest.skip("CLASSFS_RUN does not name classfs-run")
    if os.environ.get("CLASSFS_SOCKET"):
        pytest.skip("inside classfs-run already: test_started_plainly joins it")
    _run([run, "--layout", "devices", "--", sys.executable, SUITE])
