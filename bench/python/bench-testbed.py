#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench/python/bench-testbed.py [N] - build a testbed of N devices (1000)
through the Python API, beside umockdev's Testbed.add_device (add_devicev in C) through its
GObject bindings (gir1.2-umockdev-1.0, python3-gi) when installed, in the
same run; prints a markdown table (docs/python.md).

Each device: an input class device with a number (a /dev node), two
attributes and two properties.  Run as root from the source tree:
    PYTHONPATH=build/python CLASSFSD=build/programs/classfsd/classfsd \\
        /usr/bin/python3 bench/python/bench-testbed.py
"""
import os
import sys
import time

import classfs


def attrs(i):
    return {"name": f"Fake device {i}", "phys": f"usb-0000:00:14.0-{i}/input0"}


def props(i):
    return {"ID_INPUT": "1", "ID_SERIAL": f"fake_{i}"}


def bench_classfs(n, batch):
    t0 = time.monotonic()
    with classfs.Testbed() as tb:
        t1 = time.monotonic()
        if batch:
            with tb.batch():
                for i in range(n):
                    tb.add_device("input", f"event{i}", dev=(13, 64 + i),
                                  attributes=attrs(i), properties=props(i))
        else:
            for i in range(n):
                tb.add_device("input", f"event{i}", dev=(13, 64 + i),
                              attributes=attrs(i), properties=props(i))
        t2 = time.monotonic()
        seen = len(os.listdir("/sys/class/input"))
        nodes = sum(1 for f in os.listdir("/dev") if f.startswith("event"))
    return t1 - t0, t2 - t1, f"{seen} devices, {nodes} nodes"


def bench_umockdev(n):
    try:
        import gi
        gi.require_version("UMockdev", "1.0")
        from gi.repository import UMockdev
    except (ImportError, ValueError) as e:
        return None, None, f"not installed ({e})"
    t0 = time.monotonic()
    tb = UMockdev.Testbed.new()
    t1 = time.monotonic()
    for i in range(n):
        a, p = attrs(i), props(i)
        tb.add_device("input", f"event{i}", None,
                       [x for kv in dict(a, dev=f"13:{64 + i}").items() for x in kv],
                       [x for kv in dict(p, DEVNAME=f"/dev/event{i}").items() for x in kv])
    t2 = time.monotonic()
    seen = len(os.listdir(os.path.join(tb.get_sys_dir(), "class", "input")))
    del tb
    return t1 - t0, t2 - t1, f"{seen} devices"


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    rows = [("classfs.Testbed.add_device", *bench_classfs(n, False)),
            ("classfs.Testbed.add_device in batch()", *bench_classfs(n, True)),
            ("umockdev Testbed.add_device (GObject)", *bench_umockdev(n))]
    print(f"| {n} devices | testbed made (s) | devices added (s) | per device (ms) | result |")
    print("| --- | ---: | ---: | ---: | --- |")
    for name, start, add, what in rows:
        if start is None:
            print(f"| {name} | - | - | - | {what} |")
        else:
            print(f"| {name} | {start:.3f} | {add:.3f} | {add / n * 1000:.3f} | {what} |")


if __name__ == "__main__":
    main()
