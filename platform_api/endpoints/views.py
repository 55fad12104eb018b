"""The views an answer can take besides the object itself, as kube's handlers transform
it (transformResponseObject): its metadata alone (PartialObjectMetadata), a Table, and
the 406 when metadata of the other shape was asked for.  A Status goes through any view."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from platform_api.endpoints.negotiation import Output
from platform_api.endpoints.options import arg
from platform_api.endpoints.partial import metadata_only
from platform_api.endpoints.responses import encode
from platform_api.scheme.types import ResourceType, internal_package
from platform_api.storage.interface import Stored

if TYPE_CHECKING:
    from platform_api.endpoints.scope import Scope

Obj = dict[str, Any]


def partial_object(obj: Obj, out: Output) -> Obj:
    """kube's PartialObjectMetadata of ``obj``, in the meta group asked."""
    return metadata_only(obj, f"{out.group}/{out.version}")


def is_status(answer: Stored | Obj) -> bool:
    return isinstance(answer, dict) and answer.get("kind") == "Status"


def table_body(scope: Scope, obj: Obj, out: Output) -> bytes:
    """One object as a Table (``includeObject`` as the request asks)."""
    include = arg(scope.request, b"includeObject") or "Metadata"
    meta = {"resourceVersion": obj["metadata"].get("resourceVersion", "")}
    table = scope.handlers.tables.table(
        scope.resource, [scope.outgoing(obj)], out.group, out.version, include, meta
    )
    return encode(table, out.encoding, out.pretty)


def answered_type(scope: Scope, obj: Obj) -> str:
    """The definition of an answer of another kind than the resource's (a Scale), else
    "" (the resource's own)."""
    rt = scope.resource
    if rt.custom or obj.get("kind") == rt.kind:
        return ""
    group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
    try:
        return scope.handlers.scheme.schemas.for_kind(group, version, str(obj.get("kind")))
    except KeyError:
        return ""


def held_type(rt: ResourceType, is_list: bool, definition: str = "") -> str:
    """The Go type kube's handler holds, as its 406 names it (``*core.ConfigMapList``;
    a sub-resource's own kind by its ``definition``)."""
    definition = definition or rt.definition
    kind = definition.rsplit(".", 1)[-1]
    name = "unstructured.Unstructured" if rt.custom else f"{internal_package(definition)}.{kind}"
    return f"*{name}List" if is_list else f"*{name}"
