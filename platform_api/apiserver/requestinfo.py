"""URL -> verb, group, version, namespace, resource, sub-resource, name (kube's RequestInfo).

Authorization and routing both read this, so it is parsed once, before
authentication, with kube's rules: ``/api/v1/namespaces/x/status`` is the status
of namespace ``x``, a GET without a name is ``list`` or ``watch``, a DELETE without
a name is ``deletecollection``, and ``/api/v1/watch/...`` is the legacy watch form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote

API_PREFIXES = ("api", "apis")
GROUPLESS_PREFIXES = ("api",)
SPECIAL_VERBS = ("proxy", "watch")
SPECIAL_VERBS_NO_SUBRESOURCES = ("proxy",)
NAMESPACE_SUBRESOURCES = ("status", "finalize")
_METHOD_VERBS = {
    b"POST": "create",
    b"GET": "get",
    b"HEAD": "get",
    b"PUT": "update",
    b"PATCH": "patch",
    b"DELETE": "delete",
}


@dataclass
class RequestInfo:
    path: str
    verb: str
    is_resource: bool = False
    api_prefix: str = ""
    api_group: str = ""
    api_version: str = ""
    namespace: str = ""
    resource: str = ""
    subresource: str = ""
    name: str = ""
    parts: list[str] = field(default_factory=list)
    # Set when the watch verb came from the legacy /watch/ path prefix.
    verb_via_path: bool = False
    # Set when the path was /namespaces/<ns>/<resource>...: a namespaced request.
    namespace_path: bool = False
    label_selector: str = ""
    field_selector: str = ""
    # The upstream group name the path used (``--serve-upstream-groups``); api_group
    # then holds the branded group that serves it.
    requested_group: str = ""

    @property
    def long_running(self) -> bool:
        """Requests exempt from the request timeout and the in-flight limit."""
        if self.verb in ("watch", "proxy"):
            return True
        return self.subresource in ("attach", "exec", "proxy", "log", "portforward")


class RequestInfoError(ValueError):
    """The path names no kind and namespace (``/api/v1/watch``): kube's filter fails."""


def query_flag(value: bytes | str) -> bool:
    """A query parameter as kube's parameter codec reads a bool: "0" and "false" (any
    case) are false, anything else, even empty or "maybe", is true."""
    text = value.decode("latin-1") if isinstance(value, bytes) else value
    return text.lower() not in ("false", "0")


def parse(method: bytes, path: str, args: dict[bytes, list[bytes]]) -> RequestInfo:
    """Build the RequestInfo of a request; ``path`` is the URL path, still %-encoded.
    It is split once decoded, as kube splits Go's ``URL.Path``: ``%2F`` separates too."""
    info = RequestInfo(path=path, verb=method.decode("latin-1").lower())
    decoded = unquote(path).strip("/")
    parts = decoded.split("/") if decoded else []
    if len(parts) < 3 or parts[0] not in API_PREFIXES:
        return info
    info.api_prefix = parts[0]
    parts = parts[1:]
    if info.api_prefix not in GROUPLESS_PREFIXES:
        if len(parts) < 3:
            return info
        info.api_group = parts[0]
        parts = parts[1:]
    info.is_resource = True
    info.api_version = parts[0]
    parts = parts[1:]

    if parts[0] in SPECIAL_VERBS:
        if len(parts) < 2:
            raise RequestInfoError(path)
        info.verb = parts[0]
        info.verb_via_path = True
        parts = parts[1:]
    else:
        info.verb = _METHOD_VERBS.get(method, "")

    if parts[0] == "namespaces" and len(parts) > 1:
        info.namespace = parts[1]
        if len(parts) > 2 and parts[2] not in NAMESPACE_SUBRESOURCES:
            parts = parts[2:]
            info.namespace_path = True
    info.parts = parts

    if len(parts) >= 3 and info.verb not in SPECIAL_VERBS_NO_SUBRESOURCES:
        info.subresource = parts[2]
    if len(parts) >= 2:
        info.name = parts[1]
    if len(parts) >= 1:
        info.resource = parts[0]

    if not info.name and info.verb == "get":
        watch = args.get(b"watch")
        info.verb = "watch" if watch and query_flag(watch[0]) else "list"
        field_selector = args.get(b"fieldSelector")
        if field_selector:
            info.name = _name_from_field_selector(field_selector[0].decode("utf-8", "replace"))
    if not info.name and info.verb == "delete":
        info.verb = "deletecollection"
    if not info.verb_via_path and info.verb in ("list", "watch", "deletecollection"):
        if args.get(b"fieldSelector"):
            info.field_selector = args[b"fieldSelector"][0].decode("utf-8", "replace")
        if args.get(b"labelSelector"):
            info.label_selector = args[b"labelSelector"][0].decode("utf-8", "replace")
    return info


def _name_from_field_selector(selector: str) -> str:
    """A ``metadata.name=x`` requirement lets RBAC ``resourceNames`` authorize list/watch."""
    for term in selector.split(","):
        for op in ("==", "="):
            key, sep, value = term.partition(op)
            if sep and key.strip() == "metadata.name" and "!" not in key:
                value = value.strip()
                if value and "/" not in value and "%" not in value and value not in (".", ".."):
                    return value
                return ""
    return ""


def is_upgrade_request(request: Any) -> bool:
    """kube's ``httpstream.IsUpgradeRequest``: a ``Connection`` header whose value
    contains ``upgrade`` (exec, attach, port-forward: the connection will carry another
    protocol)."""
    values = request.requestHeaders.getRawHeaders(b"connection") or []
    return any(b"upgrade" in value.lower() for value in values)
