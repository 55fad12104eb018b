"""kube's etcd3 write spans for a traced request (storage/spans.py carries the trace):
the attributes of ``Create etcd3`` and ``GuaranteedUpdate etcd3`` and the events around
a write's transaction, in kube's words."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from platform_api.scheme.types import internal_type_name
from platform_api.storage import spans
from platform_api.storage.etcd.errors import EtcdError, storage_error
from platform_api.storage.etcd.layout import KeyLayout, kube_key
from platform_api.storage.interface import Stored, Unreadable

T = TypeVar("T")
UNSTRUCTURED = "*unstructured.Unstructured"  # a custom resource's type, as kube's spans name it


def span_fields(layout: KeyLayout, key: bytes, kind: str) -> Callable[[str], dict[str, Any]]:
    """kube's attributes of a write's span, made only when the request is traced."""

    def fields(audit_id: str) -> dict[str, Any]:
        _, group, plural, _ = key.split(b"/", 3)
        return {
            "audit-id": audit_id,
            "key": kube_key(key, layout.is_builtin(key), prefix=""),
            "type": span_type(layout, key, kind),
            "group": _group_name(group),
            "resource": plural.decode(),
        }

    return fields


def span_type(layout: KeyLayout, key: bytes, kind: str) -> str:
    """The Go type kube's span names: the kind's internal type, or a custom resource's."""
    if not layout.is_builtin(key):
        return UNSTRUCTURED
    return internal_type_name(_group_name(key.split(b"/", 2)[1]), kind)


def kind_of(stored: Stored | None) -> str:
    """An object's kind, "" where there is none to read (no object, or one that does not
    decode: its write fails as it would untraced)."""
    if stored is None or isinstance(stored, Unreadable):
        return ""
    return str(stored.object.get("kind", ""))


async def transaction(key: bytes, call: Awaitable[T], update: bool) -> T:
    """A write's transaction between kube's span events: an update's (GuaranteedUpdate,
    also when it creates) or a create's."""
    if update:
        spans.event("Transaction prepared")
    try:
        result = await call  # (not through storage_call: one coroutine fewer on each write)
    except EtcdError as e:
        error = storage_error(key, e)
        spans.event("Txn call failed", err=str(error))
        raise error from None
    if update:
        spans.event("Txn call completed")
        spans.event("Transaction committed")
    else:
        spans.event("Txn call succeeded")
    return result


def _group_name(group: bytes) -> str:
    """A registry key's group as kube names it: "" for the core group."""
    return "" if group == b"core" else group.decode()
