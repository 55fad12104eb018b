"""kube's ExternalJWTSigner messages (k8s.io/externaljwt/apis/v1/api.proto), built at import.

A field table (codec/protodesc.py makes the classes): names and numbers are the .proto
file's, so any signer built from that file (Go's, or grpcio's generated stubs) reads
and writes the same bytes.  ``google.protobuf.Timestamp`` is declared here too, in the
private pool, rather than pulled from the well-known types.
"""

from __future__ import annotations

from typing import Any

from platform_api.codec.protodesc import (
    BOOL,
    BYTES,
    I32,
    I64,
    REPEATED,
    STRING,
    Field,
    file_descriptor,
    message_class,
    pool_of,
)

SERVICE = "v1.ExternalJWTSigner"

_MESSAGES: dict[str, list[Field]] = {
    "google.protobuf.Timestamp": [("seconds", 1, I64, ""), ("nanos", 2, I32, "")],
    "v1.SignJWTRequest": [("claims", 1, STRING, "")],
    "v1.SignJWTResponse": [("header", 1, STRING, ""), ("signature", 2, STRING, "")],
    "v1.FetchKeysRequest": [],
    "v1.FetchKeysResponse": [
        ("keys", 1, ".v1.Key", REPEATED),
        ("data_timestamp", 2, ".google.protobuf.Timestamp", ""),
        ("refresh_hint_seconds", 3, I64, ""),
    ],
    "v1.Key": [
        ("key_id", 1, STRING, ""),
        ("key", 2, BYTES, ""),
        ("exclude_from_oidc_discovery", 3, BOOL, ""),
    ],
    "v1.MetadataRequest": [],
    "v1.MetadataResponse": [("max_token_expiration_seconds", 1, I64, "")],
}

_POOL = pool_of(
    file_descriptor("google.protobuf", _MESSAGES),
    file_descriptor("v1", _MESSAGES, dependencies=["google.protobuf"]),
)


def _class(name: str) -> Any:
    return message_class(_POOL, name)


Timestamp = _class("google.protobuf.Timestamp")
SignJWTRequest = _class("v1.SignJWTRequest")
SignJWTResponse = _class("v1.SignJWTResponse")
FetchKeysRequest = _class("v1.FetchKeysRequest")
FetchKeysResponse = _class("v1.FetchKeysResponse")
Key = _class("v1.Key")
MetadataRequest = _class("v1.MetadataRequest")
MetadataResponse = _class("v1.MetadataResponse")
# method -> (request class, response class)
METHODS: dict[str, tuple[Any, Any]] = {
    "Sign": (SignJWTRequest, SignJWTResponse),
    "FetchKeys": (FetchKeysRequest, FetchKeysResponse),
    "Metadata": (MetadataRequest, MetadataResponse),
}
