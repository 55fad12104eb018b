"""A request head's header lines as Go's net/http checks them, before Twisted reads them.

Go's textproto refuses a header line with no colon, a name of other than token bytes
(and spaces), or a value holding a control byte, with a plain 400 as soon as it reads
it; Twisted took a control byte, and Go's lone LF line ends were never a line end to it.
Once the head is read, Go's server answers a Host of bytes no host has (``400 Bad
Request: malformed Host header``), a name with a space (``invalid header name``), a
chunked body's ``Trailer`` naming a framing header (plain 400), and an ``Expect`` other
than ``100-continue`` (417), in that order; Twisted served all of them.
"""

from __future__ import annotations

import re

BAD_REQUEST = b"400 Bad Request"
MALFORMED_HOST = b"400 Bad Request: malformed Host header"
INVALID_NAME = b"400 Bad Request: invalid header name"
# Go's byte rules for header fields, shared by the head, a chunked body's trailer
# (gochunked.py) and HTTP/2 (goh2.py): a name is token bytes (textproto also takes
# spaces, uncanonicalized); a value holds no control byte but HTAB.
TOKEN = rb"!#$%&'*+\-.^_`|~0-9a-z"  # and A-Z, but on HTTP/2's wire
_CONTROLS = rb"\x00-\x08\x0a-\x1f\x7f"
NAME = re.compile(rb"[" + TOKEN + rb"A-Z ]+")
BAD_VALUE = re.compile(rb"[" + _CONTROLS + rb"]")
# A line textproto reads, name and value in one match a line (~0.5 us).
_LINE = re.compile(rb"(" + NAME.pattern + rb"):([^" + _CONTROLS + rb"]*)")
_NOTED = frozenset(b"hHeEtT")  # first bytes of Host, Expect, Trailer, Transfer-Encoding
_HOST = re.compile(rb"[0-9A-Za-z!$%&()*+,\-.:;=\[\]'_~]*")  # httpguts' validHostByte
_FRAMING = {b"transfer-encoding", b"trailer", b"content-length"}
# Go's hasToken: the token, any case, between spaces, commas or tabs (or the ends).
_CONTINUE = re.compile(rb"(?:^|[ ,\t])100-continue(?:$|[ ,\t])", re.IGNORECASE)


class HeadFields:
    """One request head's header lines, fed as they come (``line``), judged whole at
    its end (``refusal``)."""

    def __init__(self) -> None:
        self.hosts: list[bytes] = []
        self.spaced_name = False
        self.expect: bytes | None = None
        self.trailers: list[bytes] = []
        self.chunked = False  # a Transfer-Encoding: chunked line came
        self._lines = 0

    def line(self, line: bytes) -> bytes:
        """Go's answer to a header line textproto refuses (b"" for one it reads)."""
        self._lines += 1
        if line[:1] in (b" ", b"\t"):  # a continuation: only its value is read
            return BAD_REQUEST if self._lines == 1 or BAD_VALUE.search(line) else b""
        matched = _LINE.fullmatch(line)
        if matched is None:
            return BAD_REQUEST
        name = matched.group(1)
        self.spaced_name = self.spaced_name or b" " in name
        if name[0] in _NOTED:
            self._note(name.lower(), matched.group(2).strip(b" \t"))
        return b""

    def _note(self, folded: bytes, value: bytes) -> None:
        if folded == b"host":
            self.hosts.append(value)
        elif folded == b"expect" and self.expect is None:
            self.expect = value  # Go reads the first
        elif folded == b"trailer":
            self.trailers.append(value)
        elif folded == b"transfer-encoding":
            self.chunked = self.chunked or value.lower() == b"chunked"

    def refusal(self, chunked: bool) -> bytes:
        """Go's answer to the head once read, after its Host count (the channel's):
        a status line's text, b"" for a head it serves."""
        if chunked and any(_framing(value) for value in self.trailers):
            return BAD_REQUEST  # "bad trailer key"
        if len(self.hosts) == 1 and not _HOST.fullmatch(self.hosts[0]):
            return MALFORMED_HOST
        if self.spaced_name:
            return INVALID_NAME
        return b""

    def expectation_failed(self) -> bool:
        """An ``Expect`` Go cannot meet: one not naming ``100-continue``."""
        return bool(self.expect) and not _CONTINUE.search(self.expect or b"")


def _framing(value: bytes) -> bool:
    return any(key.strip(b" \t").lower() in _FRAMING for key in value.split(b","))
