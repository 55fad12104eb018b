"""Connect subresources (``pods/exec``, ``attach``, ``portforward``, ``proxy``;
``services/proxy``, ``nodes/proxy``): kube's answers on a server without kubelets.

kube-apiserver reaches these through a node's kubelet or a pod's address.  Nothing here
runs a pod, so every request ends in an error, but the one kube gives at the same step:
admission of the CONNECT (a policy's or a webhook's refusal), the object's existence
(404), a pod no node was given (400 ``does not have a host assigned``), a node that does
not exist (404, worded by kube as a *pod* of the node's name), a node with no address of
the preferred types (a bare 500), a request that asks for no upgrade (400 ``Upgrade
request required``), an address kube would not dial (400 ``address not allowed``), a
service with no endpoints (503).  Where kube would dial,
this server says it does not.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from platform_api import errors
from platform_api.apiserver.requestinfo import is_upgrade_request
from platform_api.endpoints import connectoptions
from platform_api.endpoints.scope import Scope
from platform_api.scheme.types import ResourceType
from platform_api.validation.field import go_quote

NO_KUBELETS = "error dialing backend: this server does not connect to kubelets"
NO_PROXY = "error trying to reach service: this server does not proxy requests"
# The methods kube registers: streams take GET and POST; proxies every method.
STREAM_METHODS = frozenset((b"GET", b"POST"))
PROXY_METHODS = frozenset((b"GET", b"POST", b"PUT", b"PATCH", b"DELETE", b"HEAD", b"OPTIONS"))
STREAMS = ("exec", "attach", "portforward")


def methods(subresource: str) -> frozenset[bytes] | None:
    """The methods a connect subresource takes (None: not a connect subresource)."""
    if subresource in STREAMS:
        return STREAM_METHODS
    if subresource == "proxy":
        return PROXY_METHODS
    return None


def _store(scope: Scope, plural: str) -> Any:
    """The store of a core/v1 resource (nodes, endpoints: always served)."""
    rt = scope.handlers.scheme.lookup("", "v1", plural)
    assert rt is not None
    return scope.handlers.store(rt)


async def _node(scope: Scope, name: str) -> dict[str, Any] | None:
    try:
        return (await _store(scope, "nodes").read("", name)).object
    except errors.StatusError as e:
        if e.code == 404:
            return None
        raise


def _dialable(address: str) -> bool:
    """kube's proxy dialer refuses loopback, link-local and unspecified addresses."""
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return bool(address)  # a host name: kube would resolve it
    return not (ip.is_loopback or ip.is_link_local or ip.is_unspecified)


def _node_address(node: dict[str, Any]) -> str:
    """The address kube picks (--kubelet-preferred-address-types' default order)."""
    addresses = (node.get("status") or {}).get("addresses") or []
    for kind in ("Hostname", "InternalDNS", "InternalIP", "ExternalDNS", "ExternalIP"):
        for address in addresses:
            if address.get("type") == kind and address.get("address"):
                return str(address["address"])
    return ""


def proxied_name(kind: str, id_: str) -> str:
    """The object a proxy request names: its ``[scheme:]name[:port]`` (kube's
    SplitSchemeNamePort), or 400 as kube refuses one that is not."""
    parts = id_.split(":")
    scheme, name = ("", parts[0]) if len(parts) < 3 else (parts[0], parts[1])
    if len(parts) > 3 or not name or scheme not in ("", "http", "https"):
        raise errors.bad_request(f"invalid {kind} request {go_quote(id_)}")
    return name


async def handle(scope: Scope) -> bytes:
    rt: ResourceType = scope.resource
    sub = scope.info.subresource
    # kube admits a CONNECT (its options as the object) before it looks anything up.
    kind = rt.gvk(sub)[2]
    request_options = connectoptions.options(kind, scope.info, scope.request.args)
    await scope.handlers.admission.connect(scope, request_options)
    name = scope.name
    if sub == "proxy":
        name = proxied_name(rt.kind.lower(), name)
    obj = (await scope.store.read(scope.namespace, name)).object
    if rt.plural == "pods" and sub in STREAMS:
        return await _stream(scope, obj)
    if rt.plural == "pods":
        ip = (obj.get("status") or {}).get("podIP") or ""
        if not _dialable(ip):
            raise errors.bad_request("address not allowed")
        raise errors.service_unavailable(NO_PROXY)
    if rt.plural == "nodes":
        if not _dialable(_preferred_address(obj)):
            raise errors.bad_request("address not allowed")
        raise errors.service_unavailable(NO_PROXY)
    return await _service(scope, obj)


async def _stream(scope: Scope, pod: dict[str, Any]) -> bytes:
    node_name = (pod.get("spec") or {}).get("nodeName") or ""
    if not node_name:
        raise errors.bad_request(f"pod {scope.name} does not have a host assigned")
    await kubelet_address(scope, node_name)
    if not is_upgrade_request(scope.request):
        raise errors.bad_request("Upgrade request required")
    raise errors.unknown(NO_KUBELETS)


async def kubelet_address(scope: Scope, node_name: str) -> str:
    """Where kube would reach the kubelet of a pod's node (its GetConnectionInfo): 404 in
    kube's words for a node that is gone, 500 for one without an address of the
    preferred types."""
    node = await _node(scope, node_name)
    if node is None:
        raise errors.not_found("pods", "", node_name)
    return _preferred_address(node)


def _preferred_address(node: dict[str, Any]) -> str:
    """The node's address of a preferred type, or kube's bare 500 naming those it has."""
    address = _node_address(node)
    if not address:
        known = " ".join(
            f"{{{a.get('type', '')} {a.get('address', '')}}}"
            for a in (node.get("status") or {}).get("addresses") or []
        )
        raise errors.unknown(f"no preferred addresses found; known addresses: [{known}]")
    return address


async def _service(scope: Scope, service: dict[str, Any]) -> bytes:
    name = service["metadata"]["name"]
    try:
        endpoints = (await _store(scope, "endpoints").read(scope.namespace, name)).object
    except errors.StatusError as e:
        if e.code != 404:
            raise
        endpoints = {}
    ready = any(subset.get("addresses") for subset in endpoints.get("subsets") or [])
    if not ready:
        raise errors.service_unavailable(f'no endpoints available for service "{name}"')
    raise errors.service_unavailable(NO_PROXY)
