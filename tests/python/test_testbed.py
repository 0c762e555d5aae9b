# SPDX-License-Identifier: LGPL-2.1-or-later
"""classfs.Testbed as device-handling test suites use it: fake devices
found through pyudev, /dev nodes, properties, attribute changes, events
seen by a pyudev.Monitor, records; errors that change nothing."""
import errno
import os
import shutil
import subprocess
import tempfile
import time

import pyudev
import pytest

import classfs


def add_disk(tb):
    host = tb.add_device("pci", "0000:00:17.0", attributes={"vendor": "0x8086\n"},
                         properties={"PCI_CLASS": "10601", "DRIVER": "ahci"})
    sda = tb.add_device("block", "sda", parent=host, dev=(8, 0), devtype="disk",
                        attributes={"size": "1000215216\n", "removable": "0\n"},
                        properties={"ID_MODEL": "Fake_Disk", "ID_SERIAL": "FAKE123"})
    parts = [tb.add_device("block", f"sda{i}", parent=sda, dev=(8, i), devtype="partition",
                           attributes={"partition": f"{i}\n", "start": f"{2048 * i}\n"})
             for i in (1, 2)]
    return host, sda, parts


def test_pci_and_usb_devices_with_modaliases_through_pyudev(testbed):
    alias = "pci:v00008086d00002922sv00001028sd0000020Dbc01sc06i01"
    pci = testbed.add_device("pci", "0000:00:1f.2", attributes={"vendor": "0x8086\n",
                             "modalias": alias + "\n"}, properties={"MODALIAS": alias})
    usb = testbed.add_device("usb", "1-1", attributes={"idVendor": "046d\n", "idProduct": "c52b\n"},
                             properties={"MODALIAS": "usb:v046DpC52Bd1211dc00dsc00dp00",
                                         "PRODUCT": "46d/c52b/1211", "ID_VENDOR": "Logitech"},
                             dev=(189, 0), devtype="usb_device", node="bus/usb/001/001")
    assert pci == "/sys/devices/0000:00:1f.2" and usb == "/sys/devices/1-1"
    ctx = pyudev.Context()
    found = {d.sys_path: d for d in ctx.list_devices(subsystem="pci")}
    assert found[pci].properties["MODALIAS"] == alias
    assert found[pci].attributes.asstring("vendor") == "0x8086"
    dev = pyudev.Devices.from_sys_path(ctx, usb)
    assert dev.subsystem == "usb" and dev.device_type == "usb_device"
    assert dev.properties["MODALIAS"].startswith("usb:v046DpC52B")
    assert dev.properties["ID_VENDOR"] == "Logitech"
    assert dev.device_node == "/dev/bus/usb/001/001"
    assert [d.sys_path for d in ctx.list_devices(MODALIAS="usb:*")] == [usb]


def test_disk_with_nested_partitions_and_find_parent(testbed):
    host, sda, (sda1, sda2) = add_disk(testbed)
    assert sda1 == sda + "/sda1"
    ctx = pyudev.Context()
    part = pyudev.Devices.from_sys_path(ctx, sda2)
    assert part.device_type == "partition"
    disk = part.find_parent("block", "disk")
    assert disk.sys_path == sda and disk.device_node == "/dev/sda"
    assert part.find_parent("pci").sys_path == host
    assert sorted(d.sys_name for d in ctx.list_devices(subsystem="block", DEVTYPE="partition")) \
        == ["sda1", "sda2"]
    assert sorted(c.sys_name for c in disk.children if c.device_type == "partition") \
        == ["sda1", "sda2"]


def test_properties(testbed):
    _, sda, _ = add_disk(testbed)
    dev = pyudev.Devices.from_sys_path(pyudev.Context(), sda)
    assert dev.properties["ID_MODEL"] == "Fake_Disk" and dev.is_initialized
    assert testbed.get_property(sda, "ID_SERIAL") == "FAKE123"
    assert testbed.get_property(sda, "DEVTYPE") == "disk"
    assert testbed.get_property(sda, "NOPE") is None
    testbed.set_property(sda, "ID_FS_TYPE", "ext4")
    testbed.set_property(sda, "ID_MODEL", "Other")
    dev = pyudev.Devices.from_sys_path(pyudev.Context(), sda)
    assert dev.properties["ID_FS_TYPE"] == "ext4" and dev.properties["ID_MODEL"] == "Other"
    with pytest.raises(FileNotFoundError):
        testbed.set_property(sda + "/nope", "ID_X", "1")
    with pytest.raises(ValueError):
        testbed.set_property(sda, "BAD=KEY", "1")


def test_dev_nodes_found_by_device_file(testbed):
    _, sda, (sda1, _) = add_disk(testbed)
    tty = testbed.add_device("tty", "ttyUSB0", dev="188:0", properties={"ID_BUS": "usb"})
    st = os.stat("/dev/sda1")
    assert (os.major(st.st_rdev), os.minor(st.st_rdev)) == (8, 1)
    assert os.path.exists("/dev/ttyUSB0") and not os.path.exists("/dev/ttyUSB1")
    ctx = pyudev.Context()
    assert pyudev.Devices.from_device_file(ctx, "/dev/sda1").sys_path == sda1
    dev = pyudev.Devices.from_device_file(ctx, "/dev/ttyUSB0")
    assert dev.sys_path == tty and dev.properties["ID_BUS"] == "usb"
    assert pyudev.Devices.from_device_number(ctx, "block", os.makedev(8, 0)).sys_path == sda


def test_attribute_changes_are_seen_in_sys(testbed):
    _, sda, _ = add_disk(testbed)
    assert testbed.get_attribute(sda, "size") == "1000215216\n"
    testbed.set_attribute(sda, "size", "42\n")
    with open(sda + "/size") as f:
        assert f.read() == "42\n"
    assert pyudev.Devices.from_sys_path(pyudev.Context(), sda).attributes.asint("size") == 42
    assert testbed.get_attribute(sda, "size", binary=True) == b"42\n"
    with pytest.raises(FileNotFoundError):
        testbed.get_attribute(sda, "nope")


def test_set_attribute_makes_a_missing_one(testbed):
    _, sda, _ = add_disk(testbed)
    testbed.set_attribute(sda, "queue/rotational", "0\n")
    testbed.set_attribute(sda, "firmware", b"\x00\xff", binary=True)
    testbed.set_attribute_link(sda, "holder", "../sda1")
    with open(sda + "/queue/rotational") as f:
        assert f.read() == "0\n"
    with open(sda + "/firmware", "rb") as f:
        assert f.read() == b"\x00\xff"
    assert os.readlink(sda + "/holder") == "../sda1"
    assert testbed.get_attribute(sda, "queue/rotational") == "0\n"
    assert pyudev.Devices.from_sys_path(pyudev.Context(), sda).attributes.asint(
        "queue/rotational") == 0
    testbed.set_attribute(sda, "ro", 0)
    saved = testbed.save(sda).splitlines()
    assert "A: ro=0" in saved and "L: holder=../sda1" in saved
    # a device loaded from a record, and a second write of a made one
    (tty,) = testbed.load_string("P: /devices/platform/serial8250/tty/ttyS5\n"
                                 "N: ttyS5\nE: SUBSYSTEM=tty\nA: dev=4:69\n")
    testbed.set_attribute(tty, "close_delay", 50)
    testbed.set_attribute(tty, "close_delay", 60)
    with open(tty + "/close_delay") as f:
        assert f.read() == "60"
    assert "A: close_delay=60" in testbed.save(tty).splitlines()
    # a bad path, a link's path taken: refused, nothing made
    with pytest.raises(OSError) as e:
        testbed.set_attribute(sda, "a/../../x", "1")
    assert e.value.errno == errno.EINVAL
    with pytest.raises(FileExistsError):
        testbed.set_attribute_link(sda, "size", "x")
    assert not os.path.exists(sda + "/a") and testbed.get_attribute(sda, "size") == "1000215216\n"


def _received(mon, n):
    out = []
    while len(out) < n:
        dev = mon.poll(timeout=5)
        assert dev is not None, f"only {out} received"
        out.append((dev.action, dev.sys_path, dev.sequence_number))
    return out


def test_uevent_add_and_remove_seen_by_a_pyudev_monitor_in_order(testbed):
    ctx = pyudev.Context()
    mon = pyudev.Monitor.from_netlink(ctx)
    mon.filter_by("block")
    mon.start()
    _, sda, (sda1, sda2) = add_disk(testbed)
    testbed.uevent(sda, "change")
    testbed.remove_device(sda)
    got = _received(mon, 7)
    assert [(a, p) for a, p, _ in got] == [
        ("add", sda), ("add", sda1), ("add", sda2), ("change", sda),
        ("remove", sda2), ("remove", sda1), ("remove", sda)]
    seqnums = [s for _, _, s in got]
    assert seqnums == sorted(seqnums)
    assert not os.path.exists(sda) and not os.path.exists("/dev/sda1")


def test_events_of_the_testbed_in_seqnum_order(testbed):
    with testbed.monitor() as m:
        _, sda, _ = add_disk(testbed)
        testbed.uevent(sda, "change", REASON="test")
        events = list(m.events(0.5))
    assert [e.action for e in events] == ["add"] * 4 + ["change"]
    assert [e.seqnum for e in events] == sorted(e.seqnum for e in events)
    assert events[-1].properties["SYNTH_ARG_REASON"] == "test"
    assert events[1].sys_path == sda


def test_records_from_strings_and_files(testbed, tmp_path, sample_record):
    paths = testbed.load_string("P: /devices/platform/serial8250/tty/ttyS5\n"
                                "N: ttyS5\nE: SUBSYSTEM=tty\nE: ID_TEST=1\nA: dev=4:69\n")
    assert paths == ["/sys/devices/platform/serial8250/tty/ttyS5"]
    dev = pyudev.Devices.from_device_file(pyudev.Context(), "/dev/ttyS5")
    assert dev.properties["ID_TEST"] == "1"
    f = tmp_path / "one.umockdev"
    f.write_text("P: /devices/virtual/misc/fuse\nN: fuse\nE: SUBSYSTEM=misc\nA: dev=10:229\n")
    testbed.load(f)
    assert os.path.exists("/dev/fuse") and os.path.isdir("/sys/devices/virtual/misc/fuse")


def test_the_sample_machine_from_its_record_file(testbed, sample_record):
    paths = testbed.load(sample_record)
    assert len(paths) == 56 and all(os.path.exists(p) for p in paths)
    ctx = pyudev.Context()
    disks = [d for d in ctx.list_devices(subsystem="block", DEVTYPE="disk")]
    assert disks and all(d.is_initialized for d in disks)
    with pytest.raises(FileExistsError, match=r"sample\.umockdev:\d+: device .* already"):
        testbed.load(sample_record)


def test_bad_records_name_file_and_line_and_change_nothing(testbed, tmp_path):
    f = tmp_path / "bad.umockdev"
    f.write_text("P: /devices/virtual/misc/good\nE: SUBSYSTEM=misc\n\nP: /devices/x\nQ: what\n")
    with pytest.raises(ValueError, match=r"bad\.umockdev:5"):
        testbed.load(f)
    assert not os.path.exists("/sys/devices/virtual/misc/good")
    with pytest.raises(ValueError, match="<string>"):
        testbed.load_string("garbage\n")


def test_errors_raise_and_change_nothing(testbed):
    sda = testbed.add_device("block", "sda", dev=(8, 0), devtype="disk")
    with pytest.raises(FileExistsError):
        testbed.add_device("block", "sda", dev=(8, 16))
    with pytest.raises(FileNotFoundError):
        testbed.remove_device("/sys/devices/virtual/block/sdz")
    with pytest.raises(FileNotFoundError):
        testbed.add_device("block", "sdb1", parent="/sys/devices/virtual/block/sdb")
    with pytest.raises(ValueError):
        testbed.add_device("block", "a/b")
    with pytest.raises(ValueError):
        testbed.uevent(sda, "explode")
    st = os.stat("/dev/sda")
    assert os.minor(st.st_rdev) == 0 and not os.path.exists("/dev/sdb1")


def test_run_and_popen_run_inside(testbed):
    _, sda, _ = add_disk(testbed)
    out = testbed.run(["cat", sda + "/dev"], capture_output=True, text=True, check=True)
    assert out.stdout == "8:0\n"
    p = testbed.popen(["udevadm", "info", "--query=property", "--name=/dev/sda"],
                      stdout=subprocess.PIPE, text=True)
    props = p.communicate()[0]
    assert p.returncode == 0 and "ID_MODEL=Fake_Disk" in props
    lsblk = testbed.run(["lsblk", "-rno", "NAME"], capture_output=True, text=True)
    assert lsblk.stdout.split() == ["sda", "sda1", "sda2"]


def test_clear_and_batch(testbed):
    add_disk(testbed)
    with testbed.batch():
        paths = [testbed.add_device("input", f"event{i}", dev=(13, 64 + i),
                                    properties={"ID_INPUT": "1"}) for i in range(50)]
        assert not os.path.exists(paths[0])     # loaded when the block ends
    assert all(os.path.exists(p) for p in paths)
    dev = pyudev.Devices.from_device_file(pyudev.Context(), "/dev/event49")
    assert dev.properties["ID_INPUT"] == "1"
    testbed.clear()
    assert not list(pyudev.Context().list_devices(subsystem="block"))
    assert not os.path.exists("/dev/event0")
    with pytest.raises(FileExistsError):
        with testbed.batch():
            testbed.add_device("input", "dup", dev=(13, 1))
            testbed.add_device("input", "dup", dev=(13, 1))
    assert not os.path.exists("/sys/devices/virtual/input/dup")


def test_close_stops_what_it_started(tmp_path):
    if classfs.in_environment():
        pytest.skip("joined an environment: nothing of its own to stop")
    host_sys = os.stat("/sys").st_dev
    try:
        tb = classfs.Testbed()
    except PermissionError as e:
        pytest.skip(f"no classfs environment for this user: {e}")
    with tb:
        tb.add_device("block", "sdq", dev=(8, 240))
        assert os.stat("/sys").st_dev != host_sys and os.environ["CLASSFS_SOCKET"]
    assert os.stat("/sys").st_dev == host_sys
    assert "CLASSFS_SOCKET" not in os.environ
    assert not os.path.exists(tb.socket)


def test_one_testbed_after_another():
    # each back where it was: the host's /sys, /dev and the same uid, for
    # the next one (another uid stays in the user namespace of its own)
    if classfs.in_environment():
        pytest.skip("joined an environment: nothing of its own to stop")
    host_sys, uid, gid = os.stat("/sys").st_dev, os.getuid(), os.getgid()
    for i in range(3):
        with classfs.Testbed() as tb:
            tb.add_device("block", f"sd{i}", dev=(8, 16 * i), devtype="disk")
            assert os.path.exists(f"/dev/sd{i}") and (os.getuid(), os.getgid()) == (uid, gid)
        assert tb.left
        assert os.stat("/sys").st_dev == host_sys and not os.path.exists(f"/dev/sd{i}")
    assert (os.getuid(), os.getgid()) == (uid, gid)


REFUSED_PROBE = """
import classfs
from classfs import umockdev
print("in_mock_environment", umockdev.in_mock_environment())
try:
    classfs.Testbed()
except PermissionError as e:
    print("PermissionError", e)
"""


def test_user_namespaces_refused_raise_permission_error_naming_the_setting():
    # uid 65534 in a user namespace of root's whose limit of user
    # namespaces is 0 (as a distribution may set it): PermissionError (the
    # fixtures skip with it) naming the setting; in_mock_environment() False
    if os.geteuid() != 0 or classfs.in_environment():
        pytest.skip("root sets the refusal up, outside an environment")
    stage = tempfile.mkdtemp(prefix="classfs-refused.")
    try:
        # a copy uid 65534 can read (the build tree may be in root's home):
        # the package, and the libclassfs its run path ($ORIGIN/../..) names
        pkg = os.path.dirname(classfs.__file__)
        shutil.copytree(pkg, os.path.join(stage, "build", "python", "classfs"))
        shutil.copy(os.path.realpath(os.path.join(pkg, "..", "..", "libclassfs.so.0")),
                    os.path.join(stage, "build", "libclassfs.so.0"))
        for d, _, files in os.walk(stage):
            os.chmod(d, 0o755)
            for f in files:
                os.chmod(os.path.join(d, f), 0o755)
        env = dict(os.environ, PYTHONPATH=os.path.join(stage, "build", "python"))
        env.pop("CLASSFS_SOCKET", None)
        # once mapped, an exec() as uid 0 there gives the capabilities that set the limit
        limit = ("echo 0 >/proc/sys/user/max_user_namespaces && exec setpriv "
                 "--reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 -c \"$0\"")
        p = subprocess.Popen(["unshare", "--user", "--", "sh", "-c", 'read -r _ && exec "$@"',
                              "sh", "sh", "-c", limit, REFUSED_PROBE],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env=env, cwd="/")
        try:
            mine = os.readlink("/proc/self/ns/user")
            for _ in range(200):
                if os.readlink(f"/proc/{p.pid}/ns/user") != mine:
                    break
                time.sleep(0.01)
            for name in ("uid_map", "gid_map"):
                with open(f"/proc/{p.pid}/{name}", "w") as f:
                    f.write("0 0 65536\n")
            out = p.communicate("go\n", timeout=60)[0]
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    finally:
        shutil.rmtree(stage)
    assert p.returncode == 0, out
    assert "in_mock_environment False" in out, out
    assert "PermissionError" in out and "user.max_user_namespaces" in out, out


def test_partitions_nested_in_a_virtual_disk_added_before_them(testbed):
    # a disk without a bus device lives in /devices/virtual; its partitions,
    # added by later calls, nest in it (the record loader finds it in the tree)
    loop = testbed.add_device("block", "loop0", dev=(7, 0), devtype="disk")
    p1 = testbed.add_device("block", "loop0p1", parent=loop, dev=(259, 0), devtype="partition")
    assert p1 == "/sys/devices/virtual/block/loop0/loop0p1"
    part = pyudev.Devices.from_device_file(pyudev.Context(), "/dev/loop0p1")
    assert part.find_parent("block", "disk").sys_path == loop
    with pytest.raises(FileExistsError):
        testbed.add_device("block", "loop0p1", parent=loop, dev=(259, 1))


def test_a_name_that_is_not_utf8_is_refused_and_no_event_is_lost(testbed):
    """A class or device name must be UTF-8 (names are text to JSON, udev
    and Python): a record holding one is refused (a bad record: ValueError,
    its message saying why) and makes nothing, and Monitor.poll() goes
    on: it sees the next event (a refused name once reached it as an event
    it could not decode: MemoryError, the event lost)."""
    with testbed.monitor() as m:
        for bad in (b"P: /devices/virtual/hx\xff/d0\nE: SUBSYSTEM=hx\xff\n\n",
                    b"P: /devices/virtual/misc/d\xc3\n\n",
                    b"P: /devices/virtual/misc/ok\nN: ok\nE: SUBSYSTEM=misc\n"
                    b"A: dev=10:200\nA: caf\xe9=1\n\n"):
            with pytest.raises(ValueError, match="UTF-8"):
                testbed._client.load(bad, "bad")
        path = testbed.add_device("misc", "caf\u00e9", dev=(10, 201))
        events = list(m.events(0.5))
    assert [(e.action, e.sys_path) for e in events] == [("add", path)]
    assert not os.path.exists("/sys/devices/virtual/misc/ok")
    assert not any(n.startswith("hx") for n in os.listdir("/sys/class"))
