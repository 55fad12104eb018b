"""Property tests of the two storage shapes of a built-in object: generated from a kind's
schema, an object written as Protobuf and read back is what ``goshape`` makes of it as
JSON (``STORED``), so kubectl (which reads Protobuf) and a JSON client, and replicas that
stored an object and those that decoded it, see the same object."""

from __future__ import annotations

import copy
import functools
from typing import Any

from hypothesis import example, given
from hypothesis import strategies as st

from platform_api.codec import protobuf
from platform_api.codec.goshape import STORED, shape
from platform_api.codec.protobuf_schema import message_for
from platform_api.scheme.catalog import builtin_scheme
from platform_api.scheme.schemas import (
    FIELDS_V1,
    INT_OR_STRING,
    MICRO_TIME,
    QUANTITY,
    RAW_EXTENSION,
    TIME,
)

SCHEME = builtin_scheme()
SCHEMAS = SCHEME.schemas
_WORDS = st.sampled_from(["", "a", "b-c", "é"])
_SPECIAL: dict[str, st.SearchStrategy[Any]] = {
    QUANTITY: st.sampled_from(["1", "500m", "2Gi", "0"]),
    INT_OR_STRING: st.one_of(st.integers(0, 70000), st.sampled_from(["", "http", "25%"])),
    TIME: st.sampled_from(["2026-01-02T03:04:05Z"]),
    MICRO_TIME: st.sampled_from(["2026-01-02T03:04:05.000006Z"]),
}
_SKIPPED = (RAW_EXTENSION, FIELDS_V1)  # raw JSON: not generated


def _strategy(node: dict[str, Any], depth: int) -> st.SearchStrategy[Any] | None:
    ref, target = SCHEMAS.resolve(node)
    if ref in _SPECIAL:
        return _SPECIAL[ref]
    if ref in _SKIPPED or ref.endswith(("JSONSchemaPropsOrArray", "JSON")):
        return None
    if ref:
        node = target
    kind = node.get("type")
    if "properties" in node:
        if depth > 5:
            return None
        fields = {}
        for name, child in node["properties"].items():
            if name in ("apiVersion", "kind", "managedFields"):
                continue
            strategy = _strategy(child, depth + 1)
            if strategy is not None:
                fields[name] = strategy
        return st.fixed_dictionaries({}, optional=fields)
    if "additionalProperties" in node:
        values = _strategy(node["additionalProperties"], depth + 1)
        return None if values is None else st.dictionaries(_WORDS, values, max_size=2)
    if kind == "array":
        items = _strategy(node.get("items", {}), depth + 1)
        return None if items is None else st.lists(items, max_size=2)
    if kind == "string":
        if node.get("format") == "byte":
            return st.sampled_from(["", "YQ==", "AAEC"])
        return _WORDS
    if kind == "integer":
        if node.get("format") == "int32":
            return st.integers(-(2**31), 2**31 - 1)
        return st.integers(-(2**63), 2**63 - 1)
    if kind == "boolean":
        return st.booleans()
    if kind == "number":
        return st.sampled_from([0, 1.5, -2.25])
    return None


def _objects() -> st.SearchStrategy[dict[str, Any]]:
    """Objects of every built-in kind with a Protobuf message."""
    cases = []
    for rt in SCHEME.all():
        if rt.custom or message_for(rt.api_version, rt.kind) is None:
            continue
        body = _strategy(SCHEMAS.get(rt.definition), 0)
        if body is not None:
            header = {"apiVersion": rt.api_version, "kind": rt.kind}
            cases.append(body.map(functools.partial(_with_type, header)))
    assert len(cases) > 50
    return st.one_of(cases)


def _with_type(header: dict[str, str], body: dict[str, Any]) -> dict[str, Any]:
    return {**header, **body}


@given(_objects())
@example(  # a []byte with omitempty given as "": empty, so left out
    {
        "apiVersion": "admissionregistration.platform.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "webhooks": [{"name": "a", "clientConfig": {"caBundle": ""}}],
    }
)
@example(  # ... and one without: Protobuf keeps it empty, not nil
    {
        "apiVersion": "certificates.platform.io/v1",
        "kind": "CertificateSigningRequest",
        "spec": {"request": ""},
    }
)
@example(  # a map without omitempty whose values are Quantities: nil once stored, null
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "status": {
            "nodeAllocatableResourceClaimStatuses": [{"resourceClaimName": "c", "resources": {}}]
        },
    }
)
def test_an_object_read_back_from_protobuf_is_its_stored_json_shape(obj: dict[str, Any]) -> None:
    expected = copy.deepcopy(obj)
    shape(expected, STORED)
    back = protobuf.decode(protobuf.encode(obj))
    assert back == expected
