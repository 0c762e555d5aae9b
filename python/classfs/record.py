# SPDX-License-Identifier: LGPL-2.1-or-later
"""Paragraphs of umockdev records (docs/records.md) for the devices the
Testbed adds: a device is added by loading its paragraph, so that it gets
what a recorded device gets (bus or class by its subsystem, the udev
database of its properties, its /dev node), all before its ADD event."""

import re

__all__ = ["attribute_line", "paragraph", "record_paths"]


def _to_bytes(value, what):
    if isinstance(value, bytes):
        return value
    if isinstance(value, bytearray):
        return bytes(value)
    if isinstance(value, str):
        return value.encode("utf-8", "surrogateescape")
    if isinstance(value, (int, float)):
        return str(value).encode()
    raise TypeError(f"{what}: expected str, bytes or a number, got {type(value).__name__}")


_ESCAPED = re.compile(rb"[\x00-\x1f\x7f\\]")


def _escape_byte(match):
    b = match.group()[0]
    if b == 0x5C:
        return b"\\\\"
    if b == 0x0A:
        return b"\\n"
    return b"\\%03o" % b


def _escape(data):
    """The C escapes of an `A:` value: backslash, control bytes and DEL as
    octal (three digits: no ambiguity with what follows)."""
    return _ESCAPED.sub(_escape_byte, data)


_BAD_IN_NAME = re.compile("[\n=\0]")


def _check_name(name, what):
    if not name or _BAD_IN_NAME.search(name) or name != name.strip():
        raise ValueError(f"bad {what} name {name!r}")


def attribute_line(name, value, binary=False):
    """One `A:` (text) or `H:` (binary) line, without its newline."""
    _check_name(name, "attribute")
    data = _to_bytes(value, name)
    if binary or b"\0" in data:
        return b"H: " + name.encode() + b"=" + data.hex().encode()
    return b"A: " + name.encode() + b"=" + _escape(data)


def paragraph(devpath, subsystem, attributes, properties, links=(), node=None):
    """The record paragraph of one device at /sys`devpath` (`/devices/...`)."""
    lines = [b"P: " + devpath.encode()]
    if node:
        lines.append(b"N: " + node.encode())
    for key, value in properties.items():
        _check_name(key, "property")
        v = _to_bytes(value, key)
        if b"\n" in v:
            raise ValueError(f"property {key}: a value has no newline")
        lines.append(b"E: " + key.encode() + b"=" + v)
    if subsystem and "SUBSYSTEM" not in properties:
        lines.append(b"E: SUBSYSTEM=" + subsystem.encode())
    for name, target in links:
        lines.append(b"L: " + name.encode() + b"=" + target.encode())
    for name, value in attributes.items():
        lines.append(attribute_line(name, value))
    return b"\n".join(lines) + b"\n\n"


def record_paths(data):
    """The `P:` paths of a record, in order."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    return [line[2:].strip().decode("utf-8", "surrogateescape")
            for line in data.splitlines() if line.startswith(b"P:")]

