# SPDX-License-Identifier: LGPL-2.1-or-later
"""umockdev's Testbed over classfs, so that a test suite written against
umockdev's GObject bindings moves by changing one import:

    from classfs import umockdev as UMockdev

    testbed = UMockdev.Testbed.new()
    path = testbed.add_device("usb", "dev1", None,
                              ["idVendor", "0bda", "dev", "189:1"],
                              ["ID_MODEL", "Fake"])

It behaves as umockdev's does where suites depend on it: every
Testbed.new() is a new, empty testbed and the newest is the one seen (an
unreferenced one is released); devices land at exactly the path
umockdev gives them (a name may be a path, below the parent or
/sys/devices); get_root_dir() is the testbed's own scratch directory,
named by UMOCKDEV_DIR; bad records raise umockdev's errors; device
nodes answer as umockdev's (a pty per character device, get_dev_fd(),
load_ioctl(), load_script(), load_evemu_events(), load_pcap(),
attach_ioctl() with an IoctlBase), for this process and every program it
starts, static ones included.  What classfs does differently is in
docs/python.md's table.
"""

import errno
import os
import re
import shutil
import struct
import tempfile
import threading

from . import _classfs
from . import testbed as _tb
from .testbed import Testbed as _Testbed, _privileged

__all__ = ["Testbed", "in_mock_environment", "Error", "IoctlBase", "IoctlClient", "IoctlData"]

try:
    from gi.repository import GLib as _GLib
    _GError = _GLib.GError
except ImportError:         # no PyGObject: the errors are ValueErrors alone
    _GError = None

# umockdev's UMockdev.Error codes
ERROR_PARSE = 0
ERROR_VALUE = 1
_ERROR_DOMAIN = "umockdev-error-quark"

if _GError is not None:
    class Error(_GError, ValueError):
        """A record umockdev would refuse: both GLib.GError (domain
        umockdev-error-quark, code PARSE or VALUE, umockdev's message) and
        ValueError (classfs's own reason follows umockdev's message)."""

        def __init__(self, message, code):
            _GError.__init__(self, message, _ERROR_DOMAIN, code)
else:
    class Error(ValueError):
        """A record umockdev would refuse (umockdev's message; .code is
        PARSE or VALUE)."""

        def __init__(self, message, code):
            ValueError.__init__(self, message)
            self.message, self.domain, self.code = message, _ERROR_DOMAIN, code


def in_mock_environment():
    """True when a Testbed works in this process: inside a classfs
    environment (CLASSFS_SOCKET), or able to make one (root, or another
    uid where user namespaces are allowed).  No wrapper program is
    needed: a Testbed moves the thread that makes it into its
    environment."""
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


def _build_filename(*parts):
    """GLib's g_build_filename(): the parts joined by one '/', repeated
    and trailing separators dropped."""
    path = "/".join(parts)
    path = re.sub("/+", "/", path)
    return path.rstrip("/") or "/"


# classfs's loader reasons -> umockdev's message and code, for a device path
_RECORD_ERRORS = (
    (re.compile(r"line before the first P: line|^empty record"),
     'device descriptions must start with a "P: /devices/path/..." line', ERROR_PARSE),
    (re.compile(r"is not under /devices/"),
     "invalid device path '{path}': must start with /devices/", ERROR_VALUE),
    (re.compile(r"without '='|without a value|malformed"),
     "malformed attribute or property line in description of device {path}", ERROR_PARSE),
    (re.compile(r"duplicate property 'SUBSYSTEM'"),
     "duplicate SUBSYSTEM property in description of device {path}", ERROR_VALUE),
    (re.compile(r"unknown tag '(.)"), "Unknown line type '{tag}'", ERROR_PARSE),
)


def _paragraphs(text):
    """The paragraphs of a record: lists of (line number, line)."""
    para = []
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            para.append((number, line))
        elif para:
            yield para
            para = []
    if para:
        yield para


def _check_record(text, name):
    """What umockdev refuses before it adds anything, in the order it
    finds it: a paragraph not starting with P:, a path outside /devices/,
    a malformed or unknown line, a device without SUBSYSTEM.  The message
    is umockdev's, then where (`name`:line)."""
    for para in _paragraphs(text):
        number, first = para[0]
        if not first.startswith("P:"):
            raise Error('device descriptions must start with a "P: /devices/path/..." line '
                        f"({name}:{number})", ERROR_PARSE)
        path = first[2:].strip()
        if not path.startswith("/devices/"):
            raise Error(f"invalid device path '{path}': must start with /devices/ "
                        f"({name}:{number})", ERROR_VALUE)
        subsystem = False
        for number, line in para[1:]:
            tag = line[:1]
            where = f"({name}:{number})"
            if line[1:2] != ":" or (tag in "HALE" and "=" not in line):
                raise Error("malformed attribute or property line in description of "
                            f"device {path} {where}", ERROR_PARSE)
            if tag == "P":
                raise Error(f"invalid P: line in description of device {path} {where}",
                            ERROR_PARSE)
            if tag not in "HALENS":
                raise Error(f"Unknown line type '{tag}' {where}", ERROR_PARSE)
            subsystem = subsystem or (tag == "E" and line[2:].strip().startswith("SUBSYSTEM="))
        if not subsystem:
            raise Error(f"missing SUBSYSTEM property in description of device {path} "
                        f"({name}:{para[0][0]})", ERROR_VALUE)


def _record_error(e, text):
    """classfs's ValueError for a bad record as umockdev's Error."""
    reason = str(e)
    paths = [p[0][1][2:].strip() for p in _paragraphs(text) if p[0][1].startswith("P:")]
    for pattern, message, code in _RECORD_ERRORS:
        m = pattern.search(reason)
        if m:
            tag = m.group(1) if m.groups() else ""
            msg = message.format(path=paths[-1] if paths else "?", tag=tag)
            return Error(f"{msg} ({reason})", code)
    return Error(reason, ERROR_VALUE)


class Testbed(_Testbed):
    """classfs.Testbed with umockdev's UMockdev.Testbed methods and rules."""

    def __init__(self):
        self._root = None
        super().__init__()
        try:
            # the testbed's own scratch directory, as umockdev's root dir:
            # sys/ and dev/ in it are the testbed's, its other files the
            # caller's, all gone with the testbed
            self._root = tempfile.mkdtemp(prefix="umockdev.")
            os.symlink(self.sys_dir, os.path.join(self._root, "sys"))
            os.symlink("/dev", os.path.join(self._root, "dev"))
            self._become_current({"UMOCKDEV_DIR": self._root})
        except BaseException:
            self.close()
            raise

    @classmethod
    def new(cls):
        """A new, empty testbed, the one seen from now on."""
        return cls()

    def _joined(self):
        """In an environment this process was started in (classfs-run):
        a new testbed is empty, as umockdev's are, so the tree is reset
        (every device and every plain file goes), and the testbed it
        replaces no longer removes devices at its close()."""
        previous = _tb._current_testbed()
        if previous is not None and previous is not self:
            previous._added = []
        self._client.reset()

    def close(self):
        """Release the testbed: its devices, files and scratch directory go."""
        try:
            super().close()
        finally:
            root, self._root = self._root, None
            if root is not None:
                shutil.rmtree(root, ignore_errors=True)

    def _clear_added(self):
        """close() in an environment this process was started in: the
        devices stay and no remove event goes out, as a released umockdev
        testbed's directory goes without events (a daemon under test that
        is still running hears of nothing); the next Testbed.new() resets
        the tree."""
        self._added = []

    def clear(self):
        """Remove every device and file of the testbed: it is empty again."""
        self._client.reset()
        self._added = []
        self._settle()

    def disable(self):
        """Hide the testbed: what this thread runs from now on sees the
        host's /sys, /dev and /run/udev, until enable()."""
        if self._run is None:
            raise OSError(95, "disable(): this process was started inside the environment "
                              "(classfs-run): there is no other /sys to show")
        if self._is_current() and self._entered:
            self._leave()

    def enable(self):
        """Show the testbed again after disable()."""
        if self._run is None:
            return
        if self._is_current() and not self._entered:
            self._enter()

    def get_sys_dir(self):
        """Where the testbed's /sys is seen: /sys."""
        return self.sys_dir

    def get_root_dir(self):
        """The testbed's own scratch directory ($UMOCKDEV_DIR): `sys` and
        `dev` in it are the testbed's /sys and /dev."""
        return self._root

    def add_devicev(self, subsystem, name, parent, attributes, properties):
        """Add a device at exactly `parent`/`name` (or /sys/devices/`name`):
        `name` may be a path, whose directories that are no device are
        plain ones.  `attributes` and `properties` are flat [key, value,
        ...] lists.  A `dev` attribute gives it its number and a /dev node
        (DEVNAME, else its name).  Returns its /sys/devices/... path."""
        return self.add_device(subsystem, name, parent, attributes, properties)

    def add_device(self, subsystem, name, parent=None, attributes=None, properties=None, **kw):
        """As add_devicev(); also takes dicts and classfs.Testbed's keywords."""
        if parent is None:
            base = self.sys_dir + "/devices"
        else:
            base = os.fspath(parent)
            if not base.startswith(self.sys_dir + "/"):
                raise ValueError(f"add_devicev(): parent device {base} does not start with "
                                 f"{self.sys_dir}/")
            if not os.path.isdir(base):
                raise FileNotFoundError(2, f"add_devicev(): parent device {base} does not "
                                           "exist", base)
        path = _build_filename(base, name)
        if not name or any(c in (".", "..") for c in name.split("/")):
            raise ValueError(f"bad device name {name!r}")
        devpath = path[len(self.sys_dir):]
        if not devpath.startswith("/devices/"):
            raise ValueError(f"add_devicev(): {path} is not below {self.sys_dir}/devices")
        return self._add_at(devpath, _classfs.is_bus(subsystem), subsystem, name,
                            _pairs(attributes, "attributes"), _pairs(properties, "properties"),
                            **kw)

    def add_from_string(self, string):
        """Add the devices of a umockdev record; Error (a GLib.GError and a
        ValueError) for one umockdev refuses, and nothing is added."""
        if isinstance(string, bytes):
            string = string.decode("utf-8", "surrogateescape")
        return self._add_record(string, "<string>")

    def add_from_file(self, path):
        """add_from_string() of a record file."""
        with open(path, "rb") as f:
            return self._add_record(f.read().decode("utf-8", "surrogateescape"),
                                    os.fspath(path))

    def _add_record(self, text, name):
        _check_record(text, name)
        try:
            self.load_string(text, name)
        except ValueError as e:
            raise _record_error(e, text) from e
        return True

    def set_attribute(self, devpath, name, value, binary=False):
        """Write the attribute's file, as umockdev does: through /sys, so
        that what watches it (inotify, GFileMonitor) sees the change; a
        missing one is made, with the directories in `name`.  One that
        may not be written there (0444) is set through the daemon."""
        if self._sync is None:
            return super().set_attribute(devpath, name, value, binary)
        if isinstance(value, str):
            value = value.encode("utf-8", "surrogateescape")
        elif isinstance(value, int):
            value = str(value).encode()
        path = os.path.join(self._sys(self._rel(devpath)), name)
        if "/" in name:
            os.makedirs(os.path.dirname(path), exist_ok=True)
        try:
            with open(path, "wb") as f:
                f.write(bytes(value))
        except PermissionError:
            super().set_attribute(devpath, name, value, binary)

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

    def attach_ioctl(self, node, handler):
        """`handler` (an IoctlBase) answers `node`'s ioctls from now on."""
        if not isinstance(handler, IoctlBase):
            raise TypeError("attach_ioctl(): the handler is an UMockdev.IoctlBase")
        super().attach_ioctl(node, handler._dispatcher(node))

    def detach_ioctl(self, node):
        """`node`'s ioctls are no longer the handler's."""
        super().detach_ioctl(node)

    def get_dev_fd(self, node):
        """The other end of character device `node` (a pty's master), -1
        for a node that has none (block and USB devices)."""
        return super().get_dev_fd(node)


# -- umockdev's ioctl handler API ------------------------------------------

_PTR = struct.Struct("P")
_IOC_TYPE_SHIFT = 8


class IoctlData:
    """A piece of the calling program's memory: the ioctl's argument, or
    what a pointer in it points to (resolve()).  Changes (update(),
    set_ptr()) reach the program when the call completes."""

    def __init__(self, call, addr, data):
        self._call = call
        self.client_addr = addr     # None: the argument itself (not in memory)
        self.data = bytearray(data)
        self._children = []

    def resolve(self, offset, length):
        """The `length` bytes the pointer at `offset` points to."""
        addr = _PTR.unpack_from(bytes(self.data), offset)[0]
        child = IoctlData(self._call, addr, self._call.read(addr, length))
        self._children.append(child)
        return child

    def set_ptr(self, offset, child):
        """Point the pointer at `offset` to `child`'s memory."""
        _PTR.pack_into(self.data, offset, child.client_addr)
        return True

    def update(self, offset, new_data):
        self.data[offset:offset + len(new_data)] = bytes(new_data)

    def retrieve(self):
        return bytes(self.data)

    def reload(self):
        if self.client_addr is not None:
            self.data[:] = self._call.read(self.client_addr, len(self.data))
        return True

    def get_data(self):
        return bytes(self.data)

    def _flush(self):
        for child in self._children:
            child._flush()
            child._call.write(child.client_addr, bytes(child.data))


class IoctlClient:
    """One ioctl() call, as umockdev's handlers see it."""

    def __init__(self, handler, call, node):
        self.handler = handler
        self.devnode = node
        self.request = call.request
        self.arg = IoctlData(call, None, _PTR.pack(call.arg))
        self.connected = True
        self._result = None
        self._done = threading.Event()

    def get_devnode(self):
        return self.devnode

    def get_request(self):
        return self.request

    def get_arg(self):
        return self.arg

    def get_connected(self):
        return self.connected

    def complete(self, res, errno_):
        """Answer the call: it returns `res`, or fails with `errno_`."""
        self.arg._flush()
        self._result = -errno_ if errno_ else res
        self._done.set()

    def abort(self):
        self.complete(-1, errno.EIO)


class IoctlBase:
    """umockdev's ioctl handler: connect("handle-ioctl", fn) (fn(handler,
    client, *user_data) returns True when it handled the call and
    completes it with client.complete()), or a subclass overriding
    do_handle_ioctl(client)."""

    _SIGNALS = ("handle-ioctl", "handle-read", "handle-write", "client-connected",
                "client-vanished")

    def __init__(self, *args, **kw):
        self._handlers = {}
        self._next_id = 1

    @classmethod
    def new(cls, *args, **kw):
        return cls(*args, **kw)

    def connect(self, signal, fn, *user_data):
        name = signal.replace("_", "-")
        if name not in self._SIGNALS:
            raise TypeError(f"<IoctlBase>: unknown signal name: {signal}")
        handler_id = self._next_id
        self._next_id += 1
        self._handlers[handler_id] = (name, fn, user_data)
        return handler_id

    def disconnect(self, handler_id):
        self._handlers.pop(handler_id, None)

    handler_disconnect = disconnect

    def do_handle_ioctl(self, client):
        return False

    def _handle(self, client):
        for name, fn, user_data in list(self._handlers.values()):
            if name == "handle-ioctl" and fn(self, client, *user_data):
                return True
        return bool(self.do_handle_ioctl(client))

    def _dispatcher(self, node):
        """The function that answers one call on `node` (in the supervisor
        thread): the handler's result, as umockdev gives it when no
        handler takes the call (terminal requests to the pty, ENOTTY, or
        ENOENT for evdev)."""
        def answer(call):
            client = IoctlClient(self, call, node)
            if not self._handle(client):
                if (call.request >> _IOC_TYPE_SHIFT) & 0xff == ord("T"):
                    return None
                return -(errno.ENOENT if (call.request >> _IOC_TYPE_SHIFT) & 0xff == ord("E")
                         else errno.ENOTTY)
            # complete() may come from another thread, as in umockdev
            client._done.wait()
            return client._result
        return answer


