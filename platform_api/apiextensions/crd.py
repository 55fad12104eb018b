"""Reading a CustomResourceDefinition: conditions, versions, and the types it serves.

Everything here is a pure function of the CRD object (a JSON dict), shared by the
CRD's strategy, its controllers and the serving of its custom resources.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from platform_api.apiextensions.published import (
    METADATA,
    TYPE_META,
    kind_documents,
    selectable_fields,
)
from platform_api.scheme.catalog import version_priority
from platform_api.scheme.schemas import Node
from platform_api.scheme.types import CUSTOM_VERBS, STATUS_VERBS, ResourceType, Subresource
from platform_api.timestamps import format_time

Obj = dict[str, Any]
GROUP = "apiextensions.platform.io"
CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.platform.io"
NAMES_ACCEPTED, ESTABLISHED, TERMINATING = "NamesAccepted", "Established", "Terminating"


# -- conditions (kube's apihelpers) ---------------------------------------------------


def find_condition(crd: Obj, kind: str) -> Obj | None:
    for condition in crd.get("status", {}).get("conditions") or []:
        if condition.get("type") == kind:
            return condition
    return None


def is_true(crd: Obj, kind: str) -> bool:
    condition = find_condition(crd, kind)
    return condition is not None and condition.get("status") == "True"


def set_condition(crd: Obj, kind: str, status: str, reason: str, message: str) -> None:
    """``SetCRDCondition``: the transition time moves only when the status does."""
    now = format_time(datetime.now(UTC))
    new = {
        "type": kind,
        "status": status,
        "lastTransitionTime": now,
        "reason": reason,
        "message": message,
    }
    existing = find_condition(crd, kind)
    if existing is None:
        # A CRD read back from Protobuf (etcd) has Go's null for no conditions: the
        # field is not omitempty.
        held = crd.setdefault("status", {})
        held["conditions"] = [*(held.get("conditions") or []), new]
        return
    if existing.get("status") != status or not existing.get("lastTransitionTime"):
        existing["lastTransitionTime"] = now
    existing.update(status=status, reason=reason, message=message)


def equivalent(a: Obj | None, b: Obj | None) -> bool:
    """Same condition but for its transition time."""
    if a is None or b is None:
        return a is b
    return all(a.get(k) == b.get(k) for k in ("type", "status", "reason", "message"))


# -- versions -----------------------------------------------------------------------


def versions(crd: Obj) -> list[Obj]:
    return list(crd.get("spec", {}).get("versions") or [])


def storage_version(crd: Obj) -> str:
    for version in versions(crd):
        if version.get("storage"):
            return str(version["name"])
    return ""


def served_versions(crd: Obj) -> list[str]:
    names = [str(v["name"]) for v in versions(crd) if v.get("served")]
    return sorted(names, key=version_priority)


def version_of(crd: Obj, name: str) -> Obj:
    for version in versions(crd):
        if version.get("name") == name:
            return version
    return {}


def schema_of(crd: Obj, version: str) -> Obj | None:
    """The version's ``openAPIV3Schema`` (v1 CRDs carry one per version)."""
    schema = version_of(crd, version).get("schema") or {}
    found = schema.get("openAPIV3Schema")
    return found if isinstance(found, dict) else None


def subresources_of(crd: Obj, version: str) -> Obj:
    return version_of(crd, version).get("subresources") or {}


def deprecation_warning(crd: Obj, version: str) -> str | None:
    """kube's per-version warning: the CRD's text, or ``<group>/<v> <Kind> is deprecated;
    use <group>/<newer> <Kind>`` naming the most preferred newer served version."""
    entry = version_of(crd, version)
    if not entry.get("deprecated"):
        return None
    if entry.get("deprecationWarning") is not None:
        return str(entry["deprecationWarning"])
    spec = crd["spec"]
    group, kind = spec["group"], spec["names"]["kind"]
    message = f"{group}/{version} {kind} is deprecated"
    rank = version_priority(version)
    newer = [
        str(v["name"])
        for v in versions(crd)
        if v.get("served") and not v.get("deprecated") and version_priority(v["name"]) < rank
    ]
    if newer:
        message += f"; use {group}/{sorted(newer, key=version_priority)[0]} {kind}"
    return message


# -- what gets served ---------------------------------------------------------------


def definition_name(group: str, version: str, kind: str) -> str:
    """kube's OpenAPI model name of a custom kind: the group reversed, then version, kind."""
    return ".".join(reversed(group.split("."))) + f".{version}.{kind}"


def served_types(crd: Obj) -> list[ResourceType]:
    """One ResourceType per served version, named by the accepted names."""
    spec, names = crd["spec"], crd.get("status", {}).get("acceptedNames") or {}
    group, storage = spec["group"], storage_version(crd)
    out = []
    for version in served_versions(crd):
        subs = subresources_of(crd, version)
        sub_types: tuple[Subresource, ...] = ()  # in kube's discovery order
        if "status" in subs:
            sub_types += (Subresource("status", names["kind"], STATUS_VERBS),)
        if "scale" in subs:
            sub_types += (Subresource("scale", "Scale", STATUS_VERBS, "autoscaling", "v1"),)
        out.append(
            ResourceType(
                group=group,
                version=version,
                kind=names["kind"],
                plural=names["plural"],
                singular=names.get("singular") or names["kind"].lower(),
                namespaced=spec.get("scope") == "Namespaced",
                short_names=tuple(names.get("shortNames") or ()),
                categories=tuple(names.get("categories") or ()),
                verbs=CUSTOM_VERBS,
                subresources=sub_types,
                definition=definition_name(group, version, names["kind"]),
                storage_version=storage if storage != version else "",
                custom=True,
                deprecation_warning=deprecation_warning(crd, version),
                terminating=is_true(crd, TERMINATING),
            )
        )
    return out


def definitions(crd: Obj) -> dict[str, Node]:
    """OpenAPI definitions of the served kinds (and their lists), as kube publishes them:
    the version's schema with ``metadata`` referring to ObjectMeta and TypeMeta fields."""
    spec, names = crd["spec"], crd.get("status", {}).get("acceptedNames") or {}
    group, kind, list_kind = spec["group"], names["kind"], names.get("listKind") or ""
    out: dict[str, Node] = {}
    for version in served_versions(crd):
        schema = schema_of(crd, version)
        name = definition_name(group, version, kind)
        out[name] = _kind_node(schema, group, version, kind)
        if list_kind:
            out[definition_name(group, version, list_kind)] = _list_node(
                name, group, version, kind, list_kind, spec["names"]["plural"]
            )
    return out


def published_definitions(crd: Obj) -> dict[str, tuple[Node, Node]]:
    """Each served kind's (v3, v2) definition as kube's OpenAPI documents show it
    (published.py); lists are published as they are served."""
    spec, names = crd["spec"], crd.get("status", {}).get("acceptedNames") or {}
    group, kind = spec["group"], names["kind"]
    out: dict[str, tuple[Node, Node]] = {}
    for version in served_versions(crd):
        extensions: Obj = {"x-kubernetes-group-version-kind": _gvk(group, version, kind)}
        fields = selectable_fields(version_of(crd, version))
        if fields:
            extensions["x-kubernetes-selectable-fields"] = fields
        documents = kind_documents(schema_of(crd, version), extensions)
        out[definition_name(group, version, kind)] = documents
    return out


def _gvk(group: str, version: str, kind: str) -> list[Obj]:
    return [{"group": group, "version": version, "kind": kind}]


def _type_meta() -> dict[str, Node]:
    return copy.deepcopy(TYPE_META)


def _kind_node(schema: Obj | None, group: str, version: str, kind: str) -> Node:
    free_form = schema is None or (
        bool(schema.get("x-kubernetes-preserve-unknown-fields")) and not schema.get("properties")
    )
    if free_form or schema is None:
        node: Node = {"type": "object"}
    else:
        node = copy.deepcopy(schema)
        props = node.setdefault("properties", {})
        props.update(_type_meta())
        props["metadata"] = dict(METADATA)
        node.setdefault("type", "object")
    node["x-kubernetes-group-version-kind"] = _gvk(group, version, kind)
    return node


def kind_node(crd: Obj, version: str) -> Node | None:
    """The definition of the kind in any of the CRD's versions, served or not (kube's
    field manager types objects in each); None for a version the CRD does not have."""
    if not version_of(crd, version):
        return None
    kind = (crd.get("status", {}).get("acceptedNames") or {}).get("kind")
    return _kind_node(schema_of(crd, version), crd["spec"]["group"], version, kind or "")


def _list_node(item: str, group: str, version: str, kind: str, list_kind: str, plural: str) -> Node:
    return {
        "type": "object",
        "description": f"{list_kind} is a list of {kind}",
        "required": ["items"],
        "properties": {
            **_type_meta(),
            "items": {
                "type": "array",
                "description": f"List of {plural}. More info: https://git.k8s.io/community/"
                "contributors/devel/sig-architecture/api-conventions.md",
                "items": {"$ref": item},
            },
            "metadata": {"$ref": "io.platform.apimachinery.pkg.apis.meta.v1.ListMeta"},
        },
        "x-kubernetes-group-version-kind": _gvk(group, version, list_kind),
    }
