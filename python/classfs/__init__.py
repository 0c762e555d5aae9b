# SPDX-License-Identifier: LGPL-2.1-or-later
"""classfs for Python tests: devices in a private /sys, /dev and /run/udev.

    import classfs
    with classfs.Testbed() as tb:
        sda = tb.add_device("block", "sda", dev=(8, 0), devtype="disk")
        ...

docs/python.md has the whole API; classfs.umockdev has umockdev's names.
"""

from . import _classfs

_classfs.SOCKET_ENV = "CLASSFS_SOCKET"

from .testbed import Event, Monitor, Testbed, _own_namespaces_early  # noqa: E402

# A user namespace can only be made while the process has one thread: now,
# before the test suite's D-Bus and GLib threads exist (docs/python.md).
_own_namespaces_early()

__all__ = ["Testbed", "Monitor", "Event", "in_environment"]


def in_environment():
    """Whether this process runs inside a classfs environment (classfs-run)."""
    import os
    return bool(os.environ.get(_classfs.SOCKET_ENV))
