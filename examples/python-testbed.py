#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""examples/python-testbed.py - what a Python test does with classfs: a
disk with a partition in a private /sys, found through pyudev, a change
seen by a pyudev monitor.  demo.sh runs it as root and as uid 65534."""
import os
import sys

import classfs

try:
    tb = classfs.Testbed()
except PermissionError as e:
    print(f"uid {os.getuid()}: no testbed: {e}")
    sys.exit(0)
with tb:
    import pyudev
    sda = tb.add_device("block", "sda", dev=(8, 0), devtype="disk",
                        attributes={"size": "2097152\n"}, properties={"ID_MODEL": "Demo_Disk"})
    tb.add_device("block", "sda1", parent=sda, dev=(8, 1), devtype="partition")
    ctx = pyudev.Context()
    part = pyudev.Devices.from_device_file(ctx, "/dev/sda1")
    disk = part.find_parent("block", "disk")
    print(f"uid {os.getuid()}: /dev/sda1 is {part.sys_path}, "
          f"its disk {disk.sys_name} ({disk.properties['ID_MODEL']})")
    mon = pyudev.Monitor.from_netlink(ctx)
    mon.start()
    tb.set_attribute(sda, "size", "4194304\n")
    tb.uevent(sda, "change")
    ev = mon.poll(timeout=5)
    print(f"uid {os.getuid()}: monitor: {ev.action} {ev.sys_name}, size now "
          f"{ev.attributes.asint('size')}")
print(f"uid {os.getuid()}: closed; /sys is the host's again: {os.path.exists('/sys/kernel/mm')}")
