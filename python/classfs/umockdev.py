# SPDX-License-Identifier: LGPL-2.1-or-later
"""umockdev's names over classfs, so that a test suite written against
umockdev's GObject bindings moves by changing one import:

    from classfs import umockdev as UMockdev

    testbed = UMockdev.Testbed.new()
    path = testbed.add_device("usb", "dev1", None,
                              ["idVendor", "0bda", "dev", "189:1"],
                              ["ID_MODEL", "Fake"])

docs/python.md has the table of what classfs does differently.
Failures raise (OSError with the errno, ValueError with file:line for a
bad record) where umockdev returns None or False with a warning; what
classfs cannot do raises NotImplementedError naming it.
"""

import os

from . import _classfs
from .testbed import Testbed as _Testbed, _privileged

__all__ = ["Testbed", "in_mock_environment"]


def in_mock_environment():
    """True when a Testbed works in this process: inside a classfs
    environment (CLASSFS_SOCKET), or able to make one (root, or another
    uid, or root of a container's user namespace, where user namespaces
    are allowed).  No wrapper program is needed:
    a Testbed moves this process into its environment."""
    return (bool(os.environ.get(_classfs.SOCKET_ENV)) or _privileged()
            or _classfs.userns_allowed())


def _pairs(flat, what):
    """umockdev's flat [key, value, key, value, ...] list as a dict."""
    if flat is None:
        return {}
    if isinstance(flat, dict):
        return dict(flat)
    flat = list(flat)
    if len(flat) % 2:
        raise ValueError(f"{what}: a flat [key, value, ...] list has an even length")
    return dict(zip(flat[0::2], flat[1::2]))


class Testbed(_Testbed):
    """classfs.Testbed with umockdev's UMockdev.Testbed methods."""

    @classmethod
    def new(cls):
        return cls()

    def get_sys_dir(self):
        return self.sys_dir

    def get_root_dir(self):
        """The root that holds sys/ and dev/: the environment's own."""
        return os.path.dirname(self.sys_dir) if self.sys_dir != "/sys" else "/"

    def add_devicev(self, subsystem, name, parent, attributes, properties):
        """Add a device: `attributes` and `properties` as flat [key, value,
        ...] lists.  A `dev` attribute gives it its number and a /dev node
        (DEVNAME, else its name).  Returns its /sys/devices/... path."""
        return super().add_device(subsystem, name, parent, _pairs(attributes, "attributes"),
                                  _pairs(properties, "properties"))

    def add_device(self, subsystem, name, parent=None, attributes=None, properties=None, **kw):
        """As add_devicev(); also takes dicts and classfs.Testbed's keywords."""
        return super().add_device(subsystem, name, parent, _pairs(attributes, "attributes"),
                                  _pairs(properties, "properties"), **kw)

    def add_from_string(self, string):
        self.load_string(string)
        return True

    def add_from_file(self, path):
        self.load(path)
        return True

    def set_attribute_int(self, devpath, name, value):
        self.set_attribute(devpath, name, "%d" % value)

    def set_attribute_hex(self, devpath, name, value):
        self.set_attribute(devpath, name, "%x" % value)

    def set_attribute_binary(self, devpath, name, value):
        self.set_attribute(devpath, name, bytes(value), binary=True)

    def get_attribute_int(self, devpath, name):
        return int(self.get_attribute(devpath, name).strip(), 0)

    def get_property_int(self, devpath, name):
        value = self.get_property(devpath, name)
        return None if value is None else int(value, 0)

    def set_property_int(self, devpath, name, value):
        self.set_property(devpath, name, "%d" % value)

    def set_property_hex(self, devpath, name, value):
        self.set_property(devpath, name, "%x" % value)

    def get_dev_fd(self, devnode):
        raise NotImplementedError(
            "get_dev_fd: classfs's /dev nodes are real nodes on a nodev mount, not "
            "emulated devices")

    def load_ioctl(self, dev, recordfile):
        raise NotImplementedError(
            "load_ioctl: classfs does not emulate ioctls on device nodes (its /dev "
            "nodes cannot be opened)")

    def load_script(self, dev, recordfile):
        raise NotImplementedError(
            "load_script: classfs does not emulate reads and writes of device nodes")

    def load_socket_script(self, path, sock_type, recordfile):
        raise NotImplementedError("load_socket_script: classfs does not emulate sockets")

    def load_evemu_events(self, dev, eventsfile):
        raise NotImplementedError(
            "load_evemu_events: classfs does not emulate reads of input device nodes")

    def load_pcap(self, sysfs, recordfile):
        raise NotImplementedError("load_pcap: classfs does not emulate USB traffic")
