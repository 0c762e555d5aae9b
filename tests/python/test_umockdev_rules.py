# SPDX-License-Identifier: LGPL-2.1-or-later
"""classfs.umockdev keeps umockdev's rules where suites written for it
depend on them: testbeds made from a process that has threads, each
Testbed.new() a new, empty one, device names that are paths placed
exactly, a /sys that plain file calls change, the scratch directory,
umockdev's errors, disable() and enable().  Run as root and as uid
65534, each test in its own environment and all under classfs-run."""
import os
import subprocess
import sys
import threading
import time

import pyudev
import pytest

from classfs import umockdev as UMockdev

try:
    from gi.repository import GLib
except ImportError:
    GLib = None


def _new():
    try:
        return UMockdev.Testbed.new()
    except PermissionError as e:
        pytest.skip(f"no classfs environment for this user: {e}")


def _joined():
    return bool(os.environ.get("CLASSFS_SOCKET")) and not _owned()


def _owned():
    # the testbed module set CLASSFS_SOCKET for an environment of its own
    from classfs import testbed
    return testbed._home_ns is not None


def test_a_thread_made_before_the_testbed_keeps_its_view():
    """Suites start D-Bus (GLib's threads) before their first testbed:
    the thread that makes the testbed and what it starts see it; a
    thread that was there before keeps the /sys it had."""
    started, stop = threading.Event(), threading.Event()
    seen = {}

    def other():
        started.set()
        stop.wait(30)
        seen["other"] = os.stat("/sys").st_dev

    t = threading.Thread(target=other)
    t.start()
    try:
        started.wait(5)
        host = os.stat("/sys").st_dev
        tb = _new()
        path = tb.add_device("usb", "1-9", None, ["idVendor", "1d6b"], [])
        out = subprocess.run(["cat", path + "/idVendor"], capture_output=True, text=True)
        assert out.returncode == 0 and out.stdout == "1d6b"
    finally:
        stop.set()
        t.join()
    if not _joined():
        assert seen["other"] == host != os.stat("/sys").st_dev
    tb.close()


def test_each_new_testbed_is_empty_and_the_old_one_is_released():
    first = _new()
    old = first.add_device("usb", "1-1", None, ["idVendor", "0815"], ["ID_INPUT", "1"])
    old_root = first.get_root_dir()
    assert os.path.isdir(old_root)
    os.makedirs("/sys/firmware/acpi", exist_ok=True)
    second = _new()
    assert not os.path.exists(old) and not os.path.exists("/sys/firmware/acpi")
    assert list(pyudev.Context().list_devices(subsystem="usb")) == []
    kept = second.add_device("usb", "1-1", None, ["idVendor", "beef"], [])
    del first      # released: its scratch directory goes, the new testbed's device stays
    assert not os.path.exists(old_root)
    with open(kept + "/idVendor") as f:
        assert f.read() == "beef"
    assert os.environ["UMOCKDEV_DIR"] == second.get_root_dir()
    second.close()
    assert not os.path.exists(second.get_root_dir() or "/nonexistent")


def test_a_released_testbed_sends_no_remove_events():
    """Suites `del self.testbed` before they stop the daemon under test,
    which must hear of no removal (umockdev's directory goes silently)."""
    tb = _new()
    tb.add_device("power_supply", "AC", None, ["type", "Mains", "online", "1"], [])
    mon = pyudev.Monitor.from_netlink(pyudev.Context())
    mon.filter_by("power_supply")
    mon.start()
    del tb
    assert mon.poll(timeout=0.5) is None


def test_device_names_that_are_paths_land_exactly_there():
    tb = _new()
    pci = tb.add_device("pci", "pci0000:00/0000:00:02.0", None, ["vendor", "0x8086"],
                        ["PCI_SLOT_NAME", "0000:00:02.0"])
    assert pci == "/sys/devices/pci0000:00/0000:00:02.0"
    card = tb.add_device("drm", "dri/card0", pci, ["dev", "226:0"],
                         ["DEVNAME", "/dev/dri/card0"])
    assert card == pci + "/dri/card0"           # no glue directory of its own
    hci = tb.add_device("bluetooth", "usb1/bluetooth/hci0", pci, [], [])
    assert hci == pci + "/usb1/bluetooth/hci0"
    dmi = tb.add_device("dmi", "virtual/dmi", None, ["sys_vendor", "LENOVO"], [])
    assert dmi == "/sys/devices/virtual/dmi"
    # the directories in between are plain: no uevent, no subsystem
    for plain in (pci + "/dri", pci + "/usb1", pci + "/usb1/bluetooth", "/sys/devices/pci0000:00"):
        assert os.path.isdir(plain) and not os.path.exists(plain + "/uevent"), plain
    ctx = pyudev.Context()
    assert pyudev.Devices.from_sys_path(ctx, card).parent.sys_path == pci
    assert pyudev.Devices.from_sys_path(ctx, hci).parent.sys_path == pci
    assert pyudev.Devices.from_device_file(ctx, "/dev/dri/card0").sys_path == card
    assert pyudev.Devices.from_sys_path(ctx, dmi).attributes.asstring("sys_vendor") == "LENOVO"


def test_a_parent_added_after_its_child_fills_the_plain_directory_in():
    tb = _new()
    child = tb.add_device("usb", "pci0000:20/0000:20:08.1/usb3", None, ["busnum", "3"], [])
    parent = "/sys/devices/pci0000:20/0000:20:08.1"
    assert not os.path.exists(parent + "/uevent")
    tb.add_from_string("P: /devices/pci0000:20/0000:20:08.1\nE: SUBSYSTEM=pci\n"
                       "E: DRIVER=xhci_hcd\nA: vendor=0x1022\n")
    assert os.path.exists(parent + "/uevent")
    dev = pyudev.Devices.from_sys_path(pyudev.Context(), child)
    assert dev.parent.sys_path == parent and dev.attributes.asstring("busnum") == "3"
    with pytest.raises(FileExistsError):
        tb.add_from_string("P: /devices/pci0000:20/0000:20:08.1\nE: SUBSYSTEM=pci\n")


def test_files_are_made_in_a_loaded_attribute_directory():
    """iio-sensor-proxy's test loads a device with `buffer/enable` and
    the daemon writes `buffer/length`, a file the record does not have:
    a recorded attribute's directory takes new files as umockdev's
    does, and its recorded values stay."""
    tb = _new()
    tb.add_from_string("P: /devices/iio:device1\nN: iio:device1\nE: SUBSYSTEM=iio\n"
                       "A: name=accel_3d\nA: buffer/enable=0\n"
                       "A: scan_elements/in_accel_x_en=0\n")
    buf = "/sys/bus/iio/devices/iio:device1/buffer"
    with open(buf + "/length", "w") as f:
        f.write("128\n")
    with open(buf + "/length") as f:
        assert f.read() == "128\n"
    with open(buf + "/enable", "w") as f:
        f.write("1\n")
    assert sorted(os.listdir(buf)) == ["enable", "length"]
    assert tb.get_attribute("/sys/devices/iio:device1", "buffer/enable") == "1\n"
    assert tb.get_attribute("/sys/devices/iio:device1", "name") == "accel_3d"


def test_sys_is_writable_with_plain_file_calls():
    tb = _new()
    os.makedirs("/sys/firmware/acpi")
    with open("/sys/firmware/acpi/platform_profile", "w") as f:
        f.write("balanced\n")
    with open(tb.get_sys_dir() + "/firmware/acpi/platform_profile") as f:
        assert f.read() == "balanced\n"
    os.makedirs("/sys/devices/system/cpu/cpufreq/policy0")
    # a descriptor open(O_CREAT) gave writes whatever mode it asked for
    old = os.umask(0o333)
    try:
        with open("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", "w") as f:
            f.write("powersave\n")
    finally:
        os.umask(old)
    with open("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor") as f:
        assert f.read() == "powersave\n"
    end = time.monotonic() + 5      # the mode asked for once that descriptor is released
    while os.stat("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor").st_mode & 0o777 \
            != 0o444 and time.monotonic() < end:
        time.sleep(0.01)
    assert os.stat("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor").st_mode & 0o777 \
        == 0o444
    with open("/sys/devices/system/cpu/cpufreq/policy0/energy_performance_preference",
              "w") as f:
        f.write("performance")
    bat = tb.add_device("power_supply", "BAT0", None, ["charge_type", "Standard"], [])
    # what the code under test writes back, from another process
    subprocess.run(["sh", "-c", f"echo Adaptive > {bat}/charge_type"], check=True)
    assert tb.get_attribute(bat, "charge_type") == "Adaptive\n"
    os.unlink(bat + "/subsystem")       # a broken tree, made on purpose
    assert not os.path.lexists(bat + "/subsystem")
    os.rename("/sys/firmware/acpi/platform_profile", "/sys/firmware/acpi/old_profile")
    assert os.listdir("/sys/firmware/acpi") == ["old_profile"]
    os.unlink("/sys/firmware/acpi/old_profile")
    os.rmdir("/sys/firmware/acpi")
    assert not os.path.exists("/sys/firmware/acpi")


def test_the_root_dir_is_the_testbeds_own_scratch_directory():
    tb = _new()
    root = tb.get_root_dir()
    assert os.path.isdir(root) and root != "/" and os.environ["UMOCKDEV_DIR"] == root
    path = tb.add_device("usb", "1-2", None, ["idVendor", "0815"], [])
    with open(root + path + "/idVendor") as f:         # as umockdev's suites read it
        assert f.read() == "0815"
    out = subprocess.run(["sh", "-c", 'echo state > "$UMOCKDEV_DIR/daemon.state"'])
    assert out.returncode == 0 and os.path.exists(os.path.join(root, "daemon.state"))
    tb.close()
    assert not os.path.exists(root) and "UMOCKDEV_DIR" not in os.environ


def test_records_umockdev_refuses_raise_its_errors():
    tb = _new()
    for record, message in (("E: SIMPLE_PROP=1\n", "must start with.*P:"),
                            ("P: /devices/dev1\nE: SIMPLE_PROP\n", "malformed attribute"),
                            ("P: /sys/dev1\nE: SUBSYSTEM=pci\n", "must start with /devices/"),
                            ("P: /devices/dev1\nA: a=1\n", "missing SUBSYSTEM"),
                            ("P: /devices/dev1\nX: a=1\nE: SUBSYSTEM=pci\n", "Unknown line type")):
        with pytest.raises(ValueError, match=message) as info:
            tb.add_from_string(record)
        if GLib is not None:
            assert isinstance(info.value, GLib.GError)
            assert info.value.domain == "umockdev-error-quark"
    assert not os.path.exists("/sys/devices/dev1")


def test_the_udev_database_has_the_keys_umockdev_gives():
    tb = _new()
    path = tb.add_device("usb", "extkeyboard1", None, ["idVendor", "0815"],
                         ["ID_INPUT", "1", "ID_INPUT_KEYBOARD", "1"])
    dev = pyudev.Devices.from_sys_path(pyudev.Context(), path)
    assert sorted(dev.properties) == ["DEVPATH", "ID_INPUT", "ID_INPUT_KEYBOARD", "SUBSYSTEM"]
    assert dev.is_initialized


def test_disable_shows_the_host_and_enable_the_testbed_again():
    tb = _new()
    path = tb.add_device("usb", "1-3", None, ["idVendor", "0815"], [])
    if _joined():
        with pytest.raises(OSError, match="disable"):
            tb.disable()
        return
    tb.disable()
    assert not os.path.exists(path)
    assert subprocess.run(["test", "-e", path]).returncode != 0
    tb.enable()
    assert os.path.exists(path)
    assert subprocess.run(["test", "-e", path]).returncode == 0


def test_programs_in_the_testbed_open_pseudo_terminals():
    """As root /dev/pts is the host's; in a user namespace, where the
    host's 0000 pts/ptmx cannot be opened, a devpts of the environment's
    own: a daemon under test opens a pty as whichever uid runs it."""
    tb = _new()
    main, sub = os.openpty()
    assert os.ttyname(sub).startswith("/dev/pts/")
    os.close(main)
    os.close(sub)
    out = subprocess.run([sys.executable, "-c", "import os; os.ttyname(os.openpty()[1])"])
    assert out.returncode == 0
    tb.close()


def test_in_mock_environment_tells_the_truth():
    assert UMockdev.in_mock_environment()
    tb = _new()
    assert UMockdev.in_mock_environment()
    tb.close()
