"""The request-flow side of auditing (kube's WithAuditInit and WithAudit filters).

``Auditor.begin`` runs after authentication: every request gets an ``Audit-Id``
response header (the client's own, when it sent one); when the policy gives the request
a level it gets an ``AuditRecord``, which emits RequestReceived at once, ResponseStarted
when a long-running response starts, and ResponseComplete when the response finishes.
Bodies are only kept when the level logs them, and a failure's Status only on errors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Protocol

import orjson
from twisted.web.server import Request

from platform_api.apiserver.audit import event as ev
from platform_api.apiserver.audit.policy import (
    METADATA,
    NONE,
    REQUEST,
    REQUEST_RESPONSE,
    Attributes,
    Policy,
    RequestAuditConfig,
)
from platform_api.apiserver.auditmetrics import AUDIT_EVENTS, AUDIT_LEVELS
from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.authentication.user import UserInfo
from platform_api.context import Context
from platform_api.uid import new_uid

DECISION = "authorization.platform.io/decision"
REASON = "authorization.platform.io/reason"
_RANK = {NONE: 0, METADATA: 1, REQUEST: 2, REQUEST_RESPONSE: 3}
_LEVEL_COUNTERS = {level: AUDIT_LEVELS.labels(level=level) for level in _RANK}
_OBJECT_VERBS = ("create", "update")
_BODY_VERBS = (*_OBJECT_VERBS, "patch", "delete", "deletecollection")  # requestObject's
_REF_FROM_BODY = ("namespace", "name", "uid", "resourceVersion")  # LogRequestObject fills
# ObjectReference's field order
_REF_KEYS = (
    "resource", "namespace", "name", "uid", "apiGroup", "apiVersion", "resourceVersion",
    "subresource",
)  # fmt: skip


class Backend(Protocol):
    def process(self, event: dict[str, Any]) -> None: ...

    def shutdown(self) -> Any: ...


def audit_id(request: Request) -> str:
    """The request's audit ID: the client's ``Audit-ID`` header, else a new UUID."""
    sent = request.getHeader(b"audit-id")
    value = sent.decode("latin-1").strip() if sent else ""
    return value or new_uid()


def authorization_annotations(ctx: Context, allowed: bool, reason: str) -> None:
    """kube's authorization filter annotates every request with its decision."""
    ctx.annotate(DECISION, "allow" if allowed else "forbid")
    ctx.annotate(REASON, reason)


class Auditor:
    """The policy and the backends; ``now`` is the wall clock (injected for tests)."""

    def __init__(
        self,
        policy: Policy,
        backends: Sequence[Backend],
        now: Callable[[], float],
        api_version: str = ev.API_VERSION,
    ):
        self.policy = policy
        self.backends = list(backends)
        self.now = now
        self.api_version = api_version  # the Events' (kube's under upstream names)

    def begin(self, request: Request, info: RequestInfo, user: UserInfo) -> AuditRecord | None:
        """Evaluate the policy for ``user`` (the authenticated one, before impersonation)."""
        config = self.evaluate(info, user)
        if config.level == NONE:
            return None
        return AuditRecord(self, request, info, user, config)

    def failed_authentication(self, request: Request, info: RequestInfo, message: str) -> None:
        """kube's WithFailedAuthenticationAudit: one ResponseStarted event, no user."""
        config = self.evaluate(info, None)
        if config.level == NONE or "ResponseStarted" in config.omit_stages:
            return
        fields = request_fields(request, info, config.level, self.now())
        fields["user"] = {}
        fields["responseStatus"] = {"metadata": {}, "message": message, "code": 401}
        fields.update(stage="ResponseStarted", stageTimestamp=fields["requestReceivedTimestamp"])
        self.emit(ev.render(fields, self.api_version))

    def evaluate(self, info: RequestInfo, user: UserInfo | None) -> RequestAuditConfig:
        attrs = Attributes(
            user=user,
            verb=info.verb,
            path=info.path,
            is_resource=info.is_resource,
            api_group=info.api_group,
            namespace=info.namespace,
            resource=info.resource,
            subresource=info.subresource,
            name=info.name,
        )
        config = self.policy.evaluate(attrs)
        _LEVEL_COUNTERS[config.level].inc()
        return config

    def emit(self, event: dict[str, Any]) -> None:
        AUDIT_EVENTS.inc()
        for backend in self.backends:
            backend.process(event)

    def shutdown(self) -> list[Any]:
        return [backend.shutdown() for backend in self.backends]


class AuditRecord:
    """One request's event, emitted once per stage the policy keeps."""

    def __init__(
        self,
        auditor: Auditor,
        request: Request,
        info: RequestInfo,
        user: UserInfo,
        config: RequestAuditConfig,
    ) -> None:
        self.auditor, self.request, self.info, self.config = auditor, request, info, config
        self.user = user
        self.rank = _RANK[config.level]
        self.ctx: Context | None = None
        self.chunks: list[bytes] = []
        self.started = False
        self.fields = request_fields(request, info, config.level, auditor.now())
        self.fields["user"] = user.to_review()
        # twisted.web closes the body before notifyFinish fires: keep a mutation's now.
        self.body = b""
        # What the handler decoded (RequestObject), or that it did not decode.
        self.decoded_body: dict[str, Any] | None = None
        self.defaulted = self.failed = False
        # The answer as its handler made it, for one the wire form does not give back.
        self.answered_with: Callable[[], Any] | None = None
        if info.is_resource and info.verb in _BODY_VERBS:
            content = getattr(request, "content", None)
            self.body = content.getvalue() if content is not None else b""
        self._stage("RequestReceived")
        self._write = request.write
        request.write = self._capture  # type: ignore[method-assign]
        request.notifyFinish().addBoth(self._finished)

    def attach(self, ctx: Context) -> None:
        """The request's Context: its annotations, whom it impersonates, if anyone, and
        where the handler tells what it decoded of the body."""
        self.ctx = ctx
        ctx.audit_response = self
        if ctx.user is not self.user:
            self.fields["impersonatedUser"] = ctx.user.to_review()
        info = self.info
        if info.verb in _BODY_VERBS and info.verb != "patch":  # what their handlers decode
            ctx.audit_request = self

    def decoded(self, obj: dict[str, Any], *, defaulted: bool = False) -> None:
        """kube's LogRequestObject: objectRef's blanks from the body as decoded (in any
        encoding), and at Request and up the body itself, then (``defaulted``) with the
        kind's defaults, before admission; a snapshot, as the write goes on changing the
        object (a retried update's first is kept)."""
        if self.defaulted:
            return
        if self.rank < _RANK[REQUEST]:  # its metadata is all the event will hold
            meta = obj.get("metadata")
            meta = meta if isinstance(meta, dict) else {}
            self.decoded_body = {"metadata": {k: meta.get(k) for k in _REF_FROM_BODY}}
        else:
            copied = orjson.loads(orjson.dumps(obj))
            head = {k: copied.pop(k) for k in ("kind", "apiVersion") if k in copied}
            self.decoded_body = {**head, **copied}
        self.defaulted = defaulted

    def undecodable(self) -> None:
        self.decoded_body, self.failed = None, True

    def answered(self, made: Callable[[], Any]) -> None:
        """kube's LogResponseObject for an answer in Protobuf or CBOR: the object or Status
        as JSON data, made only if the event records it."""
        self.answered_with = made

    def _capture(self, data: bytes) -> None:
        if not self.started:
            self.started = True
            if self.info.long_running:
                self._set_status(None)
                self._stage("ResponseStarted")
        if (
            self.rank >= _RANK[REQUEST_RESPONSE] and not self.info.long_running
        ) or self.request.code >= 400:
            self.chunks.append(data)
        self._write(data)

    def _finished(self, result: Any) -> None:
        self._set_status(self._response_body())
        self._request_object()
        if self.ctx is not None and self.ctx.audit_annotations:
            self.fields["annotations"] = dict(self.ctx.audit_annotations)
        self._stage("ResponseComplete")
        self.chunks = []

    def _set_status(self, body: Any) -> None:
        self.fields["responseStatus"] = ev.response_status(self.request.code, body)

    def _response_body(self) -> Any:
        if not self.chunks:
            return None
        headers = self.request.responseHeaders
        body = ev.decode_body(
            b"".join(self.chunks),
            _header(headers, b"content-type"),
            _header(headers, b"content-encoding"),
        )
        if body is None and self.answered_with is not None:
            body = self.answered_with()
        if self.rank >= _RANK[REQUEST_RESPONSE] and body is not None:
            self.fields["responseObject"] = self._trim(body)
        return body

    def _request_object(self) -> None:
        """The request body as its handler decoded it (a create's or update's object, a
        delete's options), else as sent (a patch): objectRef's blanks, and requestObject
        at Request and up."""
        verb, raw = self.info.verb, self.body
        if not raw or self.failed:
            return
        body: Any = self.decoded_body
        if body is None:
            media = _header(self.request.requestHeaders, b"content-type")
            if verb == "patch" and "yaml" not in media:
                media = "application/json"  # patch types are all JSON but apply's YAML
            body = ev.decode_body(raw, media)
        ref = self.fields.get("objectRef")
        meta = body.get("metadata") if isinstance(body, dict) and verb in _OBJECT_VERBS else None
        if isinstance(ref, dict) and isinstance(meta, dict):
            for key in _REF_FROM_BODY:
                if not ref.get(key) and meta.get(key):
                    ref[key] = meta[key]
            self.fields["objectRef"] = _ordered_ref(ref)
        if self.rank >= _RANK[REQUEST] and body is not None:
            self.fields["requestObject"] = self._trim(body)

    def _trim(self, obj: Any) -> Any:
        return ev.without_managed_fields(obj) if self.config.omit_managed_fields else obj

    def _stage(self, stage: str) -> None:
        if stage in self.config.omit_stages:
            return
        fields = dict(self.fields, stage=stage, stageTimestamp=ev.micro_time(self.auditor.now()))
        self.auditor.emit(ev.render(fields, self.auditor.api_version))


def request_fields(request: Request, info: RequestInfo, level: str, now: float) -> dict[str, Any]:
    """The fields an event has from the start (kube's LogRequestMetadata)."""
    return {
        "level": level,
        "auditID": _header(request.responseHeaders, b"audit-id"),
        "requestURI": request.uri.decode("latin-1"),
        "verb": info.verb,
        "sourceIPs": ev.client_ips(request),
        "userAgent": ev.user_agent((request.getHeader(b"user-agent") or b"").decode()),
        "objectRef": _object_ref(info),
        "requestReceivedTimestamp": ev.micro_time(now),
    }


def _header(headers: Any, name: bytes) -> str:
    values = headers.getRawHeaders(name)
    return values[0].decode("latin-1") if values else ""


def _object_ref(info: RequestInfo) -> dict[str, str] | None:
    if not info.is_resource:
        return None
    return _ordered_ref(
        {
            "resource": info.resource,
            "namespace": info.namespace,
            "name": info.name,
            "apiGroup": info.requested_group or info.api_group,  # the group the client named
            "apiVersion": info.api_version,
            "subresource": info.subresource,
        }
    )


def _ordered_ref(ref: dict[str, str]) -> dict[str, str]:
    """ObjectReference's field order, empty fields left out."""
    return {k: ref[k] for k in _REF_KEYS if ref.get(k)}
