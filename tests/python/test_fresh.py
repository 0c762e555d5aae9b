# SPDX-License-Identifier: LGPL-2.1-or-later
"""A value changed through the Python testbed is never read stale through
/sys by a reader that saw the change's uevent, with threads reading the
files in a loop meanwhile (keeping the kernel's cache of them hot).

The ways: classfs.Testbed.set_attribute() (through the daemon) of a
recorded attribute and of one it made; classfs.umockdev's set_attribute()
(a write through /sys, as umockdev's); a device removed and its record
loaded again with another value and number.  Each change is announced by
an event (uevent() with FRESH_SEQ, or the reloaded device's ADD), waited
for on a Monitor; then each file must read the new value by path, by its
stat size and through a descriptor kept open on it (a removed device's
kept descriptor reads an error, never its old bytes)."""
import os
import threading

import pytest

CHANGES = 60


def value(n):
    """Change n's value: "n:" and a letter, 1 to 700 bytes and a newline;
    every third change keeps the length of the one before."""
    m = n - 1 if n % 3 == 0 and n > 1 else n
    length = (m * 7919 + 13) % 700 + 1
    return (f"{n}:" + "abcdefghijklmnopqrstuvwxyz"[n % 26] * length)[:length] + "\n"


class Hammer:
    """Two threads that open, read and close the files until stopped."""

    def __init__(self, paths):
        self.paths = list(paths)
        self.reads = 0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(2)]

    def _run(self):
        while not self._stop.is_set():
            for p in self.paths:
                try:
                    with open(p, "rb") as f:
                        f.read()
                except OSError:
                    continue    # a device between its removal and its load
                with self._lock:
                    self.reads += 1

    def __enter__(self):
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        for t in self._threads:
            t.join()


class Reader:
    """Reads files after their change's event: by path, stat, a kept descriptor."""

    def __init__(self):
        self.held = {}
        self.stale = []

    def gone(self, path):
        """`path`'s kept descriptor is of a removed device: it reads an error."""
        fd = self.held.pop(path, None)
        if fd is None:
            return
        try:
            got = os.pread(fd, 8192, 0)
            self.stale.append(f"a descriptor on the removed {path} read {got[:24]!r}")
        except OSError:
            pass
        finally:
            os.close(fd)

    def check(self, n, path, want):
        want = want.encode()
        with open(path, "rb") as f:
            got = f.read()
        if got != want:
            self.stale.append(f"change {n}: {path} read {got[:24]!r} ({len(got)} bytes), "
                              f"not {want[:24]!r} ({len(want)} bytes)")
        size = os.stat(path).st_size
        if size != len(want):
            self.stale.append(f"change {n}: {path} stat size {size}, not {len(want)}")
        if path not in self.held:
            self.held[path] = os.open(path, os.O_RDONLY)
        else:
            got = os.pread(self.held[path], 8192, 0)
            if got != want:
                self.stale.append(f"change {n}: a descriptor on {path} read {got[:24]!r}")

    def close(self):
        for fd in self.held.values():
            os.close(fd)
        self.held = {}


def wait_event(mon, match):
    """The first event `match` takes (those before it are dropped)."""
    for ev in mon.events(10):
        if match(ev):
            return ev
    pytest.fail("the change's event did not come within 10 s")


def changes(tb, path, files, set_value):
    """CHANGES changes of `files` (names in the device at `path`) by
    set_value(name, value), each announced, then read."""
    reader = Reader()
    with tb.monitor() as mon, Hammer(os.path.join(path, f) for f in files) as hammer:
        try:
            for n in range(1, CHANGES + 1):
                for f in files:
                    set_value(f, value(n))
                tb.uevent(path, "change", FRESH_SEQ=n)
                wait_event(mon, lambda e: e.action == "change" and
                           e.properties.get("SYNTH_ARG_FRESH_SEQ") == str(n))
                for f in files:
                    reader.check(n, os.path.join(path, f), value(n))
        finally:
            reader.close()
    assert reader.stale == []
    assert hammer.reads > 0


def test_set_attribute_is_read_fresh(testbed):
    """classfs.Testbed.set_attribute(): a recorded attribute, and one it
    makes (a stored value) and then writes."""
    dev = testbed.add_device("fresh", "f0", attributes={"rec": "start\n"})
    testbed.set_attribute(dev, "made", "start\n")
    changes(testbed, dev, ["rec", "made"],
            lambda f, v: testbed.set_attribute(dev, f, v))


def test_umockdev_set_attribute_is_read_fresh(umockdev_testbed):
    """classfs.umockdev's set_attribute(): a write through /sys."""
    tb = umockdev_testbed
    dev = tb.add_device("fresh", "u0", None, ["rec", "start\n"], [])
    changes(tb, dev, ["rec"], lambda f, v: tb.set_attribute(dev, f, v))


def test_record_reload_is_read_fresh(testbed):
    """remove_device() and load_string() of its record with another value
    and number: the device's ADD announces them."""
    def record(n, v):
        return (f"P: /devices/virtual/fresh/r1\nE: SUBSYSTEM=fresh\nE: MODALIAS=fresh:{n}\n"
                f"A: dev=247:{n}\\n\nA: rec={v[:-1]}\\n\n")

    path = testbed.load_string(record(0, "start\n"))[0]
    files = ["rec", "dev"]
    reader = Reader()
    with testbed.monitor() as mon, Hammer(os.path.join(path, f) for f in files) as hammer:
        try:
            for n in range(1, CHANGES + 1):
                testbed.remove_device(path)
                testbed.load_string(record(n, value(n)))
                wait_event(mon, lambda e: e.action == "add" and
                           e.properties.get("MODALIAS") == f"fresh:{n}")
                for f in files:
                    reader.gone(os.path.join(path, f))
                reader.check(n, os.path.join(path, "rec"), value(n))
                reader.check(n, os.path.join(path, "dev"), f"247:{n}\n")
        finally:
            reader.close()
    assert reader.stale == []
    assert hammer.reads > 0
