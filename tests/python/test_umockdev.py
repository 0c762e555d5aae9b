# SPDX-License-Identifier: LGPL-2.1-or-later
"""classfs.umockdev: a test written against umockdev's UMockdev.Testbed
that moved by changing its import."""
import os

import pyudev
import pytest

from classfs import umockdev as UMockdev


def test_in_mock_environment_before_a_testbed():
    # a suite asks before making its testbed, as root and as another uid
    assert UMockdev.in_mock_environment()


def test_usb_device_and_power_supply_as_umockdev_tests_add_them(umockdev_testbed):
    tb = umockdev_testbed
    assert UMockdev.in_mock_environment()
    assert tb.get_sys_dir() == "/sys"
    assert os.environ["UMOCKDEV_DIR"] == tb.get_root_dir() != "/"
    usb = tb.add_device("usb", "1-2", None,
                        ["idVendor", "0bda", "idProduct", "8153", "dev", "189:3"],
                        ["ID_MODEL", "Fake_Ethernet", "DEVNAME", "/dev/bus/usb/001/004",
                         "DEVTYPE", "usb_device"])
    assert usb == "/sys/devices/1-2"
    assert tb.get_attribute(usb, "idVendor") == "0bda"
    assert tb.get_property(usb, "ID_MODEL") == "Fake_Ethernet"
    dev = pyudev.Devices.from_device_file(pyudev.Context(), "/dev/bus/usb/001/004")
    assert dev.sys_path == usb and dev.device_type == "usb_device"

    bat = tb.add_devicev("power_supply", "BAT0", None,
                         ["type", "Battery", "present", "1", "energy_full", "60000000",
                          "energy_now", "48000000", "status", "Discharging"],
                         ["POWER_SUPPLY_ONLINE", "1"])
    assert bat == "/sys/devices/BAT0"      # where umockdev puts it
    assert tb.get_attribute_int(bat, "energy_full") == 60000000

    mon = pyudev.Monitor.from_netlink(pyudev.Context())
    mon.filter_by("power_supply")
    mon.start()
    tb.set_attribute_int(bat, "energy_now", 1500000)
    tb.set_attribute(bat, "status", "Charging")
    tb.uevent(bat, "change")
    ev = mon.poll(timeout=5)
    assert ev.action == "change" and ev.sys_path == bat
    assert ev.attributes.asstring("status") == "Charging"
    assert ev.attributes.asint("energy_now") == 1500000
    with open(bat + "/energy_now") as f:
        assert f.read() == "1500000"

    tb.set_property(usb, "ID_VENDOR", "Realtek")
    assert pyudev.Devices.from_sys_path(pyudev.Context(), usb).properties["ID_VENDOR"] \
        == "Realtek"
    tb.set_property_int(usb, "ID_NUM", 7)
    assert tb.get_property_int(usb, "ID_NUM") == 7

    tb.remove_device(usb)
    assert not os.path.exists(usb) and not os.path.exists("/dev/bus/usb/001/004")
    tb.clear()
    assert not os.path.exists(bat)


def test_nested_and_class_devices_below_a_bus_device(umockdev_testbed):
    tb = umockdev_testbed
    pci = tb.add_device("pci", "0000:00:14.0", None, ["vendor", "0x8086"], ["DRIVER", "xhci_hcd"])
    # exactly where the caller puts it, as umockdev: the glue directory is the caller's
    inp = tb.add_device("input", "input/input5", pci, ["name", "Fake Keyboard"],
                        ["ID_INPUT", "1", "ID_INPUT_KEYBOARD", "1"])
    ev = tb.add_device("input", "event5", inp, ["dev", "13:69"], ["DEVNAME", "/dev/input/event5"])
    assert inp == pci + "/input/input5" and ev == inp + "/event5"
    assert not os.path.exists(pci + "/input/uevent")
    dev = pyudev.Devices.from_device_file(pyudev.Context(), "/dev/input/event5")
    assert dev.parent.sys_path == inp and dev.find_parent("pci").sys_path == pci
    assert dev.parent.properties["ID_INPUT_KEYBOARD"] == "1"


def test_records_through_umockdev_names(umockdev_testbed, tmp_path):
    tb = umockdev_testbed
    assert tb.add_from_string("P: /devices/virtual/misc/uinput\nN: uinput\n"
                              "E: SUBSYSTEM=misc\nA: dev=10:223\n")
    assert os.path.exists("/dev/uinput")
    f = tmp_path / "rfkill.umockdev"
    f.write_text("P: /devices/virtual/rfkill/rfkill0\nE: SUBSYSTEM=rfkill\n"
                 "E: RFKILL_TYPE=wlan\nA: soft=0\n")
    assert tb.add_from_file(str(f))
    assert tb.get_property("/sys/devices/virtual/rfkill/rfkill0", "RFKILL_TYPE") == "wlan"
    with pytest.raises(ValueError, match=r"malformed .*\(<string>:2\)"):
        tb.add_from_string("P: /devices/virtual/misc/x\nbogus\n")


def test_bad_device_lists_change_nothing(umockdev_testbed):
    tb = umockdev_testbed
    with pytest.raises(ValueError, match="even length"):
        tb.add_device("tty", "ttyACM1", None, ["dev"], [])
    assert not os.path.exists("/sys/devices/ttyACM1")


def test_set_attribute_makes_missing_attributes(umockdev_testbed):
    tb = umockdev_testbed
    bat = tb.add_devicev("power_supply", "BAT1", None, ["type", "Battery"], [])
    tb.set_attribute(bat, "status", "Full")
    tb.set_attribute_int(bat, "capacity", 97)
    tb.set_attribute_hex(bat, "flags", 255)
    tb.set_attribute_binary(bat, "raw", b"\x01\x02")
    tb.set_attribute_link(bat, "driver", "../../bus/acpi")
    assert tb.get_attribute(bat, "status") == "Full"
    assert tb.get_attribute_int(bat, "capacity") == 97
    with open(bat + "/flags") as f:
        assert f.read() == "ff"
    with open(bat + "/raw", "rb") as f:
        assert f.read() == b"\x01\x02"
    assert os.readlink(bat + "/driver") == "../../bus/acpi"
    dev = pyudev.Devices.from_sys_path(pyudev.Context(), bat)
    assert dev.attributes.asstring("status") == "Full" and dev.driver == "acpi"
    # one loaded from a record
    assert tb.add_from_string("P: /devices/virtual/misc/uinput\nN: uinput\n"
                              "E: SUBSYSTEM=misc\nA: dev=10:223\n")
    tb.set_attribute(f"{tb.get_sys_dir()}/devices/virtual/misc/uinput", "version", "5")
    assert tb.get_attribute("/sys/devices/virtual/misc/uinput", "version") == "5"


def test_class_link_unlinked_leaves_the_name(umockdev_testbed):
    """upower's test: a battery's class link unlinked (a kernel bug
    emulated), then a battery of the same name elsewhere owns
    /sys/class/power_supply/NAME; each is removed as itself."""
    tb = umockdev_testbed
    bat = "hid-00:11:22:33:44:55-battery"
    link = "/sys/class/power_supply/" + bat
    p1 = tb.add_device("bluetooth", "usb1/bluetooth/hci0/hci0:01/1", None, [], [])
    b1 = tb.add_device("power_supply", "power_supply/" + bat, p1,
                       ["type", "Battery", "capacity", "10"], [])
    assert os.path.realpath(link) == b1
    os.unlink(link)
    assert not os.path.exists(link) and os.path.exists(b1 + "/uevent")
    p2 = tb.add_device("bluetooth", "usb1/bluetooth/hci0/hci0:01/2", None, [], [])
    b2 = tb.add_device("power_supply", "power_supply/" + bat, p2,
                       ["type", "Battery", "capacity", "20"], [])
    tb.uevent(b2, "add")
    assert os.path.realpath(link) == b2
    ctx = pyudev.Context()
    assert pyudev.Devices.from_path(ctx, link).attributes.asstring("capacity") == "20"
    assert [d.sys_path for d in ctx.list_devices(subsystem="power_supply")
            if d.sys_name == bat] == [b2]
    # the first one by its path, not the second by their name
    tb.remove_device(b1)
    assert not os.path.exists(b1) and os.path.realpath(link) == b2
    tb.remove_device(b2)
    assert not os.path.exists(b2) and not os.path.exists(link)
