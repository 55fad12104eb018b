"""kube's API server identity: one name per server per host, the same across restarts.

``apiserver-`` and the first 16 bytes of a SHA-256 of the host name and the component
name (each length-prefixed, as kube's cryptobyte builder writes them), in lower-case
base32: the name of the server's identity Lease (identitylease.py) and the id whose
hash labels its authorization metrics.  The component is kube's ``kube-apiserver``, the
value of the ``apiserver.kubernetes.io/identity`` label that tools select those Leases
by.
"""

from __future__ import annotations

import base64
import hashlib
import socket
import struct

COMPONENT = "kube-apiserver"


def _prefixed(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">H", len(data)) + data


def server_id(hostname: str | None = None) -> str:
    host = socket.gethostname() if hostname is None else hostname
    digest = hashlib.sha256(_prefixed(host) + _prefixed(COMPONENT)).digest()
    return "apiserver-" + base64.b32encode(digest[:16]).decode().rstrip("=").lower()
