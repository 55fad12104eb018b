"""list: the resourceVersion table, chunking with continue tokens, label/field selectors."""

from __future__ import annotations

from dataclasses import dataclass, replace
from itertools import repeat
from operator import itemgetter
from typing import Any

import orjson

from platform_api import errors, heavy
from platform_api.apiserver.requestinfo import query_flag
from platform_api.apiserver.watchcachemetrics import consistent_list
from platform_api.codec import protobuf
from platform_api.endpoints import binary, cachespans, continuation
from platform_api.endpoints.negotiation import Output
from platform_api.endpoints.options import META_GROUP, arg
from platform_api.endpoints.responses import audit_binary, encode
from platform_api.endpoints.scope import Scope
from platform_api.endpoints.views import partial_object
from platform_api.fieldselectors import FieldSelector, check_field_labels, parse_field_selector
from platform_api.gotext import object_json
from platform_api.gotext import parse_int as go_parse_int
from platform_api.scheme import bytefields
from platform_api.selectors import LabelSelector, SelectorError, parse_label_selector
from platform_api.storage import spans
from platform_api.storage.interface import ListOptions, ListResult, Stored
from platform_api.validation import field
from platform_api.validation.names import is_dns1123_label, is_path_segment_name

Obj = dict[str, Any]


@dataclass(frozen=True)
class ListParams:
    resource_version: str
    match: str
    limit: int
    continue_token: str
    labels: LabelSelector
    fields: FieldSelector
    timeout_seconds: int | None
    watch: bool
    allow_bookmarks: bool
    send_initial_events: bool | None


def _int_arg(scope: Scope, name: bytes) -> int | None:
    """An int64 option as kube converts its first value (``limit=`` is no number)."""
    value = arg(scope.request, name)
    if value is None:
        return None
    try:
        return go_parse_int(value)
    except ValueError as e:
        raise errors.bad_request(str(e)) from None


def _bool_arg(scope: Scope, name: bytes) -> bool | None:
    value = arg(scope.request, name)
    if value is None:
        return None
    return query_flag(value)


def parse_params(scope: Scope, watch: bool) -> ListParams:
    """Decode and validate list/watch options as kube's ListOptions (422 on bad combos)."""
    # kube's order: the query converted field by field into v1 ListOptions (where
    # timeoutSeconds, then limit, are parsed and the selectors kept as text), then into
    # the internal options (label, then field selector parsed), the options validated,
    # then the field selector's labels checked.
    timeout_seconds = _int_arg(scope, b"timeoutSeconds")
    limit = _int_arg(scope, b"limit")
    try:
        labels = parse_label_selector(arg(scope.request, b"labelSelector") or "")
        fields = parse_field_selector(arg(scope.request, b"fieldSelector") or "")
    except SelectorError as e:
        raise errors.bad_request(str(e)) from None
    params = ListParams(
        resource_version=arg(scope.request, b"resourceVersion") or "",
        match=arg(scope.request, b"resourceVersionMatch") or "",
        limit=max(limit or 0, 0),
        continue_token=arg(scope.request, b"continue") or "",
        labels=labels,
        fields=fields,
        timeout_seconds=timeout_seconds,
        watch=watch,
        allow_bookmarks=bool(_bool_arg(scope, b"allowWatchBookmarks")),
        send_initial_events=_bool_arg(scope, b"sendInitialEvents"),
    )
    if watch and scope.handlers.watch_list:
        params = default_watch(params)
    errs = validate_watch(params, scope.handlers.watch_list) if watch else validate_list(params)
    if errs:
        raise errors.invalid("ListOptions", META_GROUP, "", errs)
    try:
        check_field_labels(fields, scope.store.strategy.field_getters())
    except SelectorError as e:
        raise errors.bad_request(str(e)) from None
    return params


def default_watch(p: ListParams) -> ListParams:
    """kube's ``SetListOptionsDefaults`` while WatchList is on: a watch from no
    resourceVersion or from ``0`` that names neither ``sendInitialEvents`` nor a match
    is a watch-list (initial events from a consistent read when no version is given,
    and the initial-events-end bookmark when bookmarks are allowed)."""
    if p.send_initial_events is None and not p.match and p.resource_version in ("", "0"):
        return replace(p, send_initial_events=True, match="NotOlderThan")
    return p


def validate_list(p: ListParams) -> list[field.FieldError]:
    errs = []
    if p.match:
        if not p.resource_version:
            errs.append(
                field.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            )
        if p.continue_token:
            errs.append(
                field.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
        if p.match not in ("Exact", "NotOlderThan"):
            errs.append(
                field.not_supported("resourceVersionMatch", p.match, ["Exact", "NotOlderThan", ""])
            )
        if p.match == "Exact" and p.resource_version == "0":
            errs.append(
                field.forbidden(
                    "resourceVersionMatch",
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if p.send_initial_events is not None:
        errs.append(field.forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
    return errs


def validate_watch(p: ListParams, watch_list: bool = True) -> list[field.FieldError]:
    errs = []
    if p.send_initial_events is not None and p.match != "NotOlderThan":
        errs.append(
            field.forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )
        )
    if p.send_initial_events is not None and not watch_list:
        errs.append(
            field.forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for watch unless the WatchList feature gate "
                "is enabled",
            )
        )
    if p.match:
        if p.send_initial_events is None:
            errs.append(
                field.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                    "provided",
                )
            )
        if p.match != "NotOlderThan":
            errs.append(field.not_supported("resourceVersionMatch", p.match, ["NotOlderThan"]))
        if p.continue_token:
            errs.append(
                field.forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )
            )
    return errs


def parse_revision(value: str) -> int:
    try:
        revision = go_parse_int(value, unsigned=True)
    except ValueError as e:
        raise errors.bad_request(
            f'invalid resource version: resourceVersion: Invalid value: "{value}": {e}'
        ) from None
    return revision


def predicate(scope: Scope, p: ListParams) -> Any:
    """A matcher over decoded objects, or None when the selectors select everything."""
    if p.labels.empty() and p.fields.empty():
        return None
    getters = scope.store.strategy.field_getters()
    wanted = {t.field for t in p.fields.terms}

    def match(obj: Obj) -> bool:
        if not p.labels.matches(obj.get("metadata", {}).get("labels") or {}):
            return False
        if p.fields.empty():
            return True
        return p.fields.matches({name: getters[name](obj) for name in wanted})

    return match


async def read_list(scope: Scope, p: ListParams) -> ListResult:
    """The list's items, inside kube's storage span of a list when traced.  kube reads
    the continue token and the resourceVersion before that span opens: a list they
    refuse has none."""
    token = continuation.decode(p.continue_token) if p.continue_token else None
    versioned = p.resource_version not in ("", "0")
    if token is not None and versioned:
        raise errors.bad_request("specifying resource version is not allowed when using continue")
    wanted = parse_revision(p.resource_version) if token is None and versioned else 0
    with spans.opened(*cachespans.list_span(scope, p)):
        return await _read_list(scope, p, token, wanted)


async def _read_list(
    scope: Scope, p: ListParams, token: tuple[int, str] | None, wanted: int
) -> ListResult:
    """Pick the revision and start key the table of resourceVersion semantics asks for:
    ``token`` is the continue token read, ``wanted`` the resourceVersion asked for."""
    revision, start, token_start = await _position(scope, p, token, wanted)
    cachespans.cache_fresh(p)
    # resourceVersion=0 is any state, which kube serves whole from its watch cache: the
    # limit is ignored there (a continue token still pages).
    limit = 0 if p.resource_version == "0" and not p.continue_token else p.limit
    keys, single = narrowed(scope, p)
    if single:  # kube reads the one key, unpaged
        limit = 0
    options = ListOptions(revision, start, limit, predicate(scope, p), single)
    # A consistent list, or a later chunk of one, is read from etcd itself when this
    # server's cache cannot prove it holds that revision (storage/etcd/through.py).
    consistent = not p.resource_version and (not p.continue_token or revision > 0)
    newest = not p.continue_token and not p.resource_version
    counted = newest and scope.handlers.cache_serves_current_reads  # kube counts those
    fresh, success = True, False  # fresh: the cache may serve it (else etcd: it fell behind)
    try:
        if newest:
            fresh = await scope.handlers.consistent_read(scope.store.prefix, fallback=True)
        result = await scope.store.read_list(
            scope.namespace, options, consistent=consistent, stale=not fresh, prefix=keys
        )
        cachespans.listed(scope, p, options, result, keys, single)
        success = True
        return result
    except errors.StatusError as e:
        if p.continue_token and e.reason == errors.EXPIRED:  # etcd compacted past the token
            raise continuation.expired(token_start) from None
        raise
    finally:
        if counted:
            consistent_list(scope.store.prefix, success, fallback=not fresh)


async def _position(
    scope: Scope, p: ListParams, token: tuple[int, str] | None, wanted: int
) -> tuple[int, bytes, str]:
    """The revision to read at (0: the newest), the key to start after and the token's
    start; waits (or refuses) where the revision is one the cache has yet to reach."""
    storage, prefix = scope.store.storage, scope.store.prefix
    start, token_start = b"", ""
    revision = 0
    cachespans.cache_read(p)
    if token is not None:
        token_rev, token_start = token
        start = token_keys(scope).start_after(token_start)
        if token_rev > 0:
            revision = token_rev
            if revision < storage.compacted_revision():
                raise continuation.expired(token_start)
            # A revision not reached yet (a token from a replica ahead, or made up):
            # kube's watch cache waits for it, then 504 without retry advice.
            await scope.handlers.wait_for_revision(revision, retry_after=0, prefix=prefix)
    elif p.resource_version not in ("", "0"):
        exact = p.match == "Exact" or (not p.match and p.limit)
        # kube's cache advises a retry only for a not-older-than read of the future
        retry = 0 if exact else 1
        await scope.handlers.wait_for_revision(wanted, retry_after=retry, prefix=prefix)
        if exact:
            revision = wanted
            if revision < storage.compacted_revision():
                raise errors.expired("The resourceVersion for the provided list is too old.")
    return revision, start, token_start


def narrowed(scope: Scope, p: ListParams) -> tuple[bytes | None, bool]:
    """The keys a field selector confines a list to, and whether to one object: kube's
    MatchesSingleNamespace (``metadata.namespace=`` across namespaces) and MatchesSingle
    (``metadata.name=``, where the namespace is known), so ``kubectl get pod x -w`` and
    ``kubectl wait`` read one key, not the namespace.  The object's key is a prefix of
    others' (``a`` of ``ab``): the selector passes those over.  Not for a continued list,
    which goes on as it began; continue tokens stay relative to the request's keys."""
    if p.continue_token or p.fields.empty():
        return None, False
    namespaced, namespace = scope.resource.namespaced, scope.namespace
    if namespaced and not namespace:
        wanted = p.fields.exact("metadata.namespace")
        if wanted is not None and not is_dns1123_label(wanted):
            namespace = wanted
    name = p.fields.exact("metadata.name")
    if name and (namespace or not namespaced) and not is_path_segment_name(name):
        return scope.store.key(namespace, name), True
    if namespace != scope.namespace:
        return scope.store.list_prefix(namespace), False
    return None, False


def token_keys(scope: Scope) -> continuation.TokenKeys:
    """How this list's continue tokens name storage keys."""
    store = scope.store
    return continuation.TokenKeys(store.prefix, store.list_prefix(scope.namespace))


def list_metadata(scope: Scope, result: ListResult, p: ListParams) -> dict[str, Any]:
    meta: dict[str, Any] = {"resourceVersion": str(result.revision)}
    if result.continue_key is not None:
        start = token_keys(scope).token_start(result.continue_key)
        # The revision read, as kube encodes it: the pages after an inconsistent
        # continuation's first one are read at that page's revision.
        meta["continue"] = continuation.encode(result.revision, start)
        if result.remaining is not None and p.labels.empty() and p.fields.empty():
            meta["remainingItemCount"] = result.remaining
    return meta


async def handle(scope: Scope) -> bytes:
    out = scope.output(table=True, partial="list")
    p = parse_params(scope, watch=False)
    result = await read_list(scope, p)
    meta = list_metadata(scope, result, p)
    if out.encoding == "yaml" or out.view == "table":  # written in Python, item by item
        heavy.mark(scope.handlers.reactor, sum(len(s.data) for s in result.items))
    audit_binary(scope.ctx, out.encoding, lambda: _as_json(scope, out, result.items, meta))
    body = await heavy.run(render_list, scope, out, result.items, meta)
    return scope.finish(200, body, out)


def _as_json(scope: Scope, out: Output, items: list[Stored], meta: dict[str, Any]) -> Any:
    """A binary answer's list as its JSON answer would carry it (for the audit)."""
    return orjson.loads(
        render_list(scope, replace(out, encoding="json", pretty=False), items, meta)
    )


def render_list(scope: Scope, out: Output, items: list[Stored], meta: dict[str, Any]) -> bytes:
    """A list in the negotiated view and encoding; stored JSON bytes and cached Protobuf
    messages are put together as they are wherever the view allows it."""
    rt = scope.resource
    if out.view == "table":
        include = arg(scope.request, b"includeObject") or "Metadata"
        table = scope.handlers.tables.table(
            rt, (scope.outgoing(s.object) for s in items), out.group, out.version, include, meta
        )
        return encode(table, out.encoding, out.pretty)
    if out.view == "partial":
        scope.check_partial(out, is_list=True)
        doc = {
            "kind": "PartialObjectMetadataList",
            "apiVersion": f"{out.group}/{out.version}",
            "metadata": meta,
            "items": [partial_object(s.object, out) for s in items],
        }
        if out.encoding == "protobuf":
            return protobuf.encode(doc)
        return encode(doc, out.encoding, out.pretty)
    if out.encoding == "protobuf":
        api_version = scope.outgoing_api_version(rt.api_version)
        return binary.list_body(scope.handlers.messages, items, api_version, rt.list_kind, meta)
    if rt.custom:
        return _custom_list(scope, out, items, meta)
    if out.encoding == "cbor" and not scope.ctx.render_group:
        cache = scope.handlers.cbor_items
        return binary.cbor_list_body(cache, items, rt.api_version, rt.list_kind, meta)
    if out.plain_json and not scope.ctx.render_group:
        head = orjson.dumps({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta})
        body = untyped_json([s.data for s in items], rt.api_version, rt.kind)
        return head[:-1] + b',"items":[' + body + b"]}\n"
    doc = {
        "kind": rt.list_kind,
        "apiVersion": rt.api_version,
        "metadata": meta,
        "items": [untyped(s.object) for s in items],
    }
    fields = bytefields.for_kind(rt.api_version, rt.list_kind) if out.encoding == "cbor" else None
    return encode(scope.outgoing(doc), out.encoding, out.pretty, fields)


def _custom_list(scope: Scope, out: Output, items: list[Stored], meta: dict[str, Any]) -> bytes:
    """A custom resource list as kube writes an unstructured one: a map, so its keys
    sorted, and ``continue`` set even when empty (``SetContinue("")`` keeps the key)."""
    rt = scope.resource
    meta = dict(sorted({"continue": "", **meta}.items()))
    renamed = bool(scope.ctx.render_group)
    if out.encoding == "cbor" and not renamed:
        cache = scope.handlers.cbor_items
        return binary.cbor_list_body(cache, items, rt.api_version, rt.list_kind, meta)
    if out.plain_json and not renamed:
        return b'{"apiVersion":%s,"items":[%s],"kind":%s,"metadata":%s}\n' % (
            orjson.dumps(rt.api_version),
            b",".join(s.data for s in items),
            orjson.dumps(rt.list_kind),
            orjson.dumps(meta),
        )
    doc = {
        "apiVersion": rt.api_version,
        "items": [s.object for s in items],
        "kind": rt.list_kind,
        "metadata": meta,
    }
    return encode(scope.outgoing(doc), out.encoding, out.pretty)


# kube's lists of built-in kinds hold typed Go structs whose TypeMeta is empty: the items
# name no kind or apiVersion (a typed client comparing a listed item with a fetched one
# relies on it).  Custom resources are unstructured: their items keep both.


def untyped(obj: Obj) -> Obj:
    """A built-in list item as kube writes it: without ``kind`` and ``apiVersion``."""
    return {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")}


def untyped_json(items: list[bytes], api_version: str, kind: str) -> bytes:
    """Stored JSON items, ``untyped`` and joined with commas.  Stored objects almost
    always begin with their type: when every item begins alike, the prefix is cut off
    the bytes (C loops only; ~0.25 ms for 1000 ConfigMaps); else each item is parsed."""
    if not items:
        return b""
    for head in (
        b'{"kind":"%s","apiVersion":"%s",' % (kind.encode(), api_version.encode()),
        b'{"apiVersion":"%s","kind":"%s",' % (api_version.encode(), kind.encode()),
    ):
        if all(map(bytes.startswith, items, repeat(head, len(items)))):
            return b"{" + b",{".join(map(itemgetter(slice(len(head), None)), items))
    return b",".join(object_json(untyped(orjson.loads(data))) for data in items)
