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
from tests.fuzz.schema_objects import SCHEME, objects_of


def _objects() -> st.SearchStrategy[dict[str, Any]]:
    """Objects of every built-in kind with a Protobuf message."""
    cases = []
    for rt in SCHEME.all():
        if rt.custom or message_for(rt.api_version, rt.kind) is None:
            continue
        header = {"apiVersion": rt.api_version, "kind": rt.kind}
        cases.append(objects_of(rt.definition).map(functools.partial(_with_type, header)))
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
