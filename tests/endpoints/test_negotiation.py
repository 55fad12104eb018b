"""Accept and Content-Type negotiation, and continue tokens."""

from __future__ import annotations

import pytest

from platform_api.endpoints.negotiation import (
    LIST_PRODUCES,
    OBJECT_PRODUCES,
    accepted_patch_type,
    check_produces,
    error_encoding,
    input_type,
    negotiate_output,
    parse_accept,
    partial_refusal,
)
from platform_api.errors import StatusError

KUBECTL_TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


def test_output_choices() -> None:
    assert negotiate_output("").encoding == "json"
    assert negotiate_output("*/*").encoding == "json"
    assert negotiate_output("application/yaml").encoding == "yaml"
    assert negotiate_output("application/vnd.platform.protobuf, application/json").encoding == (
        "json"
    )
    table = negotiate_output(KUBECTL_TABLE, table=True)
    assert (table.view, table.group, table.version) == ("table", "meta.k8s.io", "v1")
    assert negotiate_output(KUBECTL_TABLE, table=False).view == ""
    assert negotiate_output("application/yaml;q=0.5, application/json").encoding == "json"


def test_protobuf_for_types_that_have_a_message() -> None:
    stock = "application/vnd.kubernetes.protobuf, application/json"
    out = negotiate_output(stock, protobuf=True)
    assert (out.encoding, out.content_type) == ("protobuf", b"application/vnd.kubernetes.protobuf")
    branded = negotiate_output("application/vnd.platform.protobuf", protobuf=True)
    assert branded.content_type == b"application/vnd.platform.protobuf"
    assert negotiate_output(stock, protobuf=False).encoding == "json"  # custom resources
    protobuf_table = "application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1"
    assert (
        negotiate_output(protobuf_table + ",application/json", table=True, protobuf=True).view == ""
    )


def test_partial_object_metadata_of_the_other_shape_is_refused_once_read() -> None:
    """kube picks the entry, then refuses it (406) once it holds the object or list."""
    as_list = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    out = negotiate_output(as_list, partial="list")
    assert (out.view, out.group, out.version, out.refused) == ("partial", "meta.k8s.io", "v1", "")
    assert partial_refusal(out, "*core.PodList") == ""
    out = negotiate_output(as_list + ",application/json", partial="object")
    assert (out.view, out.refused) == ("partial", "PartialObjectMetadataList")
    assert partial_refusal(out, "*core.Pod") == (
        "you requested PartialObjectMetadataList, but the requested object is not a list "
        "(*core.Pod)"
    )


def test_not_acceptable() -> None:
    with pytest.raises(StatusError) as caught:
        negotiate_output("application/vnd.platform.protobuf")
    assert caught.value.code == 406
    assert caught.value.message == (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.platform.protobuf"
    )


def test_cbor_only_when_served_and_never_as_a_table() -> None:
    with pytest.raises(StatusError):
        negotiate_output("application/cbor")
    out = negotiate_output("application/cbor", cbor=True)
    assert (out.encoding, out.content_type) == ("cbor", b"application/cbor")
    partial = "application/cbor;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
    assert negotiate_output(partial, partial="object", cbor=True).view == "partial"
    with pytest.raises(StatusError) as caught:
        negotiate_output("application/cbor;as=Table;g=meta.k8s.io;v=v1", table=True, cbor=True)
    assert caught.value.message == (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.platform.protobuf, application/cbor"
    )
    assert error_encoding("application/cbor") == ("raw", "")  # kube's WriteRawJSON
    assert error_encoding("") == ("json", "")
    assert error_encoding("application/cbor", cbor=True) == ("cbor", "")


def test_patch_types_refused_as_go_restful_does() -> None:
    assert accepted_patch_type(
        "application/merge-patch+json; charset=utf-8", ["application/merge-patch+json"]
    ) == ("application/merge-patch+json")
    for bad in ("", "application/json", "application/merge-patch+cbor"):
        with pytest.raises(StatusError) as caught:
            accepted_patch_type(bad, ["application/merge-patch+json"])
        assert caught.value.status() == {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": "415: Unsupported Media Type",
            "reason": "UnsupportedMediaType",
            "details": {},
            "code": 415,
        }


def test_input_types() -> None:
    assert input_type("", ["application/json"]) == "application/json"
    assert input_type("application/json; charset=utf-8", ["application/json"]) == "application/json"
    with pytest.raises(StatusError) as caught:
        input_type("text/plain", ["application/json"])
    assert caught.value.code == 415


@pytest.mark.parametrize(
    "accept",
    [
        "",
        "*/*",
        "*/*;q=0",
        "application/json;q=0",
        "text/plain, application/json",
        "application/vnd.kubernetes.protobuf;as=Table",
    ],
)
def test_go_restful_takes(accept: str) -> None:
    check_produces(accept, OBJECT_PRODUCES)


@pytest.mark.parametrize("accept", ["text/plain", "application/*", "Application/JSON", " , "])
def test_go_restful_refuses(accept: str) -> None:
    """A bare-type match, case and all, as go-restful's Route.matchesAccept."""
    with pytest.raises(StatusError) as caught:
        check_produces(accept, LIST_PRODUCES)
    assert (caught.value.code, caught.value.details) == (406, {})
    assert caught.value.message == (
        "406: Not Acceptable\n\nAvailable representations: application/json, application/yaml, "
        "application/vnd.platform.protobuf, application/json;stream=watch, "
        "application/vnd.platform.protobuf;stream=watch"
    )


def test_q_zero_entries_still_count() -> None:
    """kube's goautoneg orders by q but drops nothing."""
    assert negotiate_output("application/yaml;q=0").encoding == "yaml"
    assert [m.type for m in parse_accept("a/b;q=0, c/d;q=0.5")] == ["c/d", "a/b"]


def test_errors_skip_other_renderings() -> None:
    """...and when nothing is left, kube writes indented JSON (WriteRawJSON)."""
    assert error_encoding("application/vnd.platform.protobuf;as=Table;g=meta.k8s.io;v=v1") == (
        "raw",
        "",
    )
