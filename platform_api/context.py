"""The per-request state every layer below the filters reads."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Protocol

from twisted.logger import Logger

from platform_api.authentication.user import UserInfo

_log = Logger()
# The filters inside kube's tracing filter, in the order a request enters them
# (``Trace.enter``): each opens kube's filterlatency span when the request is traced.
AUDIT, IMPERSONATION, FAIRNESS, AUTHORIZATION = "audit", "impersonation", "fairness", "authz"
# The request's Trace, where the response writer finds it (a refusal by authentication
# has no Context).
TRACE_ATTRIBUTE = "_platform_trace"
# The seconds a request has waited on admission webhooks, which kube's SLI latency
# (apiserver_request_sli_duration_seconds) leaves out: one mutable cell per request,
# shared with the coroutines it starts (kube's LatencyTrackers).
_WEBHOOK_WAIT: ContextVar[list[float] | None] = ContextVar("webhook_wait", default=None)


def track_webhook_wait() -> list[float]:
    """Start counting the current request's webhook time; the cell it adds to."""
    cell = [0.0]
    _WEBHOOK_WAIT.set(cell)
    return cell


def add_webhook_wait(seconds: float) -> None:
    cell = _WEBHOOK_WAIT.get()
    if cell is not None:
        cell[0] += seconds


class Trace(Protocol):
    """A traced request's spans (apiserver/tracing.py's RequestTrace): layers below the
    filters open theirs under ``child``; spans are OpenTelemetry's, ended by the opener."""

    @property
    def audit_id(self) -> str: ...

    def child(self, name: str, attributes: dict[str, Any], parent: Any = None) -> Any: ...

    def enter(self, stage: str) -> None: ...

    def handler(self, request: Any, info: Any) -> Any: ...

    def outgoing(self, parent: Any, method: str, url: str) -> tuple[Any, dict[str, str]]: ...

    def event(self, name: str, attributes: dict[str, Any]) -> None: ...

    @property
    def writes_response_events(self) -> bool: ...

    def serialized(self, request: Any, media: str, encoder: str, writer: str, size: int) -> None:
        """kube's SerializeObject span of an answer, under the current span."""

    @property
    def handler_version(self) -> str | None:
        """The group version of the endpoint whose handler runs; None outside one."""

    @property
    def authenticating(self) -> bool:
        """Whether the request got no further than authentication (it was refused)."""


class RequestObject(Protocol):
    """The audit event's requestObject of a create, update or delete: kube logs the body
    as its handler decoded it (an object defaulted, before admission; DeleteOptions in
    the internal version), and nothing when it does not decode (apiserver/audit/hook.py)."""

    def decoded(self, obj: dict[str, Any], *, defaulted: bool = False) -> None: ...

    def undecodable(self) -> None: ...


class ResponseObject(Protocol):
    """Where the audit event reads an answer it cannot read back from the wire (Protobuf,
    CBOR): kube logs the object or Status its handler answers with, whatever the client's
    encoding.  ``made`` gives it, and is called only if the event records it."""

    def answered(self, made: Callable[[], Any]) -> None: ...


@dataclass
class Context:
    """What a handler passes down: who asks, and what the response should carry."""

    user: UserInfo
    namespace: str = ""
    dry_run: bool = False
    field_manager: str = ""
    # Warning header texts, in order; each becomes one ``Warning: 299 - "..."`` header.
    warnings: list[str] = field(default_factory=list)
    # The upstream group name objects go out with (the request named it, in its path or
    # its body's apiVersion); empty: the branded names.
    render_group: str = ""
    # Annotations for the request's audit event (kube's audit.AddAuditAnnotation): set by
    # authorization, admission plugins, webhooks and policies; the first value of a key wins.
    audit_annotations: dict[str, str] = field(default_factory=dict)
    # What to take back if the request fails after all (kube's FinishFunc(false)): an
    # allocator that wrote an IPAddress for a Service that is then refused.
    undo: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    # What to do once it has succeeded: an update's cluster IPs given up are freed then.
    done: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    # --tracing-config-file: the request's spans, when it is sampled.
    trace: Trace | None = None
    # Where a create's, update's or delete's decoded body goes when the request is audited.
    audit_request: RequestObject | None = None
    # Where a binary answer goes when the request is audited.
    audit_response: ResponseObject | None = None
    # A watch calls it once it has sent its initial state: priority and fairness then
    # frees the seats it held (kube's watch initialization signal).
    watch_initialized: Callable[[], None] | None = None

    def watch_started(self) -> None:
        if self.watch_initialized is not None:
            self.watch_initialized()

    def warn(self, text: str) -> None:
        if text not in self.warnings:
            self.warnings.append(text)

    def annotate(self, key: str, value: str) -> None:
        self.audit_annotations.setdefault(key, value)

    def on_failure(self, action: Callable[[], Awaitable[None]]) -> None:
        self.undo.append(action)

    def on_success(self, action: Callable[[], Awaitable[None]]) -> None:
        self.done.append(action)

    async def succeeded(self) -> None:
        """The request succeeded: do what waited for it, in order."""
        actions, self.done, self.undo = self.done, [], []
        for action in actions:
            try:
                await action()
            except Exception:  # the write is stored: the client hears of its success
                _log.failure("after a request succeeded")

    async def failed(self) -> None:
        """The request failed: take back what asked to be, newest first."""
        actions, self.undo = self.undo[::-1], []
        for action in actions:
            try:
                await action()
            except Exception:  # the request's own error is what the client needs
                _log.failure("taking back a failed request's allocation")
