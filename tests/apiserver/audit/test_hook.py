"""The request-flow side: stages, what each level keeps, annotations (in memory)."""

from __future__ import annotations

import io
from typing import Any

from twisted.internet.address import IPv4Address
from twisted.web.test.requesthelper import DummyRequest

from platform_api.apiserver.audit.hook import Auditor, audit_id, authorization_annotations
from platform_api.apiserver.audit.policy import Attributes, load_bytes
from platform_api.apiserver.requestinfo import parse
from platform_api.authentication.user import UserInfo
from platform_api.context import Context

POLICY = b"""apiVersion: audit.platform.io/v1
kind: Policy
rules:
- level: None
  resources: [{group: "", resources: ["events"]}]
- level: RequestResponse
  resources: [{group: "", resources: ["pods"]}]
  omitManagedFields: true
- level: Request
  resources: [{group: "", resources: ["configmaps"]}]
- level: Metadata
"""
JANE = UserInfo("jane", groups=("dev",))


class Sink:
    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []

    def process(self, event: dict[str, Any]) -> None:
        self.events.append(event)

    def shutdown(self) -> None:
        return None


def serve(
    method: bytes,
    uri: str,
    body: bytes = b"",
    code: int = 200,
    reply: bytes = b"{}",
    *,
    reply_type: bytes = b"application/json",
    answer: Any = None,
):
    sink = Sink()
    auditor = Auditor(load_bytes(POLICY), [sink], lambda: 1700000000.25)
    request = DummyRequest([b""])
    request.method, request.uri = method, uri.encode()
    request.content = io.BytesIO(body)
    request.requestHeaders.setRawHeaders(b"content-type", [b"application/json"])
    request.requestHeaders.setRawHeaders(b"user-agent", [b"test/1.0"])
    request.client = IPv4Address("TCP", "10.1.2.3", 50000)
    request.requestHeaders.setRawHeaders(b"x-forwarded-for", [b"192.168.1.1"])
    request.setHeader(b"audit-id", audit_id(request))
    path, _, query = uri.partition("?")
    info = parse(method, path, {b"watch": [b"1"]} if query else {})
    record = auditor.begin(request, info, JANE)
    if record is not None:
        ctx = Context(UserInfo("bob"))  # impersonated
        authorization_annotations(ctx, True, "because")
        record.attach(ctx)
        if answer is not None and ctx.audit_response is not None:
            ctx.audit_response.answered(lambda: answer)
    request.code = code
    request.responseHeaders.setRawHeaders(b"content-type", [reply_type])
    request.write(reply)
    request.finish()
    return request, sink.events


def test_level_none_is_no_event_but_an_audit_id() -> None:
    request, events = serve(b"GET", "/api/v1/namespaces/a/events")
    assert events == []
    assert len(request.responseHeaders.getRawHeaders(b"audit-id")[0]) == 36


def test_client_audit_id_is_kept() -> None:
    request = DummyRequest([b""])
    request.requestHeaders.setRawHeaders(b"audit-id", [b"abc"])
    assert audit_id(request) == "abc"


def test_metadata_event_stages_and_fields() -> None:
    request, events = serve(b"DELETE", "/apis/apps/v1/namespaces/a/deployments/d")
    assert [e["stage"] for e in events] == ["RequestReceived", "ResponseComplete"]
    received, complete = events
    assert received == {
        "kind": "Event",
        "apiVersion": "audit.platform.io/v1",
        "level": "Metadata",
        "auditID": request.responseHeaders.getRawHeaders(b"audit-id")[0].decode(),
        "stage": "RequestReceived",
        "requestURI": "/apis/apps/v1/namespaces/a/deployments/d",
        "verb": "delete",
        "user": {"username": "jane", "groups": ["dev"]},
        "sourceIPs": ["192.168.1.1", "10.1.2.3"],
        "userAgent": "test/1.0",
        "objectRef": {
            "resource": "deployments",
            "namespace": "a",
            "name": "d",
            "apiGroup": "apps",
            "apiVersion": "v1",
        },
        "requestReceivedTimestamp": "2023-11-14T22:13:20.250000Z",
        "stageTimestamp": "2023-11-14T22:13:20.250000Z",
    }
    assert complete["impersonatedUser"] == {"username": "bob"}
    assert complete["responseStatus"] == {"metadata": {}, "code": 200}
    assert complete["annotations"] == {
        "authorization.platform.io/decision": "allow",
        "authorization.platform.io/reason": "because",
    }


def test_request_level_keeps_the_body_and_fills_the_object_ref() -> None:
    body = b'{"metadata": {"name": "cm", "uid": "u-1", "resourceVersion": "5"}, "data": {}}'
    _, events = serve(b"PUT", "/api/v1/namespaces/a/configmaps/cm", body)
    complete = events[-1]
    assert complete["objectRef"] == {
        "resource": "configmaps",
        "namespace": "a",
        "name": "cm",
        "uid": "u-1",
        "apiVersion": "v1",
        "resourceVersion": "5",
    }
    assert complete["requestObject"]["data"] == {}
    assert "responseObject" not in complete


def test_request_response_level_keeps_the_reply_without_managed_fields() -> None:
    reply = b'{"kind": "Pod", "metadata": {"name": "p", "managedFields": [{}]}}'
    _, events = serve(b"GET", "/api/v1/namespaces/a/pods/p", reply=reply)
    assert events[-1]["responseObject"] == {"kind": "Pod", "metadata": {"name": "p"}}


def test_a_patch_is_logged_as_sent() -> None:
    _, events = serve(b"PATCH", "/api/v1/namespaces/a/configmaps/cm", b'[{"op": "remove"}]')
    assert events[-1]["requestObject"] == [{"op": "remove"}]
    assert events[-1]["objectRef"]["name"] == "cm"


def test_failure_status_at_metadata_level() -> None:
    status = (
        b'{"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", '
        b'"message": "no", "reason": "Conflict", "code": 409}'
    )
    _, events = serve(b"POST", "/apis/apps/v1/namespaces/a/deployments", b"{}", 409, status)
    assert events[-1]["responseStatus"] == {
        "metadata": {},
        "status": "Failure",
        "message": "no",
        "reason": "Conflict",
        "code": 409,
    }
    assert "requestObject" not in events[-1]


def test_watch_response_started() -> None:
    _, events = serve(b"GET", "/api/v1/namespaces/a/configmaps?watch=1")
    assert [e["stage"] for e in events] == [
        "RequestReceived",
        "ResponseStarted",
        "ResponseComplete",
    ]


def _write(method: bytes, path: str, body: bytes, code: int, tell: Any) -> dict[str, Any]:
    """One audited write whose handler ``tell``s the event what it decoded; its last
    event."""
    sink = Sink()
    auditor = Auditor(load_bytes(POLICY), [sink], lambda: 1700000000.25)
    request = DummyRequest([b""])
    request.method, request.uri = method, path.encode()
    request.content = io.BytesIO(body)
    request.requestHeaders.setRawHeaders(b"content-type", [b"application/json"])
    record = auditor.begin(request, parse(method, path, {}), JANE)
    assert record is not None
    ctx = Context(JANE)
    record.attach(ctx)
    assert ctx.audit_request is record
    tell(ctx.audit_request)
    request.code = code
    request.finish()
    return sink.events[-1]


def test_a_decoded_body_is_logged_as_the_handler_decoded_it() -> None:
    """The handler hands the event the body as it decoded (RequestObject): kind and
    apiVersion first, the defaulted object kept over the decoded one, the first of a
    retried update's kept, nothing at all when it did not decode."""

    def create(hand: Any) -> dict[str, Any]:
        body = b'{"metadata": {"name": "cm"}, "extra": 1}'
        return _write(b"POST", "/api/v1/namespaces/a/configmaps", body, 201, hand)

    def decoded(sink: Any) -> None:
        obj = {"metadata": {"name": "cm"}, "apiVersion": "v1", "kind": "ConfigMap"}
        sink.decoded(obj)
        obj["data"] = {"k": "v"}  # the write goes on: the event keeps what was decoded
        sink.decoded(obj, defaulted=True)
        sink.decoded({"kind": "ConfigMap", "retried": True}, defaulted=True)

    logged = create(decoded)["requestObject"]
    assert list(logged) == ["kind", "apiVersion", "metadata", "data"]
    assert create(lambda sink: sink.undecodable()).get("requestObject") is None
    as_sent = create(lambda sink: None)["requestObject"]  # a handler that tells nothing
    assert as_sent == {"metadata": {"name": "cm"}, "extra": 1}


def test_a_deletes_options_are_logged_as_its_handler_decoded_them() -> None:
    """The delete handler tells the event its options in the internal version (or that
    they did not decode): the event holds that, not the body."""
    options = {"kind": "DeleteOptions", "apiVersion": "meta.platform.io/__internal"}

    def delete(body: bytes, tell: Any) -> dict[str, Any]:
        return _write(b"DELETE", "/api/v1/namespaces/a/configmaps/cm", body, 200, tell)

    told = {**options, "gracePeriodSeconds": 5}
    logged = delete(b'{"gracePeriodSeconds": 5, "unknown": 1}', lambda a: a.decoded(told))
    assert logged["requestObject"] == told
    refused = delete(b'{"gracePeriodSeconds": "abc"}', lambda a: a.undecodable())
    assert "requestObject" not in refused


PROTOBUF = b"application/vnd.kubernetes.protobuf"


def test_a_binary_answer_is_logged_as_its_handler_made_it() -> None:
    """kubectl's answers are Protobuf: kube logs the object (and a failure's Status) its
    handler answered with, whatever the encoding."""
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "p", "managedFields": [{}]}}
    _, events = serve(
        b"GET", "/api/v1/namespaces/a/pods/p", reply=b"k8s\x00...", reply_type=PROTOBUF, answer=pod
    )
    assert events[-1]["responseObject"] == {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": "p"},
    }
    status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure"}
    status |= {"message": 'secrets "s" not found', "reason": "NotFound", "code": 404}
    _, events = serve(
        b"GET", "/api/v1/namespaces/a/secrets/s", code=404, reply=b"k8s\x00",
        reply_type=PROTOBUF, answer=status,
    )  # fmt: skip
    assert events[-1]["responseStatus"] == {
        "metadata": {},
        "status": "Failure",
        "message": 'secrets "s" not found',
        "reason": "NotFound",
        "code": 404,
    }
    assert "responseObject" not in events[-1]  # Metadata level


def test_a_policy_naming_kubes_groups_matches_the_branded_ones() -> None:
    policy = load_bytes(
        b"""apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Request
  resources: [{group: rbac.authorization.k8s.io, resources: [roles]}, {group: metrics.k8s.io}]
- level: None
"""
    )

    def attrs(group: str, resource: str) -> Attributes:
        return Attributes(JANE, "get", is_resource=True, api_group=group, resource=resource)

    assert policy.evaluate(attrs("rbac.authorization.platform.io", "roles")).level == "Request"
    assert policy.evaluate(attrs("rbac.authorization.k8s.io", "roles")).level == "Request"
    assert policy.evaluate(attrs("metrics.k8s.io", "pods")).level == "Request"  # as named
    assert policy.evaluate(attrs("apps", "deployments")).level == "None"
