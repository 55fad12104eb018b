"""HTTP/2 framing for the etcd client (RFC 9113), the few pieces grpcwire.py needs.

A client of one gRPC server needs little of HTTP/2's generality: its own request headers
never change but for the path and timeout, so they are encoded once as HPACK literals that
touch no dynamic table; the server's headers go through ``hpack``'s decoder, whose table
must follow the server's.  A general HTTP/2 state machine (h2) cost about 100 us of CPU
per unary call, most of a call's client-side cost; these frames cost a few.
"""

from __future__ import annotations

import struct

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
# Frame types
DATA, HEADERS, PRIORITY, RST_STREAM, SETTINGS, PUSH_PROMISE, PING, GOAWAY = range(8)
WINDOW_UPDATE, CONTINUATION = 8, 9
# Flags
END_STREAM = ACK = 0x1
END_HEADERS, PADDED, PRIORITY_FLAG = 0x4, 0x8, 0x20
# Settings
HEADER_TABLE_SIZE, ENABLE_PUSH, MAX_CONCURRENT_STREAMS = 1, 2, 3
INITIAL_WINDOW_SIZE, MAX_FRAME_SIZE = 4, 5
DEFAULT_WINDOW = 65535
DEFAULT_FRAME_SIZE = 16384  # also the largest frame we accept: we never raise it
MAX_WINDOW = 2**31 - 1
LAST_STREAM_ID = 2**31 - 1
# Error codes
NO_ERROR, PROTOCOL_ERROR, FLOW_CONTROL_ERROR, FRAME_SIZE_ERROR = 0x0, 0x1, 0x3, 0x6
REFUSED_STREAM, CANCEL, ENHANCE_YOUR_CALM, INADEQUATE_SECURITY = 0x7, 0x8, 0xB, 0xC
ERROR_NAMES = {
    0x0: "NO_ERROR",
    0x1: "PROTOCOL_ERROR",
    0x2: "INTERNAL_ERROR",
    0x3: "FLOW_CONTROL_ERROR",
    0x4: "SETTINGS_TIMEOUT",
    0x5: "STREAM_CLOSED",
    0x6: "FRAME_SIZE_ERROR",
    0x7: "REFUSED_STREAM",
    0x8: "CANCEL",
    0x9: "COMPRESSION_ERROR",
    0xA: "CONNECT_ERROR",
    0xB: "ENHANCE_YOUR_CALM",
    0xC: "INADEQUATE_SECURITY",
    0xD: "HTTP_1_1_REQUIRED",
}

HEAD = struct.Struct(">IBI")  # length << 8 | type, flags, stream id
U32 = struct.Struct(">I")
SETTING = struct.Struct(">HI")
GOAWAY_HEAD = struct.Struct(">II")


class ProtocolError(Exception):
    """The peer broke HTTP/2: the connection cannot be trusted any further."""


def frame(type_: int, flags: int, stream_id: int, payload: bytes = b"") -> bytes:
    return HEAD.pack(len(payload) << 8 | type_, flags, stream_id) + payload


def settings(values: dict[int, int]) -> bytes:
    return frame(SETTINGS, 0, 0, b"".join(SETTING.pack(k, v) for k, v in values.items()))


def window_update(stream_id: int, increment: int) -> bytes:
    return frame(WINDOW_UPDATE, 0, stream_id, U32.pack(increment))


def error_name(code: int) -> str:
    return ERROR_NAMES.get(code, f"0x{code:x}")


# -- HPACK, the encoding side: literals without indexing (RFC 7541 6.2.2) ----------------


def _integer(value: int, prefix_bits: int, first: int = 0) -> bytes:
    limit = (1 << prefix_bits) - 1
    if value < limit:
        return bytes([first | value])
    out = bytearray([first | limit])
    value -= limit
    while value >= 128:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _string(value: bytes) -> bytes:
    return _integer(len(value), 7) + value  # no Huffman: the peer decodes either


def literal(name: bytes | int, value: bytes) -> bytes:
    """One header field, named by a static-table index or spelled out, never indexed."""
    if isinstance(name, int):
        return _integer(name, 4) + _string(value)
    return b"\x00" + _string(name) + _string(value)


# Static-table entries (RFC 7541 appendix A) the request headers use.
METHOD_POST, SCHEME_HTTP, SCHEME_HTTPS = b"\x83", b"\x86", b"\x87"
AUTHORITY, PATH, CONTENT_TYPE = 1, 4, 31


def only_indexed(block: bytes) -> bool:
    """Whether a header block is indexed fields only (RFC 7541 6.1), which decode without
    touching the dynamic table."""
    i, size = 0, len(block)
    while i < size:
        first = block[i]
        if not first & 0x80:
            return False
        i += 1
        if first & 0x7F == 0x7F:  # the index goes on in 7-bit groups
            while i < size and block[i] & 0x80:
                i += 1
            i += 1
    return True
