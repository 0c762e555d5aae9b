#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench/python/bench-loop.py [--quick] [--reps R] [--iters N] [--cpu C] BUILD-DIR

A Python loop, `with open(p) as f: f.read()` N times, on the same
recording under umockdev-run and under classfs-run, and on the kernel's
own sysfs, in the same run; prints a markdown table (docs/bench-fs.md,
through bench/run/loop.sh).

The recording is tests/record/data/debian12-vm.umockdev (classfs-run in
the `devices` layout, so both see it at its recorded paths); the files are
its disk's `size` (a recorded attribute: a stored value under classfs-run)
and `uevent` (computed by classfs-run at each read; a file umockdev-run
writes at start).  The sysfs reference is the same path on this machine
when it has it (a virtio disk vda at that PCI address), else lo's ifindex
and uevent.

Every command runs pinned to one CPU with `taskset` (the reader, and
classfs-run's daemon, which inherits the affinity).  Each run starts each
runner once (the order rotating per run); the reader warms up, then times N
reads of each file; figures are medians of the runs, ratios the median of
the runs' ratios.

Requests: after the timed runs each runner's reader counts the FUSE
requests of N reads (the kernel's fuse:fuse_request_send tracepoint, in a
tracing instance of this benchmark's own, in a tracefs mounted in a private
mount namespace; lines of the reader's file's connection only).  The
machine's own tracing settings are not touched; the instance is removed.

Internal modes (what the driver runs):
    bench-loop.py read N [--trace INSTANCE] PATH...   the reader
    bench-loop.py count ARGS...                       the counting pass
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
RECORD = os.path.join(SRC, "tests/record/data/debian12-vm.umockdev")
DISK = "/sys/devices/pci0000:00/0000:00:02.0/virtio1/block/vda"
# (file, row, what it is under classfs-run, the loop's open(): text, or
# binary unbuffered, which makes no isatty() and so no ioctl: no target,
# it shows what the ioctl costs)
FILES = [("size", "recorded attribute `size`", "stored value", "text"),
         ("uevent", "`uevent`", "computed at each read", "text"),
         ("size", "`size`, `open(p, \"rb\", buffering=0)`", "stored value, no isatty()", "raw")]
RUNNERS = ["umockdev-run", "classfs-run", "sysfs"]
PY = "/usr/bin/python3"


# ---- the reader (runs under each runner) ----

def loop(spec, n):
    """n reads as a Python program makes them: open() (text mode: an
    fstat, and an isatty() that is an ioctl TCGETS), read() (an fstat for
    the size, the reads up to EOF), close; microseconds per read.  A spec
    "raw:PATH" opens binary unbuffered (no isatty())."""
    if spec.startswith("raw:"):
        path = spec[4:]
        t0 = time.perf_counter()
        for _ in range(n):
            with open(path, "rb", buffering=0) as f:
                f.read()
    else:
        t0 = time.perf_counter()
        for _ in range(n):
            with open(spec) as f:
                f.read()
    return (time.perf_counter() - t0) / n * 1e6


def put(inst, name, text):
    with open(os.path.join(inst, name), "w") as f:
        f.write(text)


def tally(inst, dev, n):
    """FUSE requests of the connection whose files have st_dev @dev, per
    read, by opcode; {} when none."""
    # the event's connection is the kernel's dev_t: major << 20 | minor
    conn = f"connection {os.major(dev) << 20 | os.minor(dev)} "
    ops = {}
    with open(os.path.join(inst, "trace")) as f:
        for line in f:
            if line.startswith("#") or conn not in line:
                continue
            name = line.split("(FUSE_", 1)[1].split(")", 1)[0] if "(FUSE_" in line else "?"
            ops[name] = ops.get(name, 0) + 1
    return {k: v / n for k, v in ops.items()}


def reader(argv):
    n = int(argv[0])
    argv = argv[1:]
    inst = None
    if argv[:1] == ["--trace"]:
        inst, argv = argv[1], argv[2:]
    out = {}
    for spec in argv:
        loop(spec, max(n // 10, 100))   # lookups, caches
        if inst is None:
            out[spec] = loop(spec, n)
            continue
        put(inst, "trace", "")
        put(inst, "tracing_on", "1")
        loop(spec, n)
        put(inst, "tracing_on", "0")
        out[spec] = tally(inst, os.stat(spec.removeprefix("raw:")).st_dev, n)
    print(json.dumps(out))


# ---- the driver ----

def command(runner, build, cpu, reader_args):
    pin = ["taskset", "-c", str(cpu)]
    me = [PY, os.path.abspath(__file__), "read"] + reader_args
    if runner == "umockdev-run":
        return pin + ["umockdev-run", "-d", RECORD, "--"] + me
    if runner == "classfs-run":
        return pin + [os.path.join(build, "programs/classfs-run/classfs-run"),
                      "-L", "devices", "-d", RECORD, "--"] + me
    return pin + me


def paths(runner):
    """The reader's specs (one per row of FILES) for @runner."""
    disk = DISK
    stand_in = {"size": "/sys/class/net/lo/ifindex", "uevent": "/sys/class/net/lo/uevent"}
    if runner == "sysfs" and not all(os.path.exists(os.path.join(DISK, f)) for f in stand_in):
        disk = None
    return [("raw:" if how == "raw" else "") +
            (os.path.join(disk, f) if disk else stand_in[f]) for f, _, _, how in FILES]


def run(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"bench-loop: {' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()[:300]}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def count_pass(build, cpu, n):
    """In a private mount namespace (this process runs under `unshare
    -m`): tracefs mounted on a temporary directory, an instance of our own
    with the fuse request tracepoint on (tracing off until a reader turns
    it on around its loop), each runner's reader, then the instance and
    the mount removed.  Prints {runner: {path: {opcode: per read}}}."""
    top = tempfile.mkdtemp(prefix="bench-loop-trace.")
    out = {}
    try:
        subprocess.run(["mount", "-t", "tracefs", "-o", "nosuid,nodev,noexec", "nodev", top],
                       check=True)
        inst = os.path.join(top, "instances", f"bench-loop-{os.getpid()}")
        os.mkdir(inst)
        try:
            # readable and writable by the readers: root without capabilities
            # under classfs-run (the owner's bits are enough)
            put(inst, "tracing_on", "0")
            put(inst, "events/fuse/fuse_request_send/enable", "1")
            for runner in RUNNERS:
                out[runner] = run(command(runner, build, cpu,
                                          [str(n), "--trace", inst] + paths(runner)))
        finally:
            try:
                put(inst, "events/fuse/fuse_request_send/enable", "0")
            finally:
                os.rmdir(inst)
    finally:
        subprocess.run(["umount", "-l", top])
        os.rmdir(top)
    print(json.dumps(out))


def machine():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} CPUs, {model}, kernel {os.uname().release}"


def umockdev_version():
    p = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "umockdev"],
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else "?"


def fmt(v):
    return "n/a" if v is None else f"{v:.2f}" if v < 10 else f"{v:.1f}"


def fmt_reqs(d):
    if d is None:
        return "n/a"
    total = sum(d.values())
    if not d:
        return "0"
    parts = ", ".join(f"{k} {v:.3g}" for k, v in sorted(d.items(), key=lambda kv: -kv[1]))
    return f"{total:.3g} ({parts})"


def main(argv):
    quick = "--quick" in argv
    argv = [a for a in argv if a != "--quick"]
    reps, iters, cpu = (3, 3000, None) if quick else (7, 20000, None)
    build = None
    while argv:
        a = argv.pop(0)
        if a == "--reps":
            reps = int(argv.pop(0))
        elif a == "--iters":
            iters = int(argv.pop(0))
        elif a == "--cpu":
            cpu = int(argv.pop(0))
        elif build is None and not a.startswith("-"):
            build = os.path.abspath(a)
        else:
            sys.exit(__doc__)
    if build is None:
        sys.exit(__doc__)
    if cpu is None:
        cpu = max(os.sched_getaffinity(0))    # the last one: CPU 0 takes most interrupts
    os.environ["CLASSFSD"] = os.path.join(build, "programs/classfsd/classfsd")
    for tool in ("taskset", "umockdev-run"):
        if not shutil.which(tool):
            print(f"bench-loop: {tool} missing", file=sys.stderr)
            return 77

    # us[runner][file index] = [per run]
    us = {r: [[] for _ in FILES] for r in RUNNERS}
    for rep in range(reps):
        for k in range(len(RUNNERS)):
            runner = RUNNERS[(k + rep) % len(RUNNERS)]
            got = run(command(runner, build, cpu, [str(iters)] + paths(runner)))
            for i, p in enumerate(paths(runner)):
                us[runner][i].append(got[p])

    reqs, note = None, ""
    if os.geteuid() != 0:
        note = "not counted: needs root (tracefs)"
    elif not os.path.isdir("/sys/kernel/tracing/events/fuse") and \
            not os.path.isdir("/sys/kernel/debug/tracing/events/fuse"):
        note = "not counted: no fuse tracepoints in this kernel"
    else:
        p = subprocess.run(["unshare", "-m", "--propagation", "private", PY,
                            os.path.abspath(__file__), "count", build, str(cpu), str(1000)],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode == 0:
            reqs = json.loads(p.stdout.strip().splitlines()[-1])
        else:
            why = p.stderr.strip().splitlines()[-1] if p.stderr.strip() else f"exit {p.returncode}"
            note = f"not counted: {why}"

    med = {r: [statistics.median(v) for v in us[r]] for r in RUNNERS}

    def ratio(a, b, i):
        return statistics.median(x / y for x, y in zip(us[a][i], us[b][i]))

    sysfs_paths = sorted(set(p.removeprefix("raw:") for p in paths("sysfs")))
    print(f"- date: {time.strftime('%Y-%m-%d', time.gmtime())}; machine: {machine()}")
    print(f"- command: `{os.environ.get('BENCH_LOOP_COMMAND') or ' '.join(sys.argv)}` "
          f"({PY}, Python {sys.version.split()[0]}; umockdev {umockdev_version()})")
    print()
    print(f"Python loop: `with open(p) as f: f.read()`, {iters} reads per run, "
          f"medians of {reps} runs (ratios: the median of the runs' ratios); every "
          f"command pinned with `taskset -c {cpu}` (the reader, and classfs-run's daemon). "
          f"umockdev-run and classfs-run (`-L devices`) on "
          f"`{os.path.relpath(RECORD, SRC)}`, file {DISK}/FILE; "
          f"sysfs: {', '.join(sysfs_paths)} on this machine.")
    print()
    print("| file | umockdev-run (us) | classfs-run (us) | sysfs (us) | "
          "classfs-run / umockdev-run | target | met? | classfs-run / sysfs | "
          "FUSE requests per read (classfs-run) |")
    print("| --- | ---: | ---: | ---: | ---: | --- | --- | ---: | --- |")
    for i, (name, label, kind, how) in enumerate(FILES):
        q = ratio("classfs-run", "umockdev-run", i)
        target, met = ("<= 1.1x", "yes" if q <= 1.1 else "**no**") if how == "text" else ("-", "-")
        cr = reqs["classfs-run"].get(paths("classfs-run")[i]) if reqs else None
        print(f"| {label} ({kind}) | {fmt(med['umockdev-run'][i])} | "
              f"{fmt(med['classfs-run'][i])} | {fmt(med['sysfs'][i])} | {q:.2f}x | "
              f"{target} | {met} | {ratio('classfs-run', 'sysfs', i):.2f}x | {fmt_reqs(cr)} |")
    print()
    if reqs:
        others = sorted(set(fmt_reqs(d) for r in ("umockdev-run", "sysfs")
                            for d in reqs[r].values()))
        print("FUSE requests: the kernel's fuse:fuse_request_send tracepoint in a tracing "
              "instance of the benchmark's own, on during 1000 reads of each file, lines of "
              "the file's own connection; by opcode in parentheses (umockdev-run and sysfs: "
              f"{', '.join(others)} for every file).")
    else:
        print(f"FUSE requests: {note}.")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["read"]:
        reader(sys.argv[2:])
    elif sys.argv[1:2] == ["count"]:
        count_pass(os.path.abspath(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit(main(sys.argv[1:]))
