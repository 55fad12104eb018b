"""The attributes of kube's request spans, read off a twisted.web request: otelhttp's
server span's name and attributes, kube's handler span fields (``traceFields``), the
caller's trace headers.  Imported with tracing.py only."""

from __future__ import annotations

from typing import Any

from twisted.web.server import Request

from platform_api.apiserver import requestinfo
from platform_api.apiserver.audit import event as audit_event
from platform_api.apiserver.requestmetrics import clean_scope, clean_verb

_METHODS = frozenset("CONNECT DELETE GET HEAD OPTIONS PATCH POST PUT TRACE".split())  # noqa: SIM905


def span_name(request: Request, info: requestinfo.RequestInfo) -> str:
    """kube's span name: the method and, for a resource, its route's shape."""
    method = request.method.decode("latin-1")
    if not info.is_resource:
        return method
    name = f"/{info.api_prefix}"
    group = info.requested_group or info.api_group
    if group:
        name += f"/{group}"
    name += f"/{info.api_version}"
    if info.namespace:
        name += "/namespaces/{:namespace}"
    name += f"/{info.resource}"
    if info.name:
        name += "/{:name}"
    if info.subresource:
        name += f"/{info.subresource}"
    return f"{method} {name}"


def handler_fields(request: Request, info: requestinfo.RequestInfo) -> dict[str, Any]:
    """kube's ``traceFields``: the request as its handlers' spans describe it."""
    scope = clean_scope(info)
    return {
        "accept": _header(request, b"accept"),
        "audit-id": audit_id(request),
        "client": (audit_event.client_ips(request) or ["unknown"])[0],
        "api-group": info.requested_group or info.api_group,
        "api-version": info.api_version,
        "name": info.name,
        "subresource": info.subresource,
        "namespace": info.namespace,
        "protocol": _protocol(request),
        "resource": info.resource,
        "scope": scope,
        "url": request.path.decode("utf-8", "replace"),
        "user-agent": audit_event.user_agent(_header(request, b"user-agent") or "unknown"),
        "verb": clean_verb(request, info, scope),
    }


def serialize_fields(request: Request, media: str, encoder: str) -> dict[str, Any]:
    """responsewriters.SerializeObject's span attributes."""
    return {
        "audit-id": audit_id(request),
        "method": request.method.decode("latin-1"),
        "url": request.path.decode("utf-8", "replace"),
        "protocol": _protocol(request),
        "mediaType": media,
        "encoder": encoder,
    }


def request_attributes(request: Request) -> dict[str, Any]:
    """otelhttp 0.65's server attributes, then kube's ``http.target`` and ``audit-id``."""
    method = request.method.decode("latin-1")
    host, port = _split(_header(request, b"host"))
    attributes: dict[str, Any] = {
        "server.address": host,
        "http.request.method": method if method in _METHODS else "GET",
        "url.scheme": "https" if request.isSecure() else "http",
    }
    if port and port != (443 if request.isSecure() else 80):
        attributes["server.port"] = port
    if method not in _METHODS:
        attributes["http.request.method_original"] = method
    peer = request.getClientAddress()
    peer_host = getattr(peer, "host", "")
    if peer_host:
        attributes["network.peer.address"] = peer_host
        attributes["network.peer.port"] = getattr(peer, "port", 0)
    agent = _header(request, b"user-agent")
    if agent:
        attributes["user_agent.original"] = agent
    forwarded = _header(request, b"x-forwarded-for").split(",", 1)[0]
    if forwarded or peer_host:
        attributes["client.address"] = forwarded or peer_host
    attributes["url.path"] = request.path.decode("utf-8", "replace")
    attributes["network.protocol.version"] = _protocol(request).partition("/")[2]
    attributes["http.target"] = request.uri.decode("utf-8", "replace")
    attributes["audit-id"] = audit_id(request)
    return attributes


def carrier(request: Request) -> dict[str, str]:
    carrier = {}
    for name in (b"traceparent", b"tracestate", b"baggage"):
        value = request.getHeader(name)
        if value is not None:
            carrier[name.decode()] = value.decode("latin-1")
    return carrier


def _header(request: Request, name: bytes) -> str:
    value = request.getHeader(name)
    return value.decode("latin-1") if value else ""


def audit_id(request: Request) -> str:
    values = request.responseHeaders.getRawHeaders(b"audit-id") or [b""]
    return values[0].decode("latin-1")[:64]  # kube's GetAuditIDTruncated


def _protocol(request: Request) -> str:
    version = request.clientproto.decode("latin-1")  # HTTP/1.1; Twisted's HTTP/2 says HTTP/2
    return "HTTP/2.0" if version == "HTTP/2" else version


def _split(host: str) -> tuple[str, int]:
    name, colon, port = host.rpartition(":")
    if not colon or "]" in port or not port.isdigit():
        return host.strip("[]"), 0
    return name.strip("[]"), int(port)
