"""Writing to a Twisted descriptor at once when nothing is queued before the write.

Twisted's descriptors queue every write and send it when the reactor next finds the
descriptor writable: an ``epoll_ctl`` to watch for writability, a reactor turn to notice
it, the write, and another ``epoll_ctl`` to stop watching.  A write the descriptor can
take at once (nearly all: its buffer is empty between requests) goes out in one system
call instead; the part it does not take is queued as before, so ordering, back-pressure
and error handling stay Twisted's.  Used by the server's TCP connections
(apiserver/eagerwrite.py), the LMDB writer process's input (storage/lmdb_process.py)
and the etcd client's connections (storage/etcd/channel.py), plain or under TLS.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from twisted.internet import tcp
from twisted.internet.abstract import FileDescriptor
from twisted.protocols.tls import TLSMemoryBIOProtocol


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


def write_eagerly(
    connection: tcp.Connection, data: bytes, queued_write: Callable[[bytes], None]
) -> None:
    """A TCP connection's write: sent at once what it takes, the rest to
    ``queued_write`` (Twisted's own write of that connection)."""
    # A closed connection has no socket: looked up only once it is known open.
    rest = send_now(connection, data, lambda chunk: connection.socket.send(chunk))  # noqa: PLW0108
    if rest or not data:
        queued_write(rest)


def send_eagerly(connection: tcp.Connection) -> None:
    """Make a TCP connection Twisted made (a client's: its class is not ours to choose)
    write eagerly, as ``EagerServer`` does; TLS writes its records through here.  Set
    on the instance, as Twisted's TLS sets its own write."""
    connection.write = partial(write_eagerly, connection, queued_write=connection.write)  # type: ignore[method-assign]


def write_now(transport: Any, data: bytes) -> None:
    """``transport.write(data)``, sent now where it can be: what a plain TCP connection
    takes at once; under TLS, the records of ``data`` at once to the TCP connection
    below (skipping TLS's aggregation of small writes into one a turn later, which
    callers that already write once a turn do not need), which sends them at once
    if ``send_eagerly`` made it eager.  Any other transport writes as it always does.
    A caller writes to a TLS transport only through here: a write queued in TLS's
    aggregation would go out after this one."""
    if isinstance(transport, TLSMemoryBIOProtocol):
        TLSMemoryBIOProtocol.write(transport, data)
        return
    if isinstance(transport, tcp.Connection) and not transport.TLS:
        data = send_now(transport, data, transport.socket.send)
    if data:
        transport.write(data)
