"""The outer layer of a DER value as Go's encoding/asn1 reads it, with its error words.

Go's ``x509.ParseCertificateRequest`` (and its kin) unmarshal the DER into a struct
with encoding/asn1 before anything else, so bytes that are no DER SEQUENCE are refused
in that package's words (``asn1: syntax error: data truncated``); cryptography only
says the whole failed.  This reads the first tag and length as ``parseTagAndLength``
does and checks them as ``parseField`` checks a struct's.
"""

from __future__ import annotations

from dataclasses import dataclass

_INT32_MAX = 2**31 - 1
# The field parameters encoding/asn1 prints (%+v) for a top-level struct without tags.
_PARAMS = (
    "{optional:false explicit:false application:false private:false defaultValue:<nil> "
    "tag:<nil> stringType:0 timeType:0 set:false omitEmpty:false}"
)
_SEQUENCE = 16


class ASN1Error(ValueError):
    """encoding/asn1's SyntaxError or StructuralError, worded as Go prints them."""


def _syntax(message: str) -> ASN1Error:
    return ASN1Error(f"asn1: syntax error: {message}")


def _structure(message: str) -> ASN1Error:
    return ASN1Error(f"asn1: structure error: {message}")


@dataclass(frozen=True)
class Header:
    """A tag and length, and where the contents start."""

    cls: int
    tag: int
    compound: bool
    length: int
    offset: int


def _base128(data: bytes, at: int) -> tuple[int, int]:
    value = 0
    for shifted in range(len(data) - at):
        if shifted == 5:
            raise _structure("base 128 integer too large")
        byte = data[at]
        if shifted == 0 and byte == 0x80:
            raise _syntax("integer is not minimally encoded")
        value = (value << 7) | (byte & 0x7F)
        at += 1
        if not byte & 0x80:
            if value > _INT32_MAX:
                raise _structure("base 128 integer too large")
            return value, at
    raise _syntax("truncated base 128 integer")


def read_header(data: bytes) -> Header:
    """parseTagAndLength at offset 0 (``data`` is not empty)."""
    first = data[0]
    cls, compound, tag, at = first >> 6, bool(first & 0x20), first & 0x1F, 1
    if tag == 0x1F:
        tag, at = _base128(data, at)
        if tag < 0x1F:
            raise _syntax("non-minimal tag")
    if at >= len(data):
        raise _syntax("truncated tag or length")
    byte = data[at]
    at += 1
    if not byte & 0x80:
        return Header(cls, tag, compound, byte & 0x7F, at)
    count = byte & 0x7F
    if count == 0:
        raise _syntax("indefinite length found (not DER)")
    length = 0
    for _ in range(count):
        if at >= len(data):
            raise _syntax("truncated tag or length")
        if length >= 1 << 23:
            raise _structure("length too large")
        length = (length << 8) | data[at]
        at += 1
        if length == 0:
            raise _structure("superfluous leading zeros in length")
    if length < 0x80:
        raise _structure("non-minimal length")
    return Header(cls, tag, compound, length, at)


def check_struct(data: bytes, type_name: str) -> int:
    """The end of the SEQUENCE a Go struct named ``type_name`` is read from, or the
    ASN1Error encoding/asn1 gives before reading its fields (an empty one included)."""
    if not data:
        raise _syntax("sequence truncated")
    head = read_header(data)
    if head.offset + head.length > len(data):
        raise _syntax("data truncated")
    if head.cls != 0 or head.tag != _SEQUENCE or not head.compound:
        shown = (
            f"{{class:{head.cls} tag:{head.tag} length:{head.length} "
            f"isCompound:{str(head.compound).lower()}}}"
        )
        raise _structure(
            f"tags don't match ({_SEQUENCE} vs {shown}) {_PARAMS} {type_name} @{head.offset}"
        )
    if head.length == 0:
        raise _syntax("sequence truncated")  # its first field
    return head.offset + head.length
