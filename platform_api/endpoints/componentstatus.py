"""get/list of ComponentStatus: answered by probing, never read from storage.

kube's componentstatus REST serves only get and list; a list probes every component
and keeps those its label and field selectors (metadata.name, metadata.namespace)
match.  The Table is kube's printComponentStatus: Name, Status, Message, Error.
"""

from __future__ import annotations

from typing import Any

from twisted.internet.defer import ensureDeferred, gatherResults

from platform_api import errors
from platform_api.codec import protobuf
from platform_api.endpoints.list import parse_params, predicate
from platform_api.endpoints.negotiation import Output
from platform_api.endpoints.options import arg, refuse_export
from platform_api.endpoints.printers import meta
from platform_api.endpoints.responses import encode
from platform_api.endpoints.scope import Scope
from platform_api.endpoints.tables import COLUMNS, Column, Printer
from platform_api.endpoints.views import partial_object
from platform_api.registry import componentstatus

Obj = dict[str, Any]
RESOURCE = ("", "componentstatuses")

_COLUMNS = (
    Column(
        "Name",
        "string",
        "name",
        "Name must be unique within a namespace. Is required when creating resources, "
        "although some resources may allow a client to request the generation of an "
        "appropriate name automatically. Name is primarily intended for creation idempotence "
        "and configuration definition. Cannot be updated. More info: "
        "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    ),
    Column("Status", "string", "", "Status of the component conditions"),
    Column("Message", "string", "", "Message of the component conditions"),
    Column("Error", "string", "", "Error of the component conditions"),
)


def _cells(obj: Obj) -> list[Any]:
    status, message, error = "Unknown", "", ""
    for condition in obj.get("conditions") or []:
        if condition.get("type") == "Healthy":
            status = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            message, error = condition.get("message", ""), condition.get("error", "")
            break
    return [meta(obj).get("name", ""), status, message, error]


COLUMNS[RESOURCE] = Printer(_COLUMNS, _cells)


async def _probe(scope: Scope, name: str) -> Obj | None:
    storage = scope.handlers.storage

    async def storage_check() -> None:
        storage.current_revision()  # a read of the database's meta record

    return await componentstatus.probe(name, scope.handlers.reactor, storage_check)


async def _respond(scope: Scope, items: list[Obj], single: bool) -> bytes:
    out = scope.output(table=True, partial="object" if single else "list")
    if out.view == "partial" and not single:  # one object goes through respond_object
        scope.check_partial(out, is_list=True)
        partial = [partial_object(obj, out) for obj in items]
        kind, version = "PartialObjectMetadataList", f"{out.group}/{out.version}"
        listed = {"kind": kind, "apiVersion": version, "metadata": {}, "items": partial}
        return scope.finish(200, _encoded(listed, out), out)
    if out.view == "table":
        include = arg(scope.request, b"includeObject") or "Metadata"
        table = scope.handlers.tables.table(
            scope.resource, items, out.group, out.version, include, {}
        )
        body = encode(table, out.encoding, out.pretty)
        return scope.finish(200, body, out)
    if single:
        return await scope.respond_object(items[0], 200, out)
    doc = {"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {}, "items": items}
    return scope.finish(200, _encoded(doc, out), out)


def _encoded(doc: Obj, out: Output) -> bytes:
    """A list this handler builds itself, in the negotiated encoding (Protobuf too)."""
    return (
        protobuf.encode(doc)
        if out.encoding == "protobuf"
        else encode(doc, out.encoding, out.pretty)
    )


async def get(scope: Scope) -> bytes:
    refuse_export(scope.request)  # its Getter refuses it as every plain GET does
    found = await _probe(scope, scope.name)
    if found is None:
        # kube names the singular resource here (api.Resource("componentstatus")).
        raise errors.not_found("componentstatus", "", scope.name)
    return await _respond(scope, [found], single=True)


async def list_(scope: Scope) -> bytes:
    params = parse_params(scope, watch=False)
    match = predicate(scope, params)
    probes = [ensureDeferred(_probe(scope, name)) for name in componentstatus.NAMES]
    items = await gatherResults(probes)
    kept = [obj for obj in items if obj is not None and (match is None or match(obj))]
    return await _respond(scope, kept, single=False)


HANDLERS = {(*RESOURCE, "get"): get, (*RESOURCE, "list"): list_}
