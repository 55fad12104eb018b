"""Route a resource request to its verb handler (kube's API installer, as a function).

Only verbs the resource type declares are routed, so discovery and routing agree: an
unknown resource or sub-resource is 404, a known path with the wrong method is 405.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from twisted.web.server import Request

from platform_api import errors, heavy
from platform_api.apiserver.requestinfo import RequestInfo
from platform_api.context import Context
from platform_api.endpoints import (
    accessreviews,
    componentstatus,
    connect,
    create,
    delete,
    deprecation,
    get,
    patch,
    podlog,
    pods,
    reviews,
    scale,
    tokenrequest,
    update,
    watch,
)
from platform_api.endpoints import list as list_
from platform_api.endpoints.negotiation import (
    CBOR,
    CBOR_SEQ,
    LIST_PRODUCES,
    LOG_PRODUCES,
    OBJECT_PRODUCES,
    accepted_patch_type,
    check_produces,
)
from platform_api.endpoints.scope import Handlers, Scope
from platform_api.registry import requester
from platform_api.scheme.types import ResourceType

Handler = Callable[[Scope], Awaitable[bytes]]

_COLLECTION: dict[bytes, tuple[str, Handler]] = {
    b"POST": ("create", create.handle),
    b"DELETE": ("deletecollection", delete.handle_collection),
}
_ITEM: dict[bytes, tuple[str, Handler]] = {
    b"GET": ("get", get.handle),
    b"PUT": ("update", update.handle),
    b"PATCH": ("patch", patch.handle),
    b"DELETE": ("delete", delete.handle),
}
# Create-only collections: reviews, and the top-level pod bindings.
_REVIEWS: dict[tuple[str, str], Handler] = {
    **reviews.HANDLERS,
    **accessreviews.HANDLERS,
    ("", "bindings"): pods.bind_collection,
}
_ACTIONS: dict[str, Handler] = {
    "binding": pods.bind,
    "eviction": pods.evict,
    "token": tokenrequest.create,
}
_SCALE: dict[bytes, Handler] = {
    b"GET": scale.get,
    b"PUT": scale.put,
    b"PATCH": scale.patch,
}
# Subresources read and written as the object (kube's status-like strategies).
_WRITABLE = ("status", "finalize", "approval", "ephemeralcontainers", "resize")
_STATUS: dict[bytes, tuple[str, Handler]] = {
    b"GET": ("get", get.handle),
    b"PUT": ("update", update.handle),
    b"PATCH": ("patch", patch.handle),
}


# A custom resource's handlers by request verb, as kube's CRD handler picks them.
_CUSTOM: dict[str, Handler] = {
    "get": get.handle,
    "list": list_.handle,
    "watch": watch.handle,
    "create": create.handle,
    "update": update.handle,
    "patch": patch.handle,
    "delete": delete.handle,
    "deletecollection": delete.handle_collection,
}
_CUSTOM_SUBRESOURCES: dict[str, dict[str, Handler]] = {
    "status": {"get": get.handle, "update": update.handle, "patch": patch.handle},
    "scale": {"get": scale.get, "update": scale.put, "patch": scale.patch},
}


def _check_custom_scope(rt: ResourceType, info: RequestInfo) -> None:
    """A custom resource request of the wrong scope is the plain 404 of no handler."""
    across = rt.namespaced and info.verb in ("list", "watch")  # every namespace's
    if rt.namespaced != info.namespace_path and not across:
        raise errors.page_not_found()


def _route_custom(rt: ResourceType, info: RequestInfo) -> Handler:
    """kube serves custom resources with one handler that goes by the request's verb,
    not by routes: a POST naming an object is a create (of the body's name), HEAD is a
    get, a path past the sub-resource is that sub-resource, a verb the resource does
    not take is 405 naming it, a sub-resource it lacks 404 naming the object (the scope
    is checked before: ``_check_custom_scope``)."""
    verb = info.verb
    table = _CUSTOM
    if info.subresource:
        sub = rt.subresource(info.subresource)
        if sub is None:
            raise errors.not_found(rt.plural, rt.group, info.name)
        table = _CUSTOM_SUBRESOURCES[sub.name]
    handler = table.get(verb)
    if handler is None:
        raise errors.method_not_supported(rt.plural, rt.group, verb)
    if verb in ("update", "patch") and not info.name:
        raise errors.bad_request("name must be provided")
    return handler


def _route(rt: ResourceType, info: RequestInfo, method: bytes) -> Handler:
    """The handler for a valid path and method: a path that is not one is 404 whatever
    the method, then a method the path does not take is 405 (HEAD included: kube's
    resource routes register none)."""
    if rt.custom:
        return _route_custom(rt, info)
    depth = len(info.parts)
    if info.verb == "watch" and info.verb_via_path:
        if depth > 2 or not rt.supports("watch"):  # kube registers no such route
            raise errors.path_not_found()
        if method != b"GET":
            raise errors.method_not_allowed()
        return watch.handle
    if rt.namespaced and not info.namespace_path:
        # Cluster-wide paths of a namespaced type only list and watch.
        if depth != 1:
            raise errors.path_not_found()
        if method != b"GET":
            raise errors.method_not_allowed()
    if not rt.namespaced and info.namespace_path:
        raise errors.path_not_found()
    route: tuple[str, Handler]
    review = _REVIEWS.get((rt.group, rt.plural))
    if review is not None:
        if depth != 1:
            raise errors.path_not_found()
        if method != b"POST":
            raise errors.method_not_allowed()
        return review
    if depth == 1:
        if method == b"GET":
            route = ("watch", watch.handle) if info.verb == "watch" else ("list", list_.handle)
        elif method in _COLLECTION:
            route = _COLLECTION[method]
        else:
            raise errors.method_not_allowed()
    elif depth == 2:
        if method not in _ITEM:
            raise errors.method_not_allowed()
        route = _ITEM[method]
    elif depth >= 3 and (allowed := _connect_methods(rt, info)) is not None:
        if depth > 3 and info.subresource != "proxy":
            raise errors.path_not_found()
        if method not in allowed:
            raise errors.method_not_allowed()
        return connect.handle
    elif depth == 3:
        sub = rt.subresource(info.subresource)
        if sub is not None and sub.name in _ACTIONS:
            if method != b"POST":
                raise errors.method_not_allowed()
            return _ACTIONS[sub.name]
        if sub is not None and sub.name == "log":
            if method != b"GET":
                raise errors.method_not_allowed()
            return podlog.handle
        if sub is not None and sub.name == "scale":
            if method not in _SCALE:
                raise errors.method_not_allowed()
            return _SCALE[method]
        if sub is None or sub.name not in _WRITABLE:
            raise errors.path_not_found()
        if method not in _STATUS or (sub.name == "finalize" and method != b"PUT"):
            raise errors.method_not_allowed()
        return _STATUS[method][1]
    else:
        raise errors.path_not_found()
    verb, handler = route
    if verb == "watch" and not rt.supports("watch") and rt.supports("list"):
        return _watch_unsupported  # kube's list handler refuses it, once routed
    if not rt.supports(verb):
        raise errors.method_not_allowed()
    return componentstatus.HANDLERS.get((rt.group, rt.plural, verb), handler)


async def _watch_unsupported(scope: Scope) -> bytes:
    """``?watch=1`` on a resource that lists but cannot be watched (componentstatuses)."""
    rt = scope.resource
    raise errors.method_not_supported(rt.plural, rt.group, "watch")


def _connect_methods(rt: ResourceType, info: RequestInfo) -> frozenset[bytes] | None:
    """The methods of a connect subresource the type serves (None: not one)."""
    if rt.subresource(info.subresource) is None:
        return None
    return connect.methods(info.subresource)


def _check_produces(request: Request, info: RequestInfo, handler: Handler, cbor: bool) -> None:
    """go-restful's Accept match, against what the matched route produces; a PATCH
    route matches the body's type first (its 415 before a 406)."""
    if handler is connect.handle:
        return  # connect routes produce */*
    if request.method == b"PATCH":
        content_type = (request.getHeader(b"content-type") or b"").decode("latin-1")
        accepted_patch_type(content_type, patch.patch_types(False, cbor))
    if handler is podlog.handle:
        produces = LOG_PRODUCES
    elif request.method == b"GET" and (len(info.parts) == 1 or info.verb == "watch"):
        produces = [*LIST_PRODUCES, CBOR, CBOR_SEQ] if cbor else LIST_PRODUCES
    else:
        produces = [*OBJECT_PRODUCES, CBOR] if cbor else OBJECT_PRODUCES
    check_produces((request.getHeader(b"accept") or b"").decode("latin-1"), produces)


def _size(request: Request) -> int:
    content = request.content
    if content is None:
        return 0
    size: int = content.seek(0, 2)
    content.seek(0)
    return size


async def serve(request: Request, info: RequestInfo, ctx: Context, handlers: Handlers) -> bytes:
    rt = handlers.scheme.lookup(info.api_group, info.api_version, info.resource)
    if rt is None:  # unknown here, so far: perhaps a kind defined a moment ago elsewhere
        await handlers.caught_up()
        rt = handlers.scheme.lookup(info.api_group, info.api_version, info.resource)
    if rt is None:
        group, scheme = info.api_group, handlers.scheme
        if group and (not scheme.versions(group) or scheme.custom_group(group)):
            raise errors.page_not_found()  # no group (or a CRD group): no handler answers
        raise errors.path_not_found()
    if rt.custom:  # kube's CRD handler warns of a deprecated version before it routes
        _check_custom_scope(rt, info)
        deprecation.warn_custom(ctx, rt)
    handler = _route(rt, info, request.method)
    if not rt.custom:  # built-in kinds are go-restful routes; custom resources are not
        _check_produces(request, info, handler, handlers.cbor)
        if info.subresource and not info.name:  # ``/pods//status``: the handler's Namer
            raise errors.bad_request("name must be provided")
    if ctx.trace is not None:  # routed: the verb handler's span, ended with the response
        ctx.trace.handler(request, info)
    deprecation.observe(ctx, rt, info.subresource)  # kube's warning, gauge, audit annotations
    ctx.namespace = info.namespace if rt.namespaced else ""
    requester.REQUESTER.set(ctx.user)  # for strategies that record it (a CSR's spec)
    requester.VERB.set(info.verb)  # and those that authorize parts of a write with it
    requester.WARN.set(ctx.warn)  # and those that warn as they prepare a write
    scope = Scope(request, info, ctx, rt, handlers.store(rt), handlers)
    try:
        heavy.mark(handlers.reactor, _size(request))  # a large body is decoded off the reactor
        answer = await handler(scope)
    except BaseException:
        await ctx.failed()
        raise
    if ctx.done:
        await ctx.succeeded()
    return answer
