"""Writing to a Twisted descriptor at once when nothing is queued before the write.

Twisted's descriptors queue every write and send it when the reactor next finds the
descriptor writable: an ``epoll_ctl`` to watch for writability, a reactor turn to notice
it, the write, and another ``epoll_ctl`` to stop watching.  A write the descriptor can
take at once (nearly all: its buffer is empty between requests) goes out in one system
call instead; the part it does not take is queued as before, so ordering, back-pressure
and error handling stay Twisted's.  Used by the server's TCP connections
(apiserver/eagerwrite.py), the LMDB writer process's input (storage/lmdb_process.py)
and the etcd client's connections (storage/etcd/channel.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from twisted.internet import tcp
from twisted.internet.abstract import FileDescriptor


def send_now(descriptor: FileDescriptor, data: bytes, send: Callable[[bytes], int]) -> bytes:
    """Send what ``send`` takes of ``data`` if nothing is queued; the rest to queue."""
    if (
        data
        and not descriptor._tempDataBuffer
        and descriptor.offset == len(descriptor.dataBuffer)
        and descriptor.connected
        and not descriptor.disconnecting
        and not descriptor._writeDisconnected
        and type(data) is bytes
    ):
        try:
            sent = send(data)
        except OSError:
            sent = 0  # would block, or broken: the queued path finds out and reports it
        return data[sent:]
    return data


def write_now(transport: Any, data: bytes) -> None:
    """``transport.write(data)``, what a plain TCP connection takes at once sent now
    (a TLS transport, or any other, writes as it always does)."""
    if isinstance(transport, tcp.Connection) and not transport.TLS:
        data = send_now(transport, data, transport.socket.send)
    if data:
        transport.write(data)
