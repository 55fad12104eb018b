"""Base64 as Go's ``encoding/base64.StdEncoding`` decodes it, with its error positions.

kube-apiserver's storage decoders end with a base64-wrapped one (for Protobuf values
etcd2 once held as text): a value no other decoder reads is reported by that one, as
``illegal base64 data at input byte N``.  Python's decoder names no position, and skips
characters Go refuses; Go skips only ``\\r`` and ``\\n``.
"""

from __future__ import annotations

import string

_ALPHABET = string.ascii_uppercase + string.ascii_lowercase + string.digits + "+/"
_VALUE = {ord(c): i for i, c in enumerate(_ALPHABET)}
_NEWLINES = (ord("\r"), ord("\n"))
_PAD = ord("=")


class CorruptInput(ValueError):
    """Go's ``CorruptInputError``."""

    def __init__(self, offset: int) -> None:
        super().__init__(f"illegal base64 data at input byte {offset}")
        self.offset = offset


def decode(src: bytes) -> bytes:
    """``src`` decoded, quantum by quantum as Go's ``decodeQuantum``; raises CorruptInput."""
    out = bytearray()
    i = 0
    while i < len(src):
        i, chunk = _quantum(src, i)
        out += chunk
    return bytes(out)


def _quantum(src: bytes, i: int) -> tuple[int, bytes]:
    """Up to four characters from ``i`` (newlines skipped): the next index and their bytes."""
    values: list[int] = []
    while len(values) < 4:
        if i == len(src):
            if not values:
                return i, b""
            raise CorruptInput(i - len(values))  # StdEncoding pads: a short quantum is corrupt
        c = src[i]
        i += 1
        if c in _VALUE:
            values.append(_VALUE[c])
        elif c in _NEWLINES:
            continue
        elif c != _PAD or len(values) < 2:
            raise CorruptInput(i - 1)
        else:
            return _padded(src, i, values)
    n = values[0] << 18 | values[1] << 12 | values[2] << 6 | values[3]
    return i, n.to_bytes(3, "big")


def _padded(src: bytes, i: int, values: list[int]) -> tuple[int, bytes]:
    """After a ``=`` that ends a quantum of 2 or 3 characters: the rest must be padding."""
    if len(values) == 2:  # "==" is due; the first is read
        i = _past_newlines(src, i)
        if i == len(src):
            raise CorruptInput(len(src))
        if src[i] != _PAD:
            raise CorruptInput(i - 1)
        i += 1
    i = _past_newlines(src, i)
    if i < len(src):
        raise CorruptInput(i)  # trailing garbage
    full = [*values, 0, 0][:4]
    n = full[0] << 18 | full[1] << 12 | full[2] << 6
    return i, n.to_bytes(3, "big")[: len(values) - 1]


def _past_newlines(src: bytes, i: int) -> int:
    while i < len(src) and src[i] in _NEWLINES:
        i += 1
    return i
