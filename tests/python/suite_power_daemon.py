#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""A test suite shaped as the integration suites device daemons ship for
umockdev (written here): a private D-Bus started in setUpClass (so GLib's
threads exist before the first testbed), a new testbed in every setUp and
none torn down, a daemon under test started as a program that finds its
devices with GUdev, follows their uevents, writes an attribute back,
keeps state in $UMOCKDEV_DIR and answers over D-Bus.  Moved to classfs
by changing the UMockdev import and dropping the re-exec under
umockdev-wrapper; test_converted_suite.py runs it plainly and under
classfs-run."""
import os
import subprocess
import sys
import time
import unittest

import gi
gi.require_version("GUdev", "1.0")
from gi.repository import Gio, GLib  # noqa: E402

from classfs import umockdev as UMockdev  # noqa: E402

# the daemon under test: the sum of the batteries' capacities over D-Bus,
# kept up to date by uevents; it marks each battery it saw
DAEMON = r'''
import os, sys
import gi
gi.require_version("GUdev", "1.0")
from gi.repository import Gio, GLib, GUdev

XML = """<node><interface name="org.classfs.Test.Power">
<method name="Capacity"><arg type="i" direction="out"/></method></interface></node>"""
client = GUdev.Client.new(["power_supply"])

def capacity():
    total = 0
    for dev in client.query_by_subsystem("power_supply"):
        total += int(dev.get_sysfs_attr("capacity") or 0)
    return total

def mark(dev):
    with open(dev.get_sysfs_path() + "/seen_by_daemon", "w") as f:
        f.write("1\n")

def on_uevent(client, action, dev):
    if action == "add":
        mark(dev)

def on_call(conn, sender, path, iface, method, params, invocation):
    invocation.return_value(GLib.Variant("(i)", (capacity(),)))

def on_bus(conn, name):
    info = Gio.DBusNodeInfo.new_for_xml(XML)
    conn.register_object("/org/classfs/Test", info.interfaces[0], on_call)

for dev in client.query_by_subsystem("power_supply"):
    mark(dev)
client.connect("uevent", on_uevent)
with open(os.path.join(os.environ["UMOCKDEV_DIR"], "daemon.state"), "w") as f:
    f.write("started\n")
Gio.bus_own_name(Gio.BusType.SYSTEM, "org.classfs.Test", 0, on_bus, None, None)
GLib.MainLoop().run()
'''


class PowerDaemonTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dbus = Gio.TestDBus.new(Gio.TestDBusFlags.NONE)
        cls.dbus.up()
        os.environ["DBUS_SYSTEM_BUS_ADDRESS"] = cls.dbus.get_bus_address()
        cls.bus = Gio.bus_get_sync(Gio.BusType.SYSTEM, None)    # GLib's gdbus thread

    @classmethod
    def tearDownClass(cls):
        cls.bus.close_sync(None)
        cls.dbus.down()

    def setUp(self):
        self.testbed = UMockdev.Testbed.new()
        self.daemon = None

    def tearDown(self):
        if self.daemon is not None:
            self.daemon.terminate()
            self.daemon.wait()

    def start_daemon(self):
        self.daemon = subprocess.Popen([sys.executable, "-c", DAEMON])
        state = os.path.join(self.testbed.get_root_dir(), "daemon.state")
        end = time.monotonic() + 20
        while not os.path.exists(state) or not self.bus.call_sync(
                "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                "NameHasOwner", GLib.Variant("(s)", ("org.classfs.Test",)), None, 0, -1,
                None).unpack()[0]:
            self.assertIsNone(self.daemon.poll(), "the daemon under test exited")
            self.assertLess(time.monotonic(), end, "the daemon under test did not start")
            time.sleep(0.05)

    def capacity(self):
        return self.bus.call_sync("org.classfs.Test", "/org/classfs/Test",
                                  "org.classfs.Test.Power", "Capacity", None, None, 0, 5000,
                                  None).unpack()[0]

    def wait_for(self, path):
        end = time.monotonic() + 10
        while not os.path.exists(path):
            self.assertLess(time.monotonic(), end, f"{path} did not appear")
            time.sleep(0.02)

    def test_battery(self):
        bat = self.testbed.add_device("power_supply", "BAT0", None,
                                      ["type", "Battery", "capacity", "40"], [])
        self.start_daemon()
        self.assertEqual(self.capacity(), 40)
        self.wait_for(bat + "/seen_by_daemon")

    def test_hotplug_and_a_new_testbed_each_time(self):
        # the battery of test_battery is not in this testbed
        self.start_daemon()
        self.assertEqual(self.capacity(), 0)
        bat = self.testbed.add_device("power_supply", "BAT1", None,
                                      ["type", "Battery", "capacity", "75"], [])
        self.wait_for(bat + "/seen_by_daemon")
        self.assertEqual(self.capacity(), 75)
        self.testbed.set_attribute(bat, "capacity", "80")
        self.assertEqual(self.capacity(), 80)

    def test_in_mock_environment(self):
        self.assertTrue(UMockdev.in_mock_environment())


if __name__ == "__main__":
    unittest.main(verbosity=2)
