"""kubectl's move from client-side to server-side apply, as kube's field manager eases it.

``kubectl apply`` (client-side) keeps its configuration in the
``kubectl.kubernetes.io/last-applied-configuration`` annotation and owns its fields as
the Update manager ``kubectl-client-side-apply``.  When the ``kubectl`` manager then
applies server-side, a change to a field that configuration named, and that still holds
the value it gave, is not a conflict (kube's lastAppliedManager), and while the
annotation is there it is kept in step with what ``kubectl`` applies (kube's
lastAppliedUpdater), so that a later client-side apply still computes its three-way
diff from the right base.  Other managers opt out.
"""

from __future__ import annotations

from typing import Any

import orjson

from platform_api.fieldmanager import fit, walk
from platform_api.fieldmanager.fieldpath import FieldSet
from platform_api.fieldmanager.typed import Typed
from platform_api.scheme.schemas import Node
from platform_api.scheme.types import rebrand_group

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
KUBECTL = "kubectl"
# Go's encoding/json escapes these inside strings; they appear nowhere else in JSON.
_GO_ESCAPES = {b"<": b"\\u003c", b">": b"\\u003e", b"&": b"\\u0026"}
_GO_ESCAPES |= {"\u2028".encode(): b"\\u2028", "\u2029".encode(): b"\\u2029"}


def present(obj: dict[str, Any] | None) -> bool:
    return bool(_annotation(obj))


def _annotation(obj: dict[str, Any] | None) -> str:
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
    value = annotations.get(LAST_APPLIED) if isinstance(annotations, dict) else None
    return value if isinstance(value, str) else ""


def allowed_conflicts(
    typed: Typed, node: Node, live: dict[str, Any] | None, api_version: str
) -> FieldSet:
    """What a ``kubectl`` apply may take without a conflict (kube's
    allowedConflictsFromLastApplied): the fields the last client-side apply set that
    still hold what it set.  None when the annotation is unreadable, of another version
    than the request's, or does not fit the schema."""
    raw = _annotation(live)
    if not raw or live is None:
        return set()
    try:
        last = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return set()
    if not isinstance(last, dict):
        return set()
    if _group_version(last.get("apiVersion")) != _group_version(api_version):
        return set()
    if fit.problems(typed, node, last):
        return set()
    changed = walk.compare(typed, node, last, live)
    return walk.to_field_set(typed, node, last) - changed.modified - changed.added - changed.removed


def _group_version(api_version: Any) -> str:
    """An apiVersion under the branded group name (a configuration may use either)."""
    if not isinstance(api_version, str):
        return ""
    group, _, version = api_version.rpartition("/")
    return f"{rebrand_group(group)}/{version}"


def annotation_for(config: dict[str, Any]) -> str:
    """``config`` as kube writes it into the annotation: without the annotation itself,
    keys sorted, Go's escapes and its encoder's newline."""
    meta = dict(config.get("metadata") or {})
    annotations = meta.get("annotations")
    if isinstance(annotations, dict):
        meta["annotations"] = {k: v for k, v in annotations.items() if k != LAST_APPLIED}
    text = orjson.dumps({**config, "metadata": meta}, option=orjson.OPT_SORT_KEYS)
    for raw, escaped in _GO_ESCAPES.items():
        text = text.replace(raw, escaped)
    return text.decode() + "\n"


def keep_in_step(merged: dict[str, Any], value: str) -> None:
    """Set the annotation of ``merged`` to ``value`` if it has one."""
    if _annotation(merged):
        merged["metadata"]["annotations"][LAST_APPLIED] = value
