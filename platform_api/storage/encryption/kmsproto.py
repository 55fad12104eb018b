"""The Protobuf messages of KMS v2, encoded by hand.

Two schemas, both kube's: the plugin API (k8s.io/kms/apis/v2/api.proto, service
``v2.KeyManagementService``) and the stored ``EncryptedObject``
(apiserver/pkg/storage/value/encrypt/envelope/kmsv2/v2/api.proto).  They are a handful of
scalar, bytes and ``map<string, bytes>`` fields, so a few lines of wire format are
shorter than generated code and need no protoc at build time.  Field numbers are the
.proto files'; proto3 rules: zero values are omitted, unknown fields are skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

SERVICE = "v2.KeyManagementService"
_VARINT, _LEN = 0, 2


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        bits = value & 0x7F
        value >>= 7
        if value:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


def _read_varint(data: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(data) or shift > 63:
            raise ValueError("proto: truncated varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _field(number: int, value: bytes | str | int) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3 | _VARINT) + _varint(value) if value else b""
    raw = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | _LEN) + _varint(len(raw)) + raw if raw else b""


def _map(number: int, values: Mapping[str, bytes]) -> bytes:
    out = b""
    for key in sorted(values):
        entry = _field(1, key) + _field(2, values[key])
        out += _varint(number << 3 | _LEN) + _varint(len(entry)) + entry
    return out


def parse(data: bytes) -> dict[int, list[bytes | int]]:
    """Field number -> values, for the varint and length-delimited fields we use."""
    fields: dict[int, list[bytes | int]] = {}
    pos = 0
    while pos < len(data):
        tag, pos = _read_varint(data, pos)
        number, wire = tag >> 3, tag & 7
        if wire == _VARINT:
            value, pos = _read_varint(data, pos)
            fields.setdefault(number, []).append(value)
        elif wire == _LEN:
            size, pos = _read_varint(data, pos)
            if pos + size > len(data):
                raise ValueError("proto: truncated length-delimited field")
            fields.setdefault(number, []).append(data[pos : pos + size])
            pos += size
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"proto: cannot parse invalid wire-format data (wire type {wire})")
    return fields


def _bytes(fields: dict[int, list[bytes | int]], number: int) -> bytes:
    values = fields.get(number)
    value = values[-1] if values else b""
    return value if isinstance(value, bytes) else b""


def _str(fields: dict[int, list[bytes | int]], number: int) -> str:
    return _bytes(fields, number).decode()


def _int(fields: dict[int, list[bytes | int]], number: int) -> int:
    values = fields.get(number)
    value = values[-1] if values else 0
    return value if isinstance(value, int) else 0


def _parse_map(fields: dict[int, list[bytes | int]], number: int) -> dict[str, bytes]:
    out: dict[str, bytes] = {}
    for entry in fields.get(number, []):
        if isinstance(entry, bytes):
            inner = parse(entry)
            out[_str(inner, 1)] = _bytes(inner, 2)
    return out


@dataclass(frozen=True)
class StatusRequest:
    def encode(self) -> bytes:
        return b""

    @classmethod
    def decode(cls, data: bytes) -> StatusRequest:
        return cls()


@dataclass(frozen=True)
class StatusResponse:
    version: str = ""
    healthz: str = ""
    key_id: str = ""

    def encode(self) -> bytes:
        return _field(1, self.version) + _field(2, self.healthz) + _field(3, self.key_id)

    @classmethod
    def decode(cls, data: bytes) -> StatusResponse:
        f = parse(data)
        return cls(_str(f, 1), _str(f, 2), _str(f, 3))


@dataclass(frozen=True)
class EncryptRequest:
    plaintext: bytes = b""
    uid: str = ""

    def encode(self) -> bytes:
        return _field(1, self.plaintext) + _field(2, self.uid)

    @classmethod
    def decode(cls, data: bytes) -> EncryptRequest:
        f = parse(data)
        return cls(_bytes(f, 1), _str(f, 2))


@dataclass(frozen=True)
class EncryptResponse:
    ciphertext: bytes = b""
    key_id: str = ""
    annotations: Mapping[str, bytes] = field(default_factory=dict)

    def encode(self) -> bytes:
        return _field(1, self.ciphertext) + _field(2, self.key_id) + _map(3, self.annotations)

    @classmethod
    def decode(cls, data: bytes) -> EncryptResponse:
        f = parse(data)
        return cls(_bytes(f, 1), _str(f, 2), _parse_map(f, 3))


@dataclass(frozen=True)
class DecryptRequest:
    ciphertext: bytes = b""
    uid: str = ""
    key_id: str = ""
    annotations: Mapping[str, bytes] = field(default_factory=dict)

    def encode(self) -> bytes:
        return (
            _field(1, self.ciphertext)
            + _field(2, self.uid)
            + _field(3, self.key_id)
            + _map(4, self.annotations)
        )

    @classmethod
    def decode(cls, data: bytes) -> DecryptRequest:
        f = parse(data)
        return cls(_bytes(f, 1), _str(f, 2), _str(f, 3), _parse_map(f, 4))


@dataclass(frozen=True)
class DecryptResponse:
    plaintext: bytes = b""

    def encode(self) -> bytes:
        return _field(1, self.plaintext)

    @classmethod
    def decode(cls, data: bytes) -> DecryptResponse:
        return cls(_bytes(parse(data), 1))


AES_GCM_KEY = 0
HKDF_SHA256_XNONCE_AES_GCM_SEED = 1


@dataclass(frozen=True)
class EncryptedObject:
    """What follows ``k8s:enc:kms:v2:<name>:`` in storage."""

    encrypted_data: bytes = b""
    key_id: str = ""
    encrypted_dek_source: bytes = b""
    annotations: Mapping[str, bytes] = field(default_factory=dict)
    encrypted_dek_source_type: int = AES_GCM_KEY

    def encode(self) -> bytes:
        return (
            _field(1, self.encrypted_data)
            + _field(2, self.key_id)
            + _field(3, self.encrypted_dek_source)
            + _map(4, self.annotations)
            + _field(5, self.encrypted_dek_source_type)
        )

    @classmethod
    def decode(cls, data: bytes) -> EncryptedObject:
        f = parse(data)
        return cls(_bytes(f, 1), _str(f, 2), _bytes(f, 3), _parse_map(f, 4), _int(f, 5))
