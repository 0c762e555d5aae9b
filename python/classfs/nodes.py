# SPDX-License-Identifier: LGPL-2.1-or-later
"""The device nodes of an environment this process was started in
(`classfs-run -- python3 ...`): its programs, this process included,
report to classfs-run's supervisor and may have none of their own, so
classfs-run serves the nodes on the socket $CLASSFS_NODES_SOCKET names
(src/run/run-serve.c has the messages).  RemoteNodes has the methods of
_classfs.Run that Testbed's node methods call."""

import os
import socket
import struct
import threading

from . import _classfs

NODES_ENV = "CLASSFS_NODES_SOCKET"

_LOAD, _DEV_FD, _WAIT, _ATTACH, _DETACH = 1, 2, 3, 4, 5
_REQUEST = struct.Struct("=Ii")
_REPLY = struct.Struct("=i")
_CALL = struct.Struct("=QQi")
_ANSWER = struct.Struct("=q")
_MSG_MAX = 8192


class RemoteCall:
    """An ioctl() a program made on a node, as _classfs.IoctlCall: its
    memory is read and written through /proc/PID/mem."""

    def __init__(self, node, request, arg, pid):
        self.node, self.request, self.arg, self.pid = node, request, arg, pid
        self._mem = None

    def _fd(self):
        if self._mem is None:
            self._mem = os.open(f"/proc/{self.pid}/mem", os.O_RDWR | os.O_CLOEXEC)
        return self._mem

    def read(self, addr, length):
        data = os.pread(self._fd(), length, addr)
        if len(data) != length:
            raise OSError(14, "reading the program's memory: Bad address")
        return data

    def write(self, addr, data):
        if os.pwrite(self._fd(), bytes(data), addr) != len(data):
            raise OSError(14, "writing the program's memory: Bad address")

    def close(self):
        if self._mem is not None:
            os.close(self._mem)
            self._mem = None


class RemoteNodes:
    """The nodes of the environment at `path` (a socket)."""

    def __init__(self, path):
        self.path = path
        self._dev_fds = {}

    def _connect(self):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET | socket.SOCK_CLOEXEC)
        try:
            s.connect(self.path)
        except OSError:
            s.close()
            raise
        return s

    def _ask(self, s, op, target, kind=0, name="", fd=None):
        msg = _REQUEST.pack(op, kind) + os.fsencode(target or "") + b"\0" + \
            os.fsencode(name) + b"\0"
        if fd is None:
            s.sendmsg([msg])
        else:
            socket.send_fds(s, [msg], [fd])
        data, fds, _, _ = socket.recv_fds(s, _MSG_MAX, 1)
        if len(data) < _REPLY.size:
            for f in fds:
                os.close(f)
            raise OSError(32, "the environment's node server went away")
        status = _REPLY.unpack_from(data)[0]
        text = data[_REPLY.size:].split(b"\0")[0].decode("utf-8", "replace")
        if status < 0:
            for f in fds:
                os.close(f)
            if status == -22:
                raise ValueError(text)
            raise OSError(-status, text or os.strerror(-status))
        return fds

    def _request(self, op, target, **kw):
        with self._connect() as s:
            return self._ask(s, op, target, **kw)

    def load(self, kind, target, path):
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        try:
            self._request(_LOAD, target, kind=kind, name=os.fspath(path), fd=fd)
        finally:
            os.close(fd)

    def load_data(self, kind, target, data, name):
        # the recording as a memfd: a descriptor is what the server reads
        fd = os.memfd_create("classfs-recording", os.MFD_CLOEXEC)
        try:
            os.write(fd, bytes(data))
            os.lseek(fd, 0, os.SEEK_SET)
            self._request(_LOAD, target, kind=kind, name=name, fd=fd)
        finally:
            os.close(fd)

    def wait_script(self, node):
        self._request(_WAIT, node)

    def dev_fd(self, node):
        """The node's other end: one descriptor per node, kept until close()."""
        if node not in self._dev_fds:
            try:
                fds = self._request(_DEV_FD, node)
            except OSError:
                return -1
            if not fds:
                return -1
            self._dev_fds[node] = fds[0]
        return self._dev_fds[node]

    def close(self):
        for fd in self._dev_fds.values():
            os.close(fd)
        self._dev_fds = {}

    def attach_ioctl(self, node, fn):
        s = self._connect()
        try:
            self._ask(s, _ATTACH, node)
        except BaseException:
            s.close()
            raise
        threading.Thread(target=self._serve, args=(s, fn), daemon=True,
                         name=f"classfs ioctl {node}").start()

    @staticmethod
    def _serve(s, fn):
        """Answer the node's calls until the server lets go of it."""
        with s:
            while True:
                try:
                    data = s.recv(_MSG_MAX)
                except OSError:
                    return
                if len(data) < _CALL.size:
                    return
                request, arg, pid = _CALL.unpack_from(data)
                node = os.fsdecode(data[_CALL.size:].split(b"\0")[0])
                call = RemoteCall(node, request, arg, pid)
                try:
                    result = fn(call)
                except Exception:       # the program gets EIO; the traceback is shown
                    import traceback
                    traceback.print_exc()
                    result = -5
                finally:
                    call.close()
                if result is None:
                    result = _classfs.IOCTL_PASS
                try:
                    s.send(_ANSWER.pack(int(result)))
                except OSError:
                    return

    def detach_ioctl(self, node):
        self._request(_DETACH, node)
