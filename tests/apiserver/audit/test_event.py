"""Audit Event documents: field order, empty fields, statuses, legacy lines."""

from __future__ import annotations

from platform_api.apiserver.audit import event as ev
from platform_api.authentication.user import UserInfo


def test_micro_time_is_utc_with_microseconds() -> None:
    assert ev.micro_time(1700000000.5) == "2023-11-14T22:13:20.500000Z"


def test_user_info_leaves_out_empty_fields() -> None:
    assert UserInfo("system:anonymous").to_review() == {"username": "system:anonymous"}
    full = UserInfo("jane", "7", ("dev",), {"scopes": ("read",)})
    assert full.to_review() == {
        "username": "jane",
        "uid": "7",
        "groups": ["dev"],
        "extra": {"scopes": ["read"]},
    }


def test_source_ips_forwarded_then_real_ip_then_peer() -> None:
    assert ev.source_ips("", "", "127.0.0.1") == ["127.0.0.1"]
    assert ev.source_ips("10.0.0.1, bogus, 10.0.0.2", "10.0.0.3", "127.0.0.1") == [
        "10.0.0.1",
        "10.0.0.2",
        "10.0.0.3",
        "127.0.0.1",
    ]
    # the peer is not repeated when it is the last forwarded address
    assert ev.source_ips("10.0.0.1, 127.0.0.1", "", "127.0.0.1") == ["10.0.0.1", "127.0.0.1"]
    assert ev.source_ips("", "10.0.0.3", "10.0.0.3") == ["10.0.0.3"]


def test_user_agent_truncated_like_kube() -> None:
    assert ev.user_agent("a" * 1025) == "a" * 1024 + "...TRUNCATED"
    assert ev.user_agent("kubectl/v1.36.0") == "kubectl/v1.36.0"


def test_response_status_keeps_a_failure_status_bounded_fields() -> None:
    assert ev.response_status(200, {"kind": "Pod"}) == {"metadata": {}, "code": 200}
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": 'pods "x" not found',
        "reason": "NotFound",
        "details": {"name": "x", "kind": "pods"},
        "code": 404,
    }
    out = ev.response_status(404, status)
    assert list(out) == ["metadata", "status", "message", "reason", "details", "code"]
    assert out["message"] == 'pods "x" not found' and out["code"] == 404


def test_render_orders_fields_and_drops_empty_ones() -> None:
    out = ev.render(
        {
            "annotations": {"a": "b"},
            "stageTimestamp": "t2",
            "level": "Metadata",
            "auditID": "id",
            "stage": "ResponseComplete",
            "requestURI": "/api",
            "verb": "get",
            "user": {"username": "u"},
            "impersonatedUser": None,
            "sourceIPs": ["127.0.0.1"],
            "objectRef": None,
            "requestReceivedTimestamp": "t1",
        }
    )
    assert list(out) == [
        "kind", "apiVersion", "level", "auditID", "stage", "requestURI", "verb", "user",
        "sourceIPs", "requestReceivedTimestamp", "stageTimestamp", "annotations",
    ]  # fmt: skip
    assert out["kind"] == "Event" and out["apiVersion"] == "audit.platform.io/v1"


def test_without_managed_fields_in_objects_lists_and_tables() -> None:
    obj = {"metadata": {"name": "x", "managedFields": [{"manager": "m"}]}}
    assert ev.without_managed_fields(obj) == {"metadata": {"name": "x"}}
    assert obj["metadata"]["managedFields"]  # the original is untouched
    listed = ev.without_managed_fields({"kind": "PodList", "metadata": {}, "items": [obj]})
    assert listed["items"] == [{"metadata": {"name": "x"}}]
    table = ev.without_managed_fields({"kind": "Table", "rows": [{"cells": [], "object": obj}]})
    assert table["rows"][0]["object"] == {"metadata": {"name": "x"}}


def test_decode_body() -> None:
    assert ev.decode_body(b'{"a":1}', "application/json; charset=utf-8") == {"a": 1}
    assert ev.decode_body(b"a: 1\n", "application/apply-patch+yaml") == {"a": 1}
    assert ev.decode_body(b"\x00k8s", "application/vnd.kubernetes.protobuf") is None
    assert ev.decode_body(b"", "application/json") is None


def test_legacy_line_matches_kube() -> None:
    line = ev.legacy_line(
        {
            "auditID": "id-1",
            "stage": "ResponseComplete",
            "verb": "get",
            "user": {"username": "jane", "groups": ["dev", "system:authenticated"]},
            "sourceIPs": ["10.0.0.1", "127.0.0.1"],
            "userAgent": "kubectl",
            "objectRef": {"resource": "pods", "namespace": "default"},
            "requestURI": "/api/v1/namespaces/default/pods",
            "responseStatus": {"metadata": {}, "code": 200},
            "requestReceivedTimestamp": "2026-01-02T03:04:05.120000Z",
        }
    )
    assert line == (
        '2026-01-02T03:04:05.12Z AUDIT: id="id-1" stage="ResponseComplete" ip="10.0.0.1" '
        'method="get" user="jane" groups="\\"dev\\",\\"system:authenticated\\"" as="<self>" '
        'asgroups="<lookup>" user-agent="kubectl" namespace="default" '
        'uri="/api/v1/namespaces/default/pods" response="200"'
    )
    bare = ev.legacy_line({"auditID": "i", "stage": "RequestReceived", "user": {}})
    assert 'user="<none>" groups="<none>"' in bare and 'response="<deferred>"' in bare
    assert 'ip="<unknown>"' in bare and 'namespace="<none>"' in bare


def test_micro_time_carries_into_the_next_second() -> None:
    assert ev.micro_time(1700000000.9999996) == "2023-11-14T22:13:21.000000Z"
    assert ev.micro_time(1700000001.000001) == "2023-11-14T22:13:21.000001Z"
