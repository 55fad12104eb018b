"""The paths of a group version's ``/openapi/v3`` document, as kube's endpoint installer
publishes them.

For each resource: its collection (list, create, delete collection), its objects (read,
replace, patch, delete), the list across namespaces, the deprecated ``watch/`` paths, and
the subresources that take or give an object (status, scale, binding, eviction, token,
approval, finalize, ephemeral containers, resize).  Operation IDs and tags are kube's
(``listCoordinationV1NamespacedLease``, ``coordination_v1``), so a client generated from
this server's document has the method names of one generated from kube's.  Parameters
shared by a path's operations sit on the path, the rest on each operation, and no list
is written empty: kube-openapi's types drop an empty list when they write a document
back, and a document must survive that round trip (upstream's OpenAPIV3 e2e cases).
The subresources that connect (exec, attach, port-forward, proxy, log) are
openapiconnect.py's.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from platform_api.apiserver.openapiparams import (
    DELETE,
    DELETE_COLLECTION,
    GET_VERSION,
    LIST,
    NAMESPACE,
    PATCH_PARAMS,
    PRETTY,
    WRITE,
    Params,
    param,
)
from platform_api.endpoints.negotiation import (
    APPLY_PATCH_CBOR,
    APPLY_PATCH_YAML,
    CBOR,
    CBOR_SEQ,
    JSON,
    JSON_PATCH,
    MERGE_PATCH,
    OBJECT_PRODUCES,
    STRATEGIC_MERGE_PATCH,
    WATCH_STREAMS,
    YAML,
)
from platform_api.scheme.types import ResourceType, Subresource, api_path

PREFIX = "#/components/schemas/"
META = "io.platform.apimachinery.pkg.apis.meta.v1."
STATUS, PATCH, WATCH_EVENT = META + "Status", META + "Patch", META + "WatchEvent"
DELETE_OPTIONS = META + "DeleteOptions"
RESOURCE_LIST = META + "APIResourceList"
CONNECTING = frozenset({"attach", "exec", "portforward", "proxy", "log"})
_BRAND_SUFFIXES = (".k8s.io", ".platform.io")

CUSTOM_MEDIA = [JSON, YAML]  # what custom resources are read and written in
# What kube's documents say a built-in route produces: CBOR too, whatever its gate.
DOCUMENTED = [*OBJECT_PRODUCES, CBOR]
DOCUMENTED_LIST = [*DOCUMENTED, *WATCH_STREAMS, CBOR_SEQ]
UNAUTHORIZED = {"description": "Unauthorized"}


def valid_id(text: str, capitalize: bool) -> str:
    """kube's operation-ID word: what is not a letter or ``_`` (a digit only after the
    first character) is dropped and the letter after it capitalized."""
    out = []
    for i, ch in enumerate(text):
        if ch.isalpha() or ch == "_" or (i and ch.isdigit()):
            out.append(ch.upper() if capitalize else ch)
            capitalize = False
        else:
            capitalize = True
    return "".join(out)


def _trimmed(group: str) -> str:
    """The group as operation IDs name it: the core group is ``core``, and kube's
    ``.k8s.io`` (here ``.platform.io``) is left off."""
    if not group:
        return "core"
    for suffix in _BRAND_SUFFIXES:
        if group.endswith(suffix):
            return group[: -len(suffix)]
    return group


@functools.lru_cache(maxsize=4096)  # pure, and asked for every operation
def group_name(group: str) -> str:
    """The group in operation IDs: ``rbac.authorization.k8s.io`` is ``RbacAuthorization``,
    the core group ``Core``, ``stable.example.com`` ``StableExampleCom``."""
    return valid_id(_trimmed(group), True)


@functools.lru_cache(maxsize=4096)  # pure, and asked for every operation
def group_tag(group: str) -> str:
    """kube's tag of a group's own operations: ``rbacAuthorization``."""
    return valid_id(_trimmed(group), False)


@functools.lru_cache(maxsize=4096)  # pure, and asked for every operation
def tag(group: str, version: str) -> str:
    """kube's tag of a group version's operations: ``rbacAuthorization_v1``."""
    return group_tag(group) + "_" + valid_id(version, False)


def article(kind: str) -> str:
    """The article kube's route docs put before a kind, with its spaces: a plural
    (``Endpoints``, but not ``...Class``) takes none."""
    if kind.endswith("s") and not kind.endswith("ss"):
        return " "
    return " an " if kind[:1].lower() in "aeiou" else " a "


@functools.lru_cache(maxsize=4096)  # pure, and asked for every operation
def gv_name(group: str, version: str) -> str:
    """A group version in operation IDs: ``CoordinationV1``."""
    return group_name(group) + valid_id(version, True)


def ref(definition: str) -> dict[str, Any]:
    return {"$ref": PREFIX + definition}


class _Builder:
    """One resource's operations; ``definition_of`` names the schema a subresource gives,
    ``deleted`` what a delete answers with."""

    def __init__(
        self,
        rt: ResourceType,
        list_definition: str | None,
        definition_of: Callable[[Subresource], str | None],
        deleted: str,
        rename: Callable[[str], str] | None,
    ) -> None:
        self.rt, self.definition_of, self.deleted = rt, definition_of, deleted
        self.rename = rename
        self.gv = gv_name(rt.group, rt.version)
        self.scope = "Namespaced" if rt.namespaced else ""
        self.list_definition = list_definition or rt.definition
        # kube's CRD builder: JSON and YAML only, in and out, and a read takes GetOptions
        self.media = CUSTOM_MEDIA if rt.custom else None
        self.get_options = [GET_VERSION] if rt.custom else []

    def list_description(self) -> str:
        watched = self.rt.supports("watch") and not self.rt.custom
        return f"list {'or watch ' if watched else ''}objects of kind {self.rt.kind}"

    def op(
        self,
        action: str,
        op_id: str,
        description: str,
        returns: str,
        *,
        params: Params | None = None,
        body: str = "",
        codes: tuple[str, ...] = ("200",),
        gvk: tuple[str, str, str] | None = None,
    ) -> dict[str, Any]:
        produces = self.media or (
            DOCUMENTED_LIST if action in ("list", "watch", "watchlist") else DOCUMENTED
        )
        content = {media: {"schema": ref(returns)} for media in produces}
        operation: dict[str, Any] = {"tags": [tag(self.rt.group, self.rt.version)]}
        operation["description"] = description
        operation["operationId"] = op_id
        if params:
            operation["parameters"] = list(params)
        if body == "patch":
            types = [JSON_PATCH, MERGE_PATCH, APPLY_PATCH_YAML]
            if not self.rt.custom:  # custom resources take no strategic merge patch or CBOR
                types = [
                    JSON_PATCH,
                    MERGE_PATCH,
                    STRATEGIC_MERGE_PATCH,
                    *types[2:],
                    APPLY_PATCH_CBOR,
                ]
            operation["requestBody"] = {
                "content": {t: {"schema": ref(PATCH)} for t in types},
                "required": True,
            }
        elif body:
            sent = {media: {"schema": ref(body)} for media in self.media or ["*/*"]}
            operation["requestBody"] = {"content": sent}
            if body != DELETE_OPTIONS:  # a delete's options may be left out
                operation["requestBody"]["required"] = True
        responses = {code: {"description": _CODES[code], "content": content} for code in codes}
        operation["responses"] = {**responses, "401": UNAUTHORIZED}
        group, version, kind = gvk or (self.rt.group, self.rt.version, self.rt.kind)
        if self.rename is not None:
            group = self.rename(group)
        operation["x-kubernetes-action"] = action
        # kube-openapi writes an extension's keys sorted
        operation["x-kubernetes-group-version-kind"] = {
            "group": group,
            "kind": kind,
            "version": version,
        }
        return operation


_CODES = {"200": "OK", "201": "Created", "202": "Accepted"}


def paths(
    rt: ResourceType,
    list_definition: str | None,
    definition_of: Callable[[Subresource], str | None],
    *,
    deletes_to_object: bool = False,
    rename: Callable[[str], str] | None = None,
) -> dict[str, Any]:
    """Every path of one resource.  ``list_definition`` is its List kind's schema;
    ``deletes_to_object``: a delete answers with the object (kube's stores of pods,
    services, storage classes...), else with a Status; ``rename`` gives the group a
    document under an upstream group name shows for another group (a Scale's)."""
    deleted = rt.definition if deletes_to_object else STATUS
    b = _Builder(rt, list_definition, definition_of, deleted, rename)
    base = api_path(rt.group, rt.version)
    within = f"/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"/{rt.plural}"
    scoped = [NAMESPACE, PRETTY] if rt.namespaced else [PRETTY]
    named = [param("name", f"name of the {rt.kind}", where="path"), *scoped]
    found = {
        base + within: _collection(b, scoped),
        f"{base}{within}/{{name}}": _item(b, named),
        **_watches(b, base, within, named),
    }
    for sub in rt.subresources:
        found[f"{base}{within}/{{name}}/{sub.name}"] = _subresource(b, sub, named)
    return {path: path_item(ops) for path, ops in found.items() if ops}


def _key(p: dict[str, Any]) -> tuple[str, str]:
    """A parameter's identity, and kube's order: a proxy's ``path`` is in its path and in
    its query both."""
    return str(p["name"]), str(p["in"])


def path_item(operations: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The parameters every operation of a path takes move to the path, as kube-openapi
    lays them out; each list sorted by name."""
    taken = [{_key(p) for p in op.get("parameters", ())} for op in operations.values()]
    everywhere = set.intersection(*taken)
    shared: dict[tuple[str, str], dict[str, Any]] = {}
    for op in operations.values():
        own = []
        for taken_param in op.pop("parameters", ()):
            if _key(taken_param) in everywhere:
                shared[_key(taken_param)] = taken_param
            else:
                own.append(taken_param)
        if own:
            op["parameters"] = sorted(own, key=_key)
    item: dict[str, Any] = dict(operations)
    if shared:
        item["parameters"] = sorted(shared.values(), key=_key)
    return item


def _collection(b: _Builder, scoped: Params) -> dict[str, Any]:
    rt, kind, ids = b.rt, b.rt.kind, f"{b.gv}{b.scope}{b.rt.kind}"
    ops: dict[str, Any] = {}
    if rt.supports("list"):
        ops["get"] = b.op(
            "list", f"list{ids}", b.list_description(), b.list_definition, params=[*LIST, *scoped]
        )
    if rt.supports("create"):
        ops["post"] = b.op(
            "post",
            f"create{ids}",
            f"create{article(kind)}{kind}",
            rt.definition,
            params=[*WRITE, *scoped],
            body=rt.definition,
            codes=("200", "201", "202"),
        )
    if rt.supports("deletecollection"):  # a custom kind's takes ListOptions only
        ops["delete"] = b.op(
            "deletecollection",
            f"delete{b.gv}Collection{b.scope}{kind}",
            f"delete collection of {kind}",
            STATUS,
            params=[*(LIST if rt.custom else DELETE_COLLECTION), *scoped],
            body="" if rt.custom else DELETE_OPTIONS,
        )
    return ops


def _item(b: _Builder, named: Params) -> dict[str, Any]:
    rt, kind, ids = b.rt, b.rt.kind, f"{b.gv}{b.scope}{b.rt.kind}"
    ops = _object_ops(b, rt.verbs, ids, f"the specified {kind}", rt.definition, named)
    if rt.supports("delete"):
        ops["delete"] = b.op(
            "delete",
            f"delete{ids}",
            f"delete{article(kind)}{kind}",
            b.deleted,
            params=[*DELETE, *named],
            body=DELETE_OPTIONS,
            codes=("200", "202"),
        )
    return ops


def _object_ops(
    b: _Builder,
    verbs: tuple[str, ...],
    ids: str,
    what: str,
    definition: str,
    named: Params,
    gvk: tuple[str, str, str] | None = None,
) -> dict[str, Any]:
    """Read, replace and patch of one object (or of its subresource): ``what`` it is."""
    ops: dict[str, Any] = {}
    if "get" in verbs:
        params = [*b.get_options, *named]
        ops["get"] = b.op("get", f"read{ids}", f"read {what}", definition, params=params, gvk=gvk)
    if "update" in verbs:
        ops["put"] = b.op(
            "put",
            f"replace{ids}",
            f"replace {what}",
            definition,
            params=[*WRITE, *named],
            body=definition,
            codes=("200", "201"),
            gvk=gvk,
        )
    if "patch" in verbs:
        ops["patch"] = b.op(
            "patch",
            f"patch{ids}",
            f"partially update {what}",
            definition,
            params=[*PATCH_PARAMS, *named],
            body="patch",
            codes=("200",) if b.rt.custom else ("200", "201"),  # kube's CRD builder: OK only
            gvk=gvk,
        )
    return ops


def _watches(b: _Builder, base: str, within: str, named: Params) -> dict[str, dict[str, Any]]:
    """The list across namespaces and the deprecated ``watch/`` paths (kube's CRD builder
    makes none)."""
    rt, kind, out = b.rt, b.rt.kind, {}
    every = [*LIST, PRETTY]
    if rt.namespaced and rt.supports("list"):
        listing = b.op(
            "list",
            f"list{b.gv}{kind}ForAllNamespaces",
            b.list_description(),
            b.list_definition,
            params=every,
        )
        out[f"{base}/{rt.plural}"] = {"get": listing}
    if not rt.supports("watch") or rt.custom:
        return out
    deprecated = "deprecated: use the 'watch' parameter with a list operation instead"
    many = f"watch individual changes to a list of {kind}. {deprecated}."
    one = f"watch changes to an object of kind {kind}. {deprecated}, filtered to a single item"
    one += " with the 'fieldSelector' parameter."
    ids = f"{b.gv}{b.scope}{kind}"
    scoped = named[1:]
    out[f"{base}/watch{within}"] = {
        "get": b.op("watchlist", f"watch{ids}List", many, WATCH_EVENT, params=[*LIST, *scoped])
    }
    out[f"{base}/watch{within}/{{name}}"] = {
        "get": b.op("watch", f"watch{ids}", one, WATCH_EVENT, params=[*LIST, *named])
    }
    if rt.namespaced:
        op_id = f"watch{b.gv}{kind}ListForAllNamespaces"
        out[f"{base}/watch/{rt.plural}"] = {
            "get": b.op("watchlist", op_id, many, WATCH_EVENT, params=every)
        }
    return out


def _subresource(b: _Builder, sub: Subresource, named: Params) -> dict[str, Any]:
    if sub.name in CONNECTING:
        return {}
    definition = b.definition_of(sub)
    if definition is None:
        return {}
    # kube's CRD builder names the kind's own GVK on every route, its scale's too
    gvk = None if b.rt.custom else b.rt.gvk(sub.name)
    ids = f"{b.gv}{b.scope}{b.rt.kind}{valid_id(sub.name, True)}"
    what = f"{sub.name} of the specified {b.rt.kind}"
    ops = _object_ops(b, sub.verbs, ids, what, definition, named, gvk)
    if "create" in sub.verbs:
        ops["post"] = b.op(
            "post",
            f"create{ids}",
            f"create {sub.name} of{article(b.rt.kind)}{b.rt.kind}",
            definition,
            params=[*WRITE, *named],
            body=definition,
            codes=("200", "201", "202"),
            gvk=gvk,
        )
    return ops
