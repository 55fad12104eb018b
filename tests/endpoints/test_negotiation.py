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


@pytest.mark.parametrize(
    ("accept", "expected"),
    [
        # goautoneg's sort puts a named type before a wildcard whatever their q-values
        ("*/*,application/yaml;q=0;includeObject=x", "yaml"),
        # an empty or repeated parameter: the clause keeps what it can read
        ("application/json;q=0;v=;charset=utf-8;v=v1,text/html;g=;q=0.5", None),
        ("application/json;as=", "json"),  # "as=" is dropped, not a transformation
        ("*/*;v=v1beta1", None),  # a version alone asks for a transformation nobody offers
        ("application/yaml;v=v1beta1;includeObject=Metadata", None),
        ("application/vnd.kubernetes.protobuf;stream=watch;v=v1beta1;q=0", None),
        ("application/yaml;stream=watch", None),  # YAML frames no stream
        ("application/json;stream=x", None),
        ("application/json;sv=v1", "json"),
        ("application/json;sv=v2", None),
        ("*/json,application/x", None),  # a wildcard type takes only */*
        ("Application/JSON", None),  # goautoneg does not fold case
        ("a/b/c,application/yaml/", "yaml"),  # a/b/c is dropped; a trailing / is not
    ],
)
def test_kube_negotiation(accept: str, expected: str | None) -> None:
    """The reference kube-apiserver v1.36's choices for these Accept headers on a list
    of ConfigMaps (found by 800 headers compared with it)."""
    if expected is None:
        with pytest.raises(StatusError) as refused:
            negotiate_output(accept, table=True, protobuf=True, partial="list")
        assert refused.value.code == 406
    else:
        out = negotiate_output(accept, table=True, protobuf=True, partial="list")
        assert out.encoding == expected


def test_a_custom_resource_takes_protobuf_only_transformed() -> None:
    """Its standard serializers have no Protobuf; a PartialObjectMetadata view does."""
    partial = "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    out = negotiate_output(partial, protobuf=False, partial="list")
    assert (out.encoding, out.view) == ("protobuf", "partial")
    with pytest.raises(StatusError):
        negotiate_output("application/vnd.kubernetes.protobuf;q=1", protobuf=False)


def test_errors_negotiate_without_views() -> None:
    assert error_encoding("application/json;as=Table;g=meta.k8s.io;v=v1") == ("raw", "")
    assert error_encoding("application/json;sv=v1") == ("raw", "")
    assert error_encoding("application/yaml;stream=watch") == ("raw", "")
    assert error_encoding("") == ("json", "")
    assert error_encoding("application/yaml;pretty=1") == ("yaml", "")
