"""The one way an error reaches a client: a ``StatusError`` carrying a Kubernetes Status.

Constructors mirror apimachinery's ``pkg/api/errors`` so messages, reasons and
``details`` match what kubectl and client libraries parse (for example
``details.kind`` is the plural resource for NotFound but the Kind for Invalid).
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from platform_api.validation.field import FieldError, aggregate, go_quote

# Reasons, as metav1.StatusReason.
NOT_FOUND = "NotFound"
ALREADY_EXISTS = "AlreadyExists"
CONFLICT = "Conflict"
INVALID = "Invalid"
BAD_REQUEST = "BadRequest"
UNAUTHORIZED = "Unauthorized"
FORBIDDEN = "Forbidden"
METHOD_NOT_ALLOWED = "MethodNotAllowed"
NOT_ACCEPTABLE = "NotAcceptable"
UNSUPPORTED_MEDIA_TYPE = "UnsupportedMediaType"
REQUEST_ENTITY_TOO_LARGE = "RequestEntityTooLarge"
TOO_MANY_REQUESTS = "TooManyRequests"
INTERNAL_ERROR = "InternalError"
EXPIRED = "Expired"
GONE = "Gone"
TIMEOUT = "Timeout"
SERVER_TIMEOUT = "ServerTimeout"
SERVICE_UNAVAILABLE = "ServiceUnavailable"


async def tolerating(work: Awaitable[Any], *codes: int) -> None:
    """Await ``work``; a StatusError with one of ``codes`` (a controller's 404 for an
    object already gone, 409 for one another process made first) is not a failure."""
    try:
        await work
    except StatusError as e:
        if e.code not in codes:
            raise


def qualified(resource: str, group: str) -> str:
    """``schema.GroupResource.String()``: ``configmaps`` or ``deployments.apps``."""
    return f"{resource}.{group}" if group else resource


class StatusError(Exception):
    """An API error; ``status()`` is the exact body, ``code`` the HTTP status."""

    def __init__(
        self,
        code: int,
        reason: str,
        message: str,
        details: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.message = message
        self.details = details
        self.headers = headers or {}
        # ListMeta of the Status (an expired continue token carries a fresh one here).
        self.metadata: dict[str, Any] = {}
        # kube's own timeout filter writes its Status with no kind or apiVersion in text.
        self.untyped_text = False
        # Answered with this plain-text body instead of a Status (Go's http.NotFound).
        self.plain: bytes | None = None
        # go-restful's router's own answer (no route, a method the route does not take).
        self.router = False

    def status(self, *, typed: bool = True) -> dict[str, Any]:
        body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1"} if typed else {}
        body.update(metadata=self.metadata, status="Failure", message=self.message)
        if self.reason:
            body["reason"] = self.reason
        if self.details is not None:
            body["details"] = self.details
        body["code"] = self.code
        return body

    def __repr__(self) -> str:
        return f"StatusError({self.code}, {self.reason!r}, {self.message!r})"


def _details(
    name: str = "",
    group: str = "",
    kind: str = "",
    causes: list[dict[str, str]] | None = None,
    retry_after: int = 0,
    uid: str = "",
) -> dict[str, Any]:
    """StatusDetails with Go's ``omitempty``, keys in struct order."""
    out: dict[str, Any] = {}
    if name:
        out["name"] = name
    if group:
        out["group"] = group
    if kind:
        out["kind"] = kind
    if uid:
        out["uid"] = uid
    if causes:
        out["causes"] = causes
    if retry_after:
        out["retryAfterSeconds"] = retry_after
    return out


def not_found(resource: str, group: str, name: str) -> StatusError:
    msg = f"{qualified(resource, group)} {go_quote(name)} not found"
    return StatusError(404, NOT_FOUND, msg, _details(name, group, resource))


def already_exists(resource: str, group: str, name: str) -> StatusError:
    msg = f"{qualified(resource, group)} {go_quote(name)} already exists"
    return StatusError(409, ALREADY_EXISTS, msg, _details(name, group, resource))


def generate_name_conflict(resource: str, group: str, name: str) -> StatusError:
    msg = (
        f"{qualified(resource, group)} {go_quote(name)} already exists, the server was not "
        "able to generate a unique name for the object"
    )
    details = _details(name, group, resource, retry_after=1)
    return StatusError(409, ALREADY_EXISTS, msg, details, {"Retry-After": "1"})


CONFLICT_MODIFIED = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def conflict(resource: str, group: str, name: str, why: str = CONFLICT_MODIFIED) -> StatusError:
    msg = f"Operation cannot be fulfilled on {qualified(resource, group)} {go_quote(name)}: {why}"
    return StatusError(409, CONFLICT, msg, _details(name, group, resource))


def apply_conflict(causes: list[dict[str, str]], message: str) -> StatusError:
    return StatusError(409, CONFLICT, message, _details(causes=causes))


def invalid(kind: str, group: str, name: str, errors: list[FieldError]) -> StatusError:
    qualified_kind = f"{kind}.{group}" if group else kind
    msg = f"{qualified_kind} {go_quote(name)} is invalid"
    if errors:
        msg += ": " + aggregate(errors)
    causes = [e.cause() for e in errors]
    return StatusError(422, INVALID, msg, _details(name, group, kind, causes))


def unprocessable() -> StatusError:
    """kube's generic 422 (NewGenericServerResponse): a patch that cannot be applied."""
    return StatusError(
        422, INVALID, "the server rejected our request due to an error in our request", {}
    )


def bad_request(message: str) -> StatusError:
    return StatusError(400, BAD_REQUEST, message)


def unauthorized(message: str = "Unauthorized") -> StatusError:
    return StatusError(401, UNAUTHORIZED, message or "not authorized")


def forbidden(resource: str, group: str, name: str, why: str) -> StatusError:
    if not resource and not group:
        msg = f"forbidden: {why}"
    elif not name:
        msg = f"{qualified(resource, group)} is forbidden: {why}"
    else:
        msg = f"{qualified(resource, group)} {go_quote(name)} is forbidden: {why}"
    return StatusError(403, FORBIDDEN, msg, _details(name, group, resource))


def filter_refusal(error: StatusError) -> StatusError:
    """``error`` as kube's filters answer it (responsewriters.RespondWithError: the
    authorization and impersonation filters' refusals), with ``X-Content-Type-Options:
    nosniff``, which kube's handlers do not send with their errors."""
    error.headers.setdefault("X-Content-Type-Options", "nosniff")
    return error


def method_not_supported(resource: str, group: str, action: str) -> StatusError:
    msg = f"{action} is not supported on resources of kind {go_quote(qualified(resource, group))}"
    return StatusError(405, METHOD_NOT_ALLOWED, msg, _details(group=group, kind=resource))


def path_not_found() -> StatusError:
    """No route: an unknown group, version, resource or sub-resource."""
    error = StatusError(404, NOT_FOUND, "the server could not find the requested resource", {})
    error.router = True
    return error


def page_not_found() -> StatusError:
    """No handler at all: a path outside the API or in a group nobody serves, which kube
    leaves to Go's NotFound handler (plain text, not a Status)."""
    error = StatusError(404, NOT_FOUND, "404 page not found")
    error.plain = b"404 page not found\n"
    return error


def method_not_allowed() -> StatusError:
    """A route exists but not for this HTTP method."""
    error = StatusError(
        405,
        METHOD_NOT_ALLOWED,
        "the server does not allow this method on the requested resource",
        {},
    )
    error.router = True
    return error


def not_producible(produces: list[str]) -> StatusError:
    """go-restful's 406: no Accept entry names a type the route produces."""
    msg = "406: Not Acceptable\n\nAvailable representations: " + ", ".join(produces)
    return StatusError(406, NOT_ACCEPTABLE, msg, {})


def not_acceptable(accepted: list[str]) -> StatusError:
    msg = "only the following media types are accepted: " + ", ".join(accepted)
    return StatusError(406, NOT_ACCEPTABLE, msg)


def not_acceptable_because(message: str) -> StatusError:
    """kube's errNotAcceptable: a 406 that says why, with no details."""
    return StatusError(406, NOT_ACCEPTABLE, message)


def unsupported_media_type(content_type: str, accepted: list[str]) -> StatusError:
    msg = (
        f"the body of the request was in an unknown format - accepted media types include: "
        f"{', '.join(accepted)}"
    )
    del content_type  # kube does not echo the offending type
    return StatusError(415, UNSUPPORTED_MEDIA_TYPE, msg)


def typed_patch_failed(
    namespace: str, name: str, api_version: str, kind: str, problem: str
) -> StatusError:
    """kube's answer when an applied configuration does not fit the schema: the field
    manager's error, passed on as a bare 500 (no reason, no details)."""
    group, _, version = api_version.rpartition("/")
    return StatusError(
        500,
        "",
        f"failed to create typed patch object ({namespace}/{name}; {group}/{version}, "
        f"Kind={kind}): {problem}",
    )


def field_manager_failed(message: str) -> StatusError:
    """The field manager's own error (an object that will not convert into a manager's
    version), passed on by kube as a bare 500."""
    return StatusError(500, "", message)


def conversion_failed(
    where: tuple[str, str], api_version: str, kind: str, problem: str
) -> StatusError:
    """kube's answer when an applied object does not convert to its Go type (a fraction
    in an integer field): the field manager's error, a bare 500 as above."""
    group, _, version = api_version.rpartition("/")
    gvk = f"{group}/{version}, Kind={kind}"
    return StatusError(
        500,
        "",
        f"failed to convert new object ({where[0]}/{where[1]}; {gvk}) to proper version: "
        f"unable to convert unstructured object to {gvk}: {problem}",
    )


def unsupported_patch_type() -> StatusError:
    """A PATCH of a type the route does not consume: go-restful refuses it before kube's
    handler runs, with its plain text and empty details."""
    return StatusError(415, UNSUPPORTED_MEDIA_TYPE, "415: Unsupported Media Type", {})


def request_entity_too_large(message: str) -> StatusError:
    return StatusError(413, REQUEST_ENTITY_TOO_LARGE, f"Request entity too large: {message}")


def too_many_requests(message: str, retry_after: int = 1) -> StatusError:
    return StatusError(
        429,
        TOO_MANY_REQUESTS,
        message,
        _details(retry_after=retry_after),
        {"Retry-After": str(retry_after)},
    )


def internal_error(err: object) -> StatusError:
    text = str(err)
    return StatusError(
        500,
        INTERNAL_ERROR,
        f"Internal error occurred: {text}",
        _details(causes=[{"message": text}]),
    )


def request_info_failed(uri: str, problem: str) -> StatusError:
    """kube's RequestInfo filter refusing ``uri``: Go's ``http.Error``, a 500 in text."""
    message = f"failed to create RequestInfo: {problem}"
    error = StatusError(500, INTERNAL_ERROR, message)
    error.plain = f"Internal Server Error: {go_quote(uri)}: {message}\n".encode()
    return error


def expired(message: str) -> StatusError:
    """``NewResourceExpired``: a resourceVersion or continue token too old to serve."""
    return StatusError(410, EXPIRED, message)


def gone(message: str) -> StatusError:
    return StatusError(410, GONE, message)


def timeout(
    message: str, retry_after: int = 0, causes: list[dict[str, str]] | None = None
) -> StatusError:
    headers = {"Retry-After": str(retry_after)} if retry_after else None
    details = _details(causes=causes, retry_after=retry_after)
    return StatusError(504, TIMEOUT, f"Timeout: {message}", details, headers)


def request_timed_out() -> StatusError:
    """A request that outlived ``--request-timeout``, as kube's timeout filter answers it."""
    error = timeout("request did not complete within the allotted timeout")
    error.untyped_text = True
    return error


def write_timed_out() -> StatusError:
    """A write that outlived its handler's deadline (``?timeout=``, else 34 s), as kube's
    write handlers answer it (finishRequest)."""
    return timeout("request did not complete within requested timeout - context deadline exceeded")


def too_large_resource_version(wanted: int, current: int, retry_after: int = 1) -> StatusError:
    """A read of a revision this server has not reached (kube: after a short wait; a
    continued list's revision with no retry advice)."""
    return timeout(
        f"Too large resource version: {wanted}, current: {current}",
        retry_after=retry_after,
        causes=[{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
    )


def service_unavailable(message: str) -> StatusError:
    return StatusError(503, SERVICE_UNAVAILABLE, message)


def unknown(message: str, code: int = 500) -> StatusError:
    """An error that is not a Status (kube's ErrorToAPIStatus fallback): no reason, the
    error's own text; etcd's "request is too large" reaches clients this way."""
    return StatusError(code, "", message)
