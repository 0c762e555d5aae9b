# SPDX-License-Identifier: LGPL-2.1-or-later
"""What a device's events carry and what they cost: the udev database's
properties in the events a pyudev.Monitor receives, as udevd broadcasts
them, and an add_device() that returns as soon as the environment
applied its event, with an event the daemon sends at once; a testbed
made by uid 0 of a container's user namespace."""
import os
import shutil
import subprocess
import sys
import time

import pyudev
import pytest

from conftest import as_uid

import classfs

MOUSE_RECORD = ("P: /devices/virtual/input/mouse7\n"
                "N: input/mouse7\n"
                "E: SUBSYSTEM=input\n"
                "E: ID_MODEL=Recorded_Mouse\n"
                "E: ID_INPUT_MOUSE=1\n"
                "A: dev=13:39\n")


def _udev_monitor():
    mon = pyudev.Monitor.from_netlink(pyudev.Context(), source="udev")
    mon.filter_by("input")
    mon.start()
    return mon


def test_monitor_add_event_of_add_device_carries_its_properties(testbed):
    mon = _udev_monitor()
    path = testbed.add_device("input", "event3", dev=(13, 67),
                              properties={"ID_MODEL": "Fake_Mouse", "ID_INPUT_MOUSE": "1"})
    dev = mon.poll(timeout=5)
    assert dev is not None and dev.action == "add" and dev.sys_path == path
    assert dev.properties["ID_MODEL"] == "Fake_Mouse"
    assert dev.properties["ID_INPUT_MOUSE"] == "1"
    assert dev.device_node == "/dev/event3"
    # the database entry says the same as the event
    again = pyudev.Devices.from_sys_path(pyudev.Context(), path)
    assert again.properties["ID_MODEL"] == "Fake_Mouse"


def test_monitor_add_event_of_a_record_carries_its_e_lines(testbed):
    mon = _udev_monitor()
    (path,) = testbed.load_string(MOUSE_RECORD)
    dev = mon.poll(timeout=5)
    assert dev is not None and dev.action == "add" and dev.sys_path == path
    assert dev.properties["ID_MODEL"] == "Recorded_Mouse"
    assert dev.properties["ID_INPUT_MOUSE"] == "1"
    assert dev.device_node == "/dev/input/mouse7"


def test_monitor_change_event_carries_the_database_entry_as_it_is_now(testbed):
    path = testbed.add_device("input", "event4", dev=(13, 68), properties={"ID_MODEL": "Before"})
    mon = _udev_monitor()
    testbed.set_property(path, "ID_MODEL", "After")
    testbed.set_property(path, "ID_SEAT", "seat1")
    testbed.uevent(path, "change")
    dev = mon.poll(timeout=5)
    assert dev is not None and dev.action == "change"
    assert dev.properties["ID_MODEL"] == "After" and dev.properties["ID_SEAT"] == "seat1"
    # the kernel's own keys come once, from the event
    assert dev.properties["DEVNAME"] == "/dev/event4"


def test_add_device_returns_with_its_node_and_database_entry(testbed):
    for i in range(50):
        path = testbed.add_device("input", f"event{100 + i}", dev=(13, 100 + i),
                                  properties={"ID_SERIAL": f"fake_{i}"})
        assert os.path.exists(f"/dev/event{100 + i}")
        assert testbed.get_property(path, "ID_SERIAL") == f"fake_{i}"


def test_a_subscriber_gets_an_event_once_its_request_is_done(testbed):
    # Each add_device() waits for its own event: the daemon may gather the
    # events of a request still running into one message, but must not
    # hold back the last one (it waited 0.5 ms for more, every time)
    path = testbed.add_device("input", "event5", dev=(13, 69))
    cls, name = testbed.identity(path)
    client = classfs._classfs.Client(testbed.socket)
    try:
        with testbed.monitor() as mon:
            times = []
            for _ in range(100):
                t = time.perf_counter()
                client.trigger(cls, name, "change", None)
                ev = mon.poll(5)
                times.append(time.perf_counter() - t)
                assert ev is not None and ev.action == "change" and ev.sys_path == path
    finally:
        client.close()
    assert min(times) < 0.0005, f"fastest event took {min(times) * 1e3:.3f} ms"


CONTAINER_ROOT_SCRIPT = """
import os, sys, pyudev, classfs
assert os.geteuid() == 0
with classfs.Testbed() as tb:
    path = tb.add_device("input", "event9", dev=(13, 73), properties={"ID_MODEL": "In_Userns"})
    dev = pyudev.Devices.from_device_file(pyudev.Context(), "/dev/event9")
    assert dev.sys_path == path and dev.properties["ID_MODEL"] == "In_Userns", dict(dev.properties)
    assert tb.get_attribute(path, "dev") == "13:73\\n"
print("ok")
"""


def test_root_of_a_containers_user_namespace_gets_a_testbed():
    # uid 0 in a user namespace other than the initial one may not mknod()
    # a device: the testbed takes the way of a caller who is not root
    if classfs.in_environment():
        pytest.skip("joined an environment: its /dev has no /dev/fuse for another")
    if not shutil.which("unshare"):
        pytest.skip("no unshare(1)")
    cmd = ["unshare", "-U", "--map-root-user", sys.executable, "-c", CONTAINER_ROOT_SCRIPT]
    if os.geteuid() == 0:
        cmd = as_uid(65534, cmd)
    env = {k: v for k, v in os.environ.items() if k != "CLASSFS_SOCKET"}
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    if "unshare failed" in out.stderr:
        pytest.skip(f"user namespaces refused here: {out.stderr.strip()}")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr
