"""kube's storage spans of reads, for a traced request: ``cacher.Get`` (a get),
``cacher.GetList`` or ``List(recursive=true) etcd3`` (a list), ``cacher.Watch`` (the start
of a watch), with the attributes and events kube v1.36 gives them on etcd 3.5.

Which one a list opens is kube's delegator's choice: a consistent list (no
resourceVersion, no continue token) and an exact one (``resourceVersionMatch=Exact``, or
a limit with a resourceVersion other than ``0``) are read from etcd, the rest
(``0``, NotOlderThan, a continued list) from the watch cache, which reports how many
items it listed and how many passed the selectors and the limit.  This server answers
each from its own storage either way; the spans tell a trace reader what kube's would.
Nothing here runs for a request that is not traced (storage/spans.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from platform_api.storage import spans
from platform_api.storage.etcd.layout import kube_key
from platform_api.storage.interface import ListOptions, ListResult, Storage, StorageError

if TYPE_CHECKING:
    from platform_api.endpoints.list import ListParams
    from platform_api.endpoints.scope import Scope

Fields = Callable[[str], dict[str, Any]]
ETCD_LIST = "List(recursive=true) etcd3"
# kube's read of the newest revision before a watch from "now" (GetCurrentResourceVersion)
ETCD_REVISION = "List(recursive=false) etcd3"


def get_fields(scope: Scope, version: str) -> Fields:
    """``cacher.Get``'s attributes."""

    def fields(audit_id: str) -> dict[str, Any]:
        key = scope.store.named_key(scope.namespace, scope.name)
        kube = kube_key(key, builtin=not scope.resource.custom, prefix="")
        return {"audit-id": audit_id, "key": kube, "resource-version": version}

    return fields


def from_etcd(p: ListParams) -> bool:
    """Whether kube's delegator sends the list to etcd rather than its watch cache."""
    if p.match == "Exact":
        return True
    if p.continue_token or p.match:
        return False
    return not p.resource_version or (p.resource_version != "0" and p.limit > 0)


def list_span(scope: Scope, p: ListParams) -> tuple[str, Fields]:
    """The span a list opens and its attributes."""
    if not from_etcd(p):
        return "cacher.GetList", cacher_fields(scope)

    def fields(audit_id: str) -> dict[str, Any]:
        prefix = scope.store.list_prefix(scope.namespace)
        return {
            "audit-id": audit_id,
            "key": _kube_prefix(scope, prefix),
            "resourceVersion": p.resource_version,
            "resourceVersionMatch": p.match,
            "limit": p.limit,
            "continue": p.continue_token,
        }

    return ETCD_LIST, fields


def cacher_fields(scope: Scope) -> Fields:
    """``cacher.GetList``'s and ``cacher.Watch``'s attributes: the group resource."""
    rt = scope.resource
    kind = f"{rt.plural}.{rt.group}" if rt.group else rt.plural
    return lambda audit_id: {"audit-id": audit_id, "type": kind}


def cache_read(p: ListParams) -> None:
    """The cache's first events, before it waits (if it must) for the revision."""
    if not from_etcd(p):
        spans.event("Ready")
        spans.event("watchCache locked acquired")


def cache_fresh(p: ListParams) -> None:
    if not from_etcd(p):
        spans.event("watchCache fresh enough")


def listed(
    scope: Scope,
    p: ListParams,
    options: ListOptions,
    result: ListResult,
    prefix: bytes | None,
    single: bool,
) -> None:
    """The cache's last events: how many items it listed under the key, how many it
    returns.  Listed is what the cache held at the list's revision from the list's start
    key on (``_listed_at``) when selectors leave the remaining count unknown; for a list
    a field selector narrowed to one object's key (``single``), whether that object is
    there."""
    if from_etcd(p) or spans.TRACE.get() is None:
        return
    storage = scope.store.storage
    count = len(result.items)  # the whole list, when nothing was left out
    if result.remaining is not None:
        count += result.remaining
    elif single and prefix is not None:
        count = _present(storage, prefix)
    elif not (p.labels.empty() and p.fields.empty()) or result.continue_key is not None:
        key = prefix or scope.store.list_prefix(scope.namespace)
        count = _listed_at(storage, key, options.start_after, result.revision)
    spans.event("Listed items from cache", count=count)
    if result.items:
        spans.event("Resized result")
    spans.event("Filtered items", count=len(result.items))


def _listed_at(storage: Storage, prefix: bytes, start_after: bytes, revision: int) -> int:
    """The items under ``prefix`` after ``start_after`` as of ``revision``, unfiltered:
    what kube's watch cache lists before its predicate and limit (only for a traced
    list).  Past the history window by now, what the storage holds."""
    try:
        every = storage.get_list(prefix, ListOptions(revision=revision, start_after=start_after))
    except StorageError:
        return storage.count(prefix)
    return len(every.items)


def _present(storage: Storage, key: bytes) -> int:
    try:
        storage.get(key)
    except StorageError:
        return 0
    return 1


def watch_started(scope: Scope, p: ListParams) -> None:
    """``cacher.Watch``'s steps: a watch from "now" that names sendInitialEvents (as
    every watch does once defaulted) first reads the newest revision from etcd; one that
    sends the initial events waits for the cache to be that fresh."""
    if spans.TRACE.get() is None:
        return
    if not p.resource_version and p.send_initial_events is not None:
        with spans.opened(ETCD_REVISION, _revision_fields(scope)):
            pass
    if p.send_initial_events:
        spans.event("watchCache locked acquired")
        spans.event("watchCache fresh enough")


def _revision_fields(scope: Scope) -> Fields:
    def fields(audit_id: str) -> dict[str, Any]:
        return {
            "audit-id": audit_id,
            "key": _kube_prefix(scope, scope.store.prefix),
            "resourceVersion": "",
            "resourceVersionMatch": "",
            "limit": 1,
            "continue": "",
        }

    return fields


def _kube_prefix(scope: Scope, prefix: bytes) -> str:
    """A list's key as kube writes it: ``/configmaps/default``, ``/configmaps``."""
    return kube_key(prefix, builtin=not scope.resource.custom, prefix="").rstrip("/")
