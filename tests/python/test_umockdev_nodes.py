# SPDX-License-Identifier: LGPL-2.1-or-later
"""Device nodes that answer, through classfs.umockdev as umockdev's own
tests use them: a Python IoctlBase answering this very process's
ioctl(), a node's other end (get_dev_fd) talking with a program, a
script and evemu events played, an ioctl recording replayed, and the
errors umockdev gives.  In an environment this process was started in
(classfs-run) the same, through the nodes classfs-run serves it."""
import errno
import fcntl
import os
import select
import struct
import subprocess
import sys

import pytest

from classfs import umockdev as UMockdev

# a keyboard's queries in umockdev's ioctl format (our own made-up device;
# a name's data is as long as the buffer the program gives, 256 bytes)
KBD_IOCTL = """@DEV /dev/input/event3
EVIOCGVERSION 0 01000100
EVIOCGNAME(0) 22 636C61737366732074657374206B6579626F61726400""" + "00" * 234 + """
"""
KBD_RECORD = """P: /devices/platform/kbd/input/input3/event3
N: input/event3
E: DEVNAME=/dev/input/event3
E: MAJOR=13
E: MINOR=67
E: SUBSYSTEM=input
A: dev=13:67

P: /devices/platform/kbd/input/input3
E: SUBSYSTEM=input
A: name=classfs test keyboard

P: /devices/platform/kbd
E: SUBSYSTEM=platform
"""
EVIOCGVERSION = 0x80044501
EVIOCGNAME_256 = 0x81004506
INPUT_EVENT = struct.Struct("llHHi")


@pytest.fixture
def tb(umockdev_testbed):
    return umockdev_testbed


def test_custom_ioctl_of_this_process(tb):
    """umockdev's test_custom_ioctl, with a second request left to the node"""
    handler = UMockdev.IoctlBase()
    seen = []

    def handle_ioctl(handler, client, tag):
        seen.append((tag, client.get_request(), client.get_devnode()))
        if client.get_request() != 1:
            return False
        data = client.get_arg().resolve(0, 8)
        assert data.retrieve() == struct.pack("l", -1)
        data.update(0, struct.pack("l", 1))
        client.complete(99, 0)
        return True

    handler.connect("handle-ioctl", handle_ioctl, "tag")
    tb.add_from_string("P: /devices/test\nN: test\nE: SUBSYSTEM=test")
    tb.attach_ioctl("/dev/test", handler)
    fd = os.open("/dev/test", os.O_RDONLY)
    try:
        arg = bytearray(struct.pack("l", -1))
        assert fcntl.ioctl(fd, 1, arg, True) == 99
        assert struct.unpack("l", arg)[0] == 1
        # not handled: ENOTTY, as umockdev answers
        with pytest.raises(OSError) as e:
            fcntl.ioctl(fd, 2, bytearray(8), True)
        assert e.value.errno == errno.ENOTTY
        assert seen == [("tag", 1, "/dev/test"), ("tag", 2, "/dev/test")]
        tb.detach_ioctl("/dev/test")
        with pytest.raises(OSError) as e:
            fcntl.ioctl(fd, 1, bytearray(8), True)
        assert e.value.errno == errno.ENOTTY
        assert len(seen) == 2
    finally:
        os.close(fd)


def test_handler_error_reaches_the_program(tb):
    class Busy(UMockdev.IoctlBase):
        def do_handle_ioctl(self, client):
            client.complete(-1, errno.EBUSY)
            return True

    tb.add_from_string(KBD_RECORD)
    tb.attach_ioctl("/dev/input/event3", Busy())
    fd = os.open("/dev/input/event3", os.O_RDONLY)
    try:
        with pytest.raises(OSError) as e:
            fcntl.ioctl(fd, EVIOCGVERSION, bytearray(4), True)
        assert e.value.errno == errno.EBUSY
    finally:
        os.close(fd)


def test_dev_fd_talks_with_a_program(tb):
    tb.add_from_string(KBD_RECORD)
    master = tb.get_dev_fd("/dev/input/event3")
    assert master >= 0
    prog = subprocess.Popen(
        [sys.executable, "-c",
         "import os, stat; fd = os.open('/dev/input/event3', os.O_RDWR); "
         "st = os.fstat(fd); print(stat.S_ISCHR(st.st_mode), os.major(st.st_rdev), "
         "os.minor(st.st_rdev), flush=True); os.write(fd, b'ping'); "
         "print(os.read(fd, 4).decode(), flush=True)"],
        stdout=subprocess.PIPE, text=True)
    assert select.select([master], [], [], 10)[0]
    assert os.read(master, 4) == b"ping"
    os.write(master, b"pong")
    out, _ = prog.communicate(timeout=10)
    assert out.split() == ["True", "13", "67", "pong"]
    # block and USB nodes have no other end
    assert tb.get_dev_fd("/dev/nonexistent") == -1


def test_ioctl_recording_and_evemu_events(tb):
    tb.add_from_string(KBD_RECORD)
    ioctl = os.path.join(tb.get_root_dir(), "keyboard.ioctl")
    with open(ioctl, "w") as f:
        f.write(KBD_IOCTL)
    tb.load_ioctl(None, ioctl)     # for the node its @DEV line names
    tb.load_evemu_events_from_string(
        "/dev/input/event3",
        "E: 0.000000 0001 001e 0001\nE: 0.000000 0000 0000 0000\n"
        "E: 0.050000 0001 001e 0000\nE: 0.050000 0000 0000 0000\n")
    fd = os.open("/dev/input/event3", os.O_RDONLY)
    try:
        buf = bytearray(4)
        fcntl.ioctl(fd, EVIOCGVERSION, buf, True)
        assert struct.unpack("i", buf)[0] == 0x10001
        name = bytearray(256)
        fcntl.ioctl(fd, EVIOCGNAME_256, name, True)
        assert name.rstrip(b"\0") == b"classfs test keyboard"
        events = []
        while len(events) < 4:
            data = os.read(fd, INPUT_EVENT.size)
            events.append(INPUT_EVENT.unpack(data)[2:])
        assert events == [(1, 30, 1), (0, 0, 0), (1, 30, 0), (0, 0, 0)]
        # evdev requests the recording lacks: ENOENT, as umockdev's replay
        with pytest.raises(OSError) as e:
            fcntl.ioctl(fd, 0x80084504, bytearray(8), True)     # EVIOCGKEYCODE
        assert e.value.errno == errno.ENOENT
    finally:
        os.close(fd)


def test_script_and_wait_script(tb):
    tb.add_from_string(KBD_RECORD)
    tb.load_script_from_string("/dev/input/event3", "w 0 hello\nr 0 world\n")
    fd = os.open("/dev/input/event3", os.O_RDWR)
    try:
        os.write(fd, b"hello")
        assert os.read(fd, 5) == b"world"
        assert tb.wait_script("/dev/input/event3")
        # a write the script does not expect
        tb.load_script_from_string("/dev/input/event3", "w 0 expected\n")
        os.write(fd, b"other...")
        with pytest.raises(OSError) as e:
            tb.wait_script("/dev/input/event3")
        assert e.value.errno == errno.EPROTO and "<string>:1" in str(e.value)
    finally:
        os.close(fd)


def test_errors(tb):
    tb.add_from_string(KBD_RECORD)
    with pytest.raises(FileNotFoundError):
        tb.load_ioctl("/dev/input/event3", "/nonexistent.ioctl")
    bad = os.path.join(tb.get_root_dir(), "bad.ioctl")
    with open(bad, "w") as f:
        f.write("EVIOCGVERSION 0 01000100\nEVIOCGNOPE 0 00\n")
    with pytest.raises(ValueError, match="bad.ioctl:2"):
        tb.load_ioctl("/dev/input/event3", bad)
    with pytest.raises(ValueError, match="names none"):
        tb.load_script_from_string(None, "w 0 x\n")
    with pytest.raises(OSError) as e:
        tb.attach_ioctl("/dev/null", UMockdev.IoctlBase())
    assert e.value.errno == errno.ENODEV
    with pytest.raises(TypeError):
        tb.attach_ioctl("/dev/input/event3", lambda call: 0)
    with pytest.raises(OSError) as e:
        tb.load_pcap("/sys/devices/platform/kbd", bad)
    assert e.value.errno == errno.ENODEV
