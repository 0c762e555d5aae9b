# SPDX-License-Identifier: LGPL-2.1-or-later
"""classfs.Testbed: devices for tests, in a private environment where
/sys is a classfs tree, /dev holds their nodes and /run/udev their udev
database, and every change reaches libudev monitors (docs/python.md)."""

import errno
import lzma
import os
import re
import socket as _socket
import subprocess
import time
import weakref

from . import _classfs
from . import nodes as _nodes
import contextlib

from .record import paragraph, record_paths

__all__ = ["Testbed", "Monitor", "Event"]

# how long an operation waits for the environment to apply its events
SYNC_TIMEOUT_MS = 10000

# what _load_played() needs of each played format: the method named in
# errors, the extension's kind, the header line naming the node
_SCRIPT = ("load_script", "RECORDING_SCRIPT", r"^d 0 (.*)$")
_EVEMU = ("load_evemu_events", "RECORDING_EVEMU", r"^# device (.*)$")


class Event:
    """One uevent: seqnum, action, devpath (below /sys), subsystem,
    properties (a dict of every KEY=VALUE it carried)."""

    __slots__ = ("seqnum", "action", "devpath", "subsystem", "properties")

    def __init__(self, seqnum, action, devpath, subsystem, properties):
        self.seqnum = seqnum
        self.action = action
        self.devpath = devpath
        self.subsystem = subsystem
        self.properties = properties

    @property
    def sys_path(self):
        return "/sys" + self.devpath

    def __repr__(self):
        return f"Event({self.seqnum}, {self.action!r}, {self.devpath!r}, {self.subsystem!r})"


class Monitor:
    """Every event of the tree from the moment it was made, in SEQNUM
    order, none lost: a subscription of its own to the daemon."""

    def __init__(self, socket):
        self._client = _classfs.Client(socket)
        self._pending = []
        try:
            self._client.subscribe(0)
        except BaseException:
            self._client.close()
            raise

    def fileno(self):
        return self._client.fileno()

    def _fetch(self, timeout_ms):
        events, gaps = self._client.dispatch(timeout_ms)
        if gaps:
            first, last = gaps[0]
            raise RuntimeError(f"classfs monitor fell behind: events {first}..{last} skipped")
        self._pending.extend(Event(*e) for e in events)

    def poll(self, timeout=None):
        """The next event, or None after `timeout` seconds (None: wait forever)."""
        if not self._pending:
            end = None if timeout is None else time.monotonic() + timeout
            while not self._pending:
                left = -1 if end is None else max(0, int((end - time.monotonic()) * 1000))
                self._fetch(left)
                if end is not None and time.monotonic() >= end:
                    break
        return self._pending.pop(0) if self._pending else None

    def events(self, timeout=0.0):
        """The events that arrive until none came for `timeout` seconds."""
        while True:
            ev = self.poll(timeout)
            if ev is None:
                return
            yield ev

    def __iter__(self):
        return self.events(None)

    def close(self):
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _privileged():
    """Whether this process makes environments as root does (device
    nodes by mknod()): uid 0 with CAP_MKNOD in the initial user namespace,
    the one that maps every uid to itself.  Root of a container's user
    namespace is not: the kernel refuses it mknod() of a device."""
    if os.geteuid() != 0:
        return False
    try:
        with open("/proc/self/uid_map") as f:
            if f.read().split() != ["0", "0", "4294967295"]:
                return False
        with open("/proc/self/status") as f:
            eff = next(line.split()[1] for line in f if line.startswith("CapEff:"))
    except (OSError, StopIteration):
        return True     # no /proc: nothing says otherwise
    return bool(int(eff, 16) >> 27 & 1)     # CAP_MKNOD


def _own_namespaces():
    """A process that is not root could not come back from an environment
    made in a user namespace of its own: once, it becomes the owner of a
    user namespace (its uid and gid mapped to themselves) with a copy of
    the host's mounts, where its environments are made and close()
    returns (docs/python.md); the process keeps the host's network.
    Return: True, or False when user namespaces are refused to it (Run()
    then says which setting refuses them)."""
    try:
        _classfs.own_namespaces(False)
    except OSError as e:
        if e.errno not in (errno.EPERM, errno.EACCES, errno.ENOSPC, errno.EUSERS):
            raise
        return False
    return True


# The testbed the thread that made it sees: the newest one this process
# made or joined (as umockdev's newest testbed is the one programs see),
# named by a token of its own (a weak reference is cleared before a
# collected testbed's close() runs).  _home: what to go back to when it
# closes: the namespaces, root and working directory the thread had
# before the first environment it entered (None when it entered none),
# and the environment variables as they were.
_current = None         # (token, weakref.ref to the Testbed)
_home_ns = None         # saved namespaces, as _classfs.enter() returns them
_home_cwd = None
_home_env = {}


def _current_testbed():
    return _current[1]() if _current is not None else None


def _forget(saved):
    for fd in saved:
        os.close(fd)


def _own_namespaces_early():
    """At import: a process that is not root and not inside an environment
    becomes the owner of a user namespace (keeping the host's network)
    while it has one thread, so that its testbeds can be made later from
    any thread.  Nothing happens where that is refused (Testbed() then
    says why) or when the process already has threads."""
    if _privileged() or os.environ.get(_classfs.SOCKET_ENV):
        return
    try:
        _own_namespaces()
    except OSError:
        pass


class Testbed:
    """A tree of devices that code in this process and its children see
    as /sys, /dev and /run/udev.

    Outside an environment it makes one (as classfs-run does, in the
    `devices` layout: /sys/devices/... paths) and moves the calling thread
    (and what it starts) into it; inside one (CLASSFS_SOCKET set by
    `classfs-run -- python3 -m pytest`) it joins it.  A testbed made while
    another is open is the one seen from then on.  close() removes what it
    added and stops what it started.
    """

    def __init__(self, records=(), sample=False, socket=None, daemon=None, verbose=False):
        self._run = None
        self._remote_nodes = None
        self._attached_nodes = set()
        self._token = object()
        self._entered = False
        self._client = None
        self._sync = None
        self._added = []          # devpaths this testbed made, in order
        self._batch = None        # record paragraphs waiting for the end of batch()
        self._batch_class = {}    # their class (None: bus device), by devpath
        # the environment this process was started in (classfs-run), not
        # one a testbed of ours made and set CLASSFS_SOCKET for
        socket = socket or (os.environ.get(_classfs.SOCKET_ENV) if _home_ns is None else None)
        try:
            if socket:
                self._join(socket)
                self._joined()
                self._become_current({})
                for f in records:
                    self.load(f)
            else:
                self._start(records, sample, daemon, verbose)
        except BaseException:
            self.close()
            raise

    def _become_current(self, env):
        """This testbed is the one seen from now on: set `env` in the
        process environment (remembering what was there for close())."""
        global _current
        for key, value in env.items():
            _home_env.setdefault(key, os.environ.get(key))
            os.environ[key] = value
        _current = (self._token, weakref.ref(self))

    def _joined(self):
        """Called once joined, before this testbed is the current one."""

    def _is_current(self):
        return _current is not None and _current[0] is self._token

    def _leave(self):
        """The thread back where it was before the first environment it
        entered (the environment variables stay)."""
        global _home_ns
        if _home_ns is not None:
            saved, _home_ns = _home_ns, None
            # False only after joining an environment's own user namespace
            # (_own_namespaces() failed): the thread stays, /sys unserved
            self.left = _classfs.leave(saved)
            try:
                os.chdir(_home_cwd)
            except OSError:
                pass
        self._entered = False

    def _go_home(self):
        """Back to what the thread saw before any testbed, if this one is
        the testbed it sees."""
        global _current, _home_env
        if not self._is_current():
            return
        _current = None
        try:
            self._leave()
        finally:
            for key, value in _home_env.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
            _home_env = {}

    # -- making and joining the environment ------------------------------

    def _start(self, records, sample, daemon, verbose):
        refused = not _privileged() and not _own_namespaces()
        # an environment is made from where the thread was before it
        # entered any: this one replaces the one it sees now
        previous = _current_testbed()
        if previous is not None and previous._entered:
            previous._leave()
        try:
            self._run = _classfs.Run(records=list(records) or None, sample=sample,
                                     layout=_classfs.LAYOUT_DEVICES,
                                     daemon=daemon or os.environ.get("CLASSFSD"),
                                     verbose=verbose)
        except OSError as e:
            # no environment for this user here (ENOSPC for a limit of 0)
            if refused and not isinstance(e, PermissionError):
                raise PermissionError(e.errno, e.strerror) from e
            raise
        socket = self._run.socket
        self._enter()
        self._become_current({_classfs.SOCKET_ENV: socket, "SYSTEMD_DEVICE_VERIFY_SYSFS": "0"})
        self._connect(socket)

    def _enter(self):
        """Move the calling thread into the environment; the first one
        entered keeps where the thread was, for close()."""
        global _home_ns, _home_cwd
        cwd = os.getcwd()
        saved = _classfs.enter(self._run)
        if _home_ns is None:
            _home_ns, _home_cwd = saved, cwd
        else:
            _forget(saved)
        previous = _current_testbed()
        if previous is not None:
            previous._entered = False
        self._entered = True
        try:
            os.chdir(cwd)
        except OSError:
            os.chdir("/")

    def _join(self, socket):
        self._connect(socket)

    def _connect(self, socket):
        self.socket = socket
        self._client = _classfs.Client(socket)
        _, layout, seqnum, mountpoint = self._client.status()
        self.layout = "devices" if layout == _classfs.LAYOUT_DEVICES else "class"
        if self.layout != "devices":
            raise OSError(95, f"the tree of {socket} is in the class layout: a Testbed "
                              "needs the devices layout (classfs-run --layout devices)")
        self.sys_dir = "/sys"
        if mountpoint and os.path.isdir(mountpoint) and not _same_fs("/sys", mountpoint):
            # a daemon mounted beside the host's /sys (classfsd --mount DIR)
            self.sys_dir = mountpoint
        if self.sys_dir == "/sys" and not os.path.exists("/sys/devices"):
            raise OSError(f"/sys here is not the tree of {socket}")
        self._sync = _classfs.Sync() if self.sys_dir == "/sys" else None
        self._seqnum = seqnum

    def close(self):
        """Remove what this testbed added and stop what it started; a
        failure to do so is raised once everything is closed."""
        failure = None
        if self._client is not None:
            if self._run is None and self._batch is None:
                try:
                    self._clear_added()
                except OSError as e:
                    failure = e
            self._client.close()
            self._client = None
        self._sync = None
        if self._remote_nodes is not None:
            # the environment stays: what this testbed put on its nodes goes
            remote, self._remote_nodes = self._remote_nodes, None
            for node in self._attached_nodes:
                try:
                    remote.detach_ioctl(node)
                except OSError:
                    pass
            remote.close()
        self._go_home()
        self._entered = False
        if self._run is not None:
            run, self._run = self._run, None
            run.stop()
        if failure is not None:
            raise failure

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # -- waiting for the environment --------------------------------------

    def _settle(self):
        """Return once the environment applied every event made so far:
        nodes, database entries exist and libudev monitors got them."""
        _, _, seqnum, _ = self._client.status()
        if seqnum > self._seqnum and self._sync is not None:
            if not self._sync.wait(seqnum, SYNC_TIMEOUT_MS):
                raise TimeoutError(f"the environment did not apply event {seqnum} "
                                   f"within {SYNC_TIMEOUT_MS} ms")
        self._seqnum = seqnum

    def _settle_add(self, devpath):
        """Return once the environment broadcast the add of the device
        just loaded at `devpath` (so its node and database entry exist):
        the last event of its load, waited for without asking the daemon
        for its SEQNUM."""
        if self._sync is None:
            self._settle()
            return
        seqnum = self._sync.wait_add(devpath, self._seqnum, SYNC_TIMEOUT_MS)
        if not seqnum:
            raise TimeoutError(f"the environment did not apply the add of {devpath} "
                               f"within {SYNC_TIMEOUT_MS} ms")
        self._seqnum = seqnum

    # -- paths and identities ---------------------------------------------

    def _sys(self, devpath):
        return self.sys_dir + devpath

    def _rel(self, path):
        """`/devices/...` of a path given as /sys/..., or as the tree's
        relative path ("devices/...")."""
        path = os.fspath(path)
        if path.startswith(self.sys_dir + "/"):
            return path[len(self.sys_dir):]
        if path.startswith("/sys/"):
            return path[4:]
        if path.startswith(("/devices/", "/class/", "/bus/")):
            return path
        if not path.startswith("/"):
            return "/" + path
        raise ValueError(f"{path} is not below {self.sys_dir}")

    def identity(self, path):
        """(class, name) of the device at `path` (class None: a physical
        device), as the client library names it."""
        full = self._sys(self._rel(path))
        try:
            link = os.readlink(full + "/subsystem")
        except FileNotFoundError:
            # a plain device has no subsystem; a glue directory is no device
            if not os.path.exists(full + "/uevent"):
                raise FileNotFoundError(2, "no such device", full) from None
            return None, os.path.basename(full)
        kind = os.path.basename(os.path.dirname(link))
        if kind == "class":
            return os.path.basename(link), os.path.basename(full)
        return None, os.path.basename(full)

    def _place(self, subsystem, name, parent):
        """(devpath for the record, whether a bus device)."""
        bus = _classfs.is_bus(subsystem) if subsystem else True
        if parent is None:
            base = "/devices" if bus else "/devices/virtual/" + subsystem
            return f"{base}/{name}", bus
        prel = self._rel(parent)
        if prel in self._batch_class:
            pcls = self._batch_class[prel]
        else:
            pcls, _ = self.identity(prel)
        if bus or pcls is not None:
            # a bus device below anything; a class device below a class device
            return f"{prel}/{name}", bus
        # a class device of a physical device: in the glue directory named after its class
        return f"{prel}/{subsystem}/{name}", bus

    # -- devices ----------------------------------------------------------

    def add_device(self, subsystem, name, parent=None, attributes=None, properties=None,
                   dev=None, devtype=None, node=None):
        """Add a device; return its path below sys_dir.

        `subsystem`: a bus type (pci, usb, ...: a physical device) or a
        class (block, input, net, ...: a class device, nested in `parent`
        when that is a device of the same class).  `attributes` and
        `properties`: dicts of str or bytes.  `dev`: (major, minor) or
        "M:m", which gives the device its number and a /dev node (`node`,
        else DEVNAME, else `name`).  Raises OSError (EEXIST, ENOENT, ...)
        or ValueError; on error nothing is added.
        """
        if not name or "/" in name or name in (".", ".."):
            raise ValueError(f"bad device name {name!r}")
        devpath, bus = self._place(subsystem, name, parent)
        return self._add_at(devpath, bus, subsystem, name, attributes, properties, dev,
                            devtype, node)

    def _add_at(self, devpath, bus, subsystem, name, attributes, properties, dev=None,
                devtype=None, node=None):
        """Add a device at `devpath` (below /sys); add_device() says the rest."""
        attributes = dict(attributes or {})
        properties = dict(properties or {})
        if devtype is not None:
            properties["DEVTYPE"] = devtype
        if dev is not None:
            attributes["dev"] = dev if isinstance(dev, str) else "%d:%d" % tuple(dev)
        if "dev" in attributes and node is None:
            node = properties.get("DEVNAME", os.path.basename(name))
        if node and node.startswith("/dev/"):
            node = node[5:]
        # the environment puts the record's properties in the udev database
        # entry and in the events it broadcasts, as udev would after its rules
        rec = paragraph(devpath, subsystem, attributes, properties, node=node)
        if self._batch is not None:
            if devpath in self._batch_class:
                raise FileExistsError(17, "already added in this batch", self._sys(devpath))
            self._batch.append(rec)
            self._batch_class[devpath] = None if bus else subsystem
            return self._path_of(devpath)
        self._client.load(rec, f"add_device({subsystem}, {name})")
        self._added.append(devpath)
        self._settle_add(devpath)
        return self._path_of(devpath)

    @contextlib.contextmanager
    def batch(self):
        """Add many devices at once: add_device() calls inside the block
        return their paths at once, and the devices are loaded together
        (one record, all or nothing) when it ends; they are visible after
        it.  An exception in the block adds none."""
        if self._batch is not None:
            raise RuntimeError("batch() is not reentrant")
        self._batch, self._batch_class = [], {}
        try:
            yield self
            data = b"".join(self._batch)
            made = list(self._batch_class)
        finally:
            self._batch, self._batch_class = None, {}
        if data:
            self._client.load(data, "Testbed.batch()")
            self._added.extend(made)
            self._settle()

    def _path_of(self, devpath):
        return self._sys(devpath)

    def load(self, path):
        """Load a umockdev record file; ValueError (file:line: reason) for a bad one."""
        with open(path, "rb") as f:
            data = f.read()
        return self._load(data, os.fspath(path))

    def load_string(self, text, name="<string>"):
        """Load a umockdev record given as str or bytes."""
        if isinstance(text, str):
            text = text.encode("utf-8", "surrogateescape")
        return self._load(text, name)

    def _load(self, data, name):
        paths = record_paths(data)
        self._client.load(data, name)
        self._added.extend(paths)
        self._settle()
        return [self._path_of(p) for p in paths]

    def _remove_at(self, path):
        """Remove the device at `path`: by its class and name, or by its
        path when they find another device (its class link was unlinked
        through /sys and a device of that name added since)."""
        cls, name = self.identity(path)
        rel = self._rel(path)
        if cls is not None:
            link = self._sys(f"/class/{cls}/{name}")
            if not os.path.exists(link) or \
                    os.path.realpath(link) != os.path.realpath(self._sys(rel)):
                self._client.device_remove_path(rel)
                return
        self._client.device_remove(cls, name)

    def remove_device(self, path):
        """Remove a device, the devices below it first (REMOVE events);
        returns once their nodes and database entries are gone."""
        left = self._made_for([path])
        self._remove_at(path)
        self._settle()
        self._wait_gone(left)

    def clear(self):
        """Remove every device this testbed added (children first)."""
        self._clear_added()

    def _clear_added(self):
        added = [p for p in set(self._added) if os.path.isdir(self._sys(p))]
        left = self._made_for(added)
        for devpath in sorted(added, key=lambda p: -p.count("/")):
            try:
                self._remove_at(devpath)
            except FileNotFoundError:
                pass
        self._added = []
        self._settle()
        self._wait_gone(left)

    def _made_for(self, paths, below=True):
        """The /dev nodes (with their number) and udev database entries of
        the devices at `paths` and (`below`) below them: the environment
        removes them after it broadcast their REMOVE events."""
        if self._sync is None:
            return []
        made = set()
        # the environment's /dev; host nodes bound into it (tty, null) stay
        devfs = os.stat("/dev").st_dev
        for path in paths:
            for top, dirs, files in os.walk(self._sys(self._rel(path))):
                if not below:
                    dirs.clear()
                if "uevent" not in files:
                    continue
                own = self._uevent_vars(top)
                number = (own.get("MAJOR"), own.get("MINOR"))
                if own.get("DEVNAME") and None not in number:
                    node = "/dev/" + own["DEVNAME"]
                    try:
                        st = os.lstat(node)
                        if st.st_dev == devfs and \
                                st.st_rdev == os.makedev(int(number[0]), int(number[1])):
                            made.add((node, st.st_rdev))
                    except (OSError, ValueError):
                        pass
                try:
                    db = self._db_file(top)
                    if os.path.exists(db) and not self._db_taken(db, top):
                        made.add((db, None))
                except OSError:
                    pass
        return made

    def _db_taken(self, db, top):
        """Is "+SUBSYSTEM:NAME" database file `db` of the device at `top`
        another device's: one that took the name after the class link of
        `top` was unlinked (the environment gives it the file, as udev)?"""
        base = os.path.basename(db)
        if not base.startswith("+") or ":" not in base:
            return False
        link = self.sys_dir + "/class/" + base[1:].replace(":", "/", 1)
        return os.path.lexists(link) and os.path.realpath(link) != os.path.realpath(top)

    def _wait_gone(self, made):
        """Wait until the environment removed what _made_for() found (a
        node of another number at the same name, made since, counts as gone)."""
        end = time.monotonic() + SYNC_TIMEOUT_MS / 1000
        for name, rdev in made:
            while True:
                try:
                    st = os.lstat(name)
                    if rdev is not None and st.st_rdev != rdev:
                        break
                except FileNotFoundError:
                    break
                if time.monotonic() > end:
                    raise TimeoutError(f"the environment did not remove {name}")
                time.sleep(0.0005)

    # -- attributes and properties ----------------------------------------

    def get_attribute(self, path, name, binary=False):
        """An attribute's value: str (bytes with binary=True)."""
        cls, dev = self.identity(path)
        value = self._client.attr_get(cls, dev, name)
        return value if binary else value.decode("utf-8", "surrogateescape")

    def set_attribute(self, path, name, value, binary=False):
        """Write an attribute (one store() with the whole value, as
        write(2)); a missing one is made, holding the value (mode 0644,
        binary with binary=True), as umockdev does."""
        cls, dev = self.identity(path)
        if isinstance(value, str):
            value = value.encode("utf-8", "surrogateescape")
        elif isinstance(value, int):
            value = str(value).encode()
        self._client.attr_add(cls, dev, name, bytes(value),
                              _classfs.ADD_BINARY if binary else 0)

    def set_attribute_link(self, path, name, target):
        """Make a symlink `name` in the device's directory whose text is
        `target` (root only; FileExistsError when `name` exists)."""
        cls, dev = self.identity(path)
        self._client.attr_add(cls, dev, name, os.fsencode(target), _classfs.ADD_LINK)

    def _db_file(self, path):
        """The device's file in /run/udev/data, as libudev names it."""
        full = self._sys(self._rel(path))
        subsystem = os.path.basename(os.readlink(full + "/subsystem"))
        try:
            with open(full + "/dev") as f:
                number = f.read().strip()
        except FileNotFoundError:
            number = None
        if number and ":" in number and not number.startswith("0:"):
            return "/run/udev/data/" + ("b" if subsystem == "block" else "c") + number
        if subsystem == "net":
            try:
                with open(full + "/ifindex") as f:
                    return "/run/udev/data/n" + f.read().strip()
            except FileNotFoundError:
                pass
        return f"/run/udev/data/+{subsystem}:{os.path.basename(full)}"

    def get_property(self, path, key):
        """A property as libudev sees it: the udev database's, else the
        `uevent` file's; None when the device has none."""
        props = self.properties(path)
        return props.get(key)

    def properties(self, path):
        """Every property of a device: its `uevent` file, then its udev database."""
        full = self._sys(self._rel(path))
        props = self._uevent_vars(full)
        try:
            with open(self._db_file(path), "rb") as f:
                for line in f.read().decode("utf-8", "surrogateescape").splitlines():
                    if line.startswith("E:"):
                        key, sep, value = line[2:].partition("=")
                        if sep:
                            props[key] = value
        except FileNotFoundError:
            pass
        return props

    @staticmethod
    def _uevent_vars(full):
        props = {}
        with open(full + "/uevent", "rb") as f:
            for line in f.read().decode("utf-8", "surrogateescape").splitlines():
                key, sep, value = line.partition("=")
                if sep:
                    props[key] = value
        return props

    def set_property(self, path, key, value):
        """Set a property in the device's udev database entry: libudev
        (pyudev, GUdev) reports it from now on; no event is sent (call
        uevent() for one) and the `uevent` file keeps the kernel's keys."""
        if self._sync is None:
            raise OSError(95, "set_property needs the environment's /run/udev "
                              "(this process is not inside it)")
        if not key or any(c in key for c in "=\n\0") or "\n" in str(value):
            raise ValueError(f"bad property {key}={value!r}")
        self._write_db(self._db_file(path), {key: value})

    def _write_db(self, db, props):
        """Set `props` in the udev database entry `db` (the file the
        environment made for the device: it also removes it)."""
        with open(db, encoding="utf-8", errors="surrogateescape") as f:
            lines = [line for line in f.read().splitlines()
                     if not line.startswith("E:") or line.partition("=")[0][2:] not in props]
        lines[0:0] = [f"E:{k}={v}" for k, v in props.items()]
        tmp = db + ".tmp"
        with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write("\n".join(lines) + "\n")
        os.rename(tmp, db)

    # -- events -----------------------------------------------------------

    def uevent(self, path, action, **variables):
        """Send an event for a device (add, remove, change, move, online,
        offline, bind, unbind); `variables` arrive as SYNTH_ARG_KEY=VALUE."""
        cls, name = self.identity(path)
        extra = [f"{k}={v}" for k, v in variables.items()] or None
        # a remove event is the device's own: those below it stay
        left = self._made_for([path], below=False) if action == "remove" else ()
        self._client.trigger(cls, name, action, extra)
        self._settle()
        self._wait_gone(left)

    def monitor(self):
        """A Monitor of every event from now on, in SEQNUM order."""
        return Monitor(self.socket)

    # -- programs ---------------------------------------------------------

    def run(self, args, **kw):
        """subprocess.run inside the environment."""
        self._check_inside()
        return subprocess.run(args, **kw)

    def popen(self, args, **kw):
        """subprocess.Popen inside the environment."""
        self._check_inside()
        return subprocess.Popen(args, **kw)

    def _check_inside(self):
        if self._sync is None:
            raise OSError(95, "this process is not inside the environment "
                              f"(its tree is mounted on {self.sys_dir})")

    # -- device nodes that answer -------------------------------------------

    def _nodes(self, what):
        """The environment whose nodes this testbed's methods reach: one
        this testbed made, or (started inside one) the one classfs-run
        serves on $CLASSFS_NODES_SOCKET."""
        if self._run is not None:
            return self._run
        if self._remote_nodes is None:
            path = os.environ.get(_nodes.NODES_ENV)
            if not path:
                raise OSError(95, f"{what}: this environment serves no device nodes "
                                  f"(${_nodes.NODES_ENV} is not set)")
            self._remote_nodes = _nodes.RemoteNodes(path)
        return self._remote_nodes

    @staticmethod
    def _header_node(text, pattern, what):
        """The node a recording names in its first line that is not a
        comment (@DEV of an ioctl file, `d 0` of a script, `# device` of
        evemu events), for a load with no node given."""
        for line in text.splitlines():
            m = re.match(pattern, line)
            if m:
                return m.group(1)
            if not line.startswith("#"):
                break
        raise ValueError(f"{what}: no node given, and the recording names none")

    @staticmethod
    def _read_recording(path):
        with open(path, "rb") as f:
            data = f.read()
        if os.fspath(path).endswith(".xz"):
            data = lzma.decompress(data)
        return data

    def load_ioctl(self, node, path):
        """Answer `node`'s ioctls from an ioctl recording (umockdev-record
        --ioctl; .xz compressed too).  `node` None: the one its @DEV line
        names."""
        data = self._read_recording(path)
        if node is None:
            node = self._header_node(data.decode("utf-8", "replace"),
                                     r"^@DEV (.*?)( \(([^)]*)\))?$", os.fspath(path))
        self._nodes("load_ioctl").load_data(_classfs.RECORDING_IOCTL, node, data,
                                            os.fspath(path))
        return True

    def load_script(self, node, path):
        """Play a read/write script on `node` (from now on); None: the
        node its `d 0` line names."""
        with open(path, "rb") as f:
            return self._load_played(_SCRIPT, node, f.read(), os.fspath(path))

    def load_script_from_string(self, node, script):
        return self._load_played(_SCRIPT, node, script, "<string>")

    def wait_script(self, node):
        """Wait until the scripts on `node` played to their end; OSError
        (EPROTO) when the program wrote what they did not expect."""
        self._nodes("wait_script").wait_script(node)
        return True

    def load_evemu_events(self, node, path):
        """Play evemu-record's events on event node `node`; None: the one
        its `# device` line names."""
        with open(path, "rb") as f:
            return self._load_played(_EVEMU, node, f.read(), os.fspath(path))

    def load_evemu_events_from_string(self, node, events):
        return self._load_played(_EVEMU, node, events, "<string>")

    def _load_played(self, how, node, data, name):
        """A recording played on `node`: `how` is (method, kind, the
        header line naming the node when `node` is None)."""
        method, kind, header = how
        if isinstance(data, str):
            data = data.encode("utf-8", "surrogateescape")
        if node is None:
            node = self._header_node(data.decode("utf-8", "replace"), header, name)
        self._nodes(method).load_data(getattr(_classfs, kind), node, data, name)
        return True

    def load_pcap(self, sysfs, path):
        """Replay a usbmon capture (pcap, pcapng) as the traffic of the USB
        device at /sys path `sysfs`."""
        self._nodes("load_pcap").load(_classfs.RECORDING_PCAP, os.fspath(sysfs), os.fspath(path))
        return True

    def load_socket_script(self, path, sock_type, script_path):
        """Play a script to every client of a Unix stream socket at `path`."""
        if sock_type != _socket.SOCK_STREAM:
            raise OSError(errno.EINVAL, f"load_socket_script(): socket type {sock_type}: only "
                                        "SOCK_STREAM is played")
        self._nodes("load_socket_script").load(_classfs.RECORDING_UNIX_STREAM, os.fspath(path),
                                               os.fspath(script_path))
        return True

    def get_dev_fd(self, node):
        """The other end of character device `node` (a pty's master): what
        is written there the program reads; -1 for none."""
        return self._nodes("get_dev_fd").dev_fd(node)

    def attach_ioctl(self, node, handler):
        """`handler(call)` answers `node`'s ioctls: call.request, call.arg,
        call.read(addr, n), call.write(addr, data); it returns the result,
        a -errno, or None to leave the call to the descriptor."""
        self._nodes("attach_ioctl").attach_ioctl(node, handler)
        self._attached_nodes.add(node)

    def detach_ioctl(self, node):
        self._nodes("detach_ioctl").detach_ioctl(node)

    def save(self, path=None):
        """The tree (or one device and its parents) as a umockdev record."""
        return self._client.save(None if path is None else self._rel(path)).decode(
            "utf-8", "surrogateescape")


def _same_fs(a, b):
    try:
        return os.stat(a).st_dev == os.stat(b).st_dev
    except OSError:
        return False
