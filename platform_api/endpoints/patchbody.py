"""The body of a JSON, merge or strategic merge patch, read as kube's patcher reads it.

kube checks a JSON or merge patch with its strict JSON decoder first when fieldValidation
is Warn or Strict (into ``[]jsonPatchOp`` or a map: a wrong type is ``error decoding
patch``, repeated and unknown fields become strict problems), then hands the bytes to
evanphx/json-patch, whose refusals carry no lead-in (``Invalid JSON Patch``).  A strategic
merge patch is decoded into a map with no lead-in at all.  Server-side apply bodies are
read by the apply path (patch.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import orjson

from platform_api import errors, gotext
from platform_api.codec import BodyError, DepthError, Duplicates, parse_json, protobuf
from platform_api.endpoints.negotiation import JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from platform_api.gotext import json_kind
from platform_api.patch import json_patch
from platform_api.registry.prepare import undeterminable
from platform_api.scheme.aliases import Aliases
from platform_api.scheme.readback import conversion_problem, typemeta_field_problem
from platform_api.scheme.schemas import Schemas
from platform_api.scheme.types import ResourceType
from platform_api.validation import field as causes

Obj = dict[str, Any]

_BAD_MERGE_PATCH = "Invalid JSON Patch"  # evanphx's ErrBadJSONPatch


@dataclass
class PatchBody:
    document: Any  # a merge patch's object (or array), a JSON patch's operations
    problems: list[str] = field(default_factory=list)  # kube's strict errors of the patch


def parse(data: bytes, patch_type: str, level: str = "Warn") -> PatchBody:
    """The patch, or the StatusError kube answers it with."""
    checked = level != "Ignore"
    try:
        # kube decodes patches with sigs.k8s.io/json, encoding/json v1's scanner and all
        document, duplicates = parse_json(data, unstructured=True, v1_errors=True)
    except DepthError as e:
        problem = f"invalid character '{e.char}' exceeded max depth"
        raise errors.bad_request(_lead_in(patch_type, problem)) from None
    except BodyError as e:
        raise errors.bad_request(_body_error(patch_type, checked, e)) from None
    if patch_type == JSON_PATCH:
        problems = json_patch.check_operations(document, duplicates) if checked else []
        return PatchBody(json_patch.decode(document), problems)
    if patch_type == STRATEGIC_MERGE_PATCH:
        return _strategic(document, duplicates, checked)
    return _merge(document, duplicates, checked)


def _lead_in(patch_type: str, problem: str) -> str:
    return problem if patch_type == STRATEGIC_MERGE_PATCH else f"error decoding patch: {problem}"


def _body_error(patch_type: str, checked: bool, e: BodyError) -> str:
    if patch_type == MERGE_PATCH and not (checked or e.number):
        return _BAD_MERGE_PATCH
    problem = str(e)
    if patch_type == JSON_PATCH and e.number and checked:  # the op's value field
        problem = problem.replace("Go value of", "Go struct field jsonPatchOp.value of")
    if patch_type == JSON_PATCH and not checked:
        return problem
    return _lead_in(patch_type, problem)


def _merge(document: Any, duplicates: Duplicates, checked: bool) -> PatchBody:
    if isinstance(document, dict):
        return PatchBody(document, duplicate_problems(document, duplicates) if checked else [])
    if checked and document is not None:
        raise errors.bad_request(
            f"error decoding patch: json: cannot unmarshal {json_kind(document)} into Go value "
            "of type map[string]interface {}"
        )
    if isinstance(document, list):  # the merge's result is the patch itself, nulls pruned
        return PatchBody([item for item in document if item is not None])
    raise errors.bad_request(_BAD_MERGE_PATCH)


def _strategic(document: Any, duplicates: Duplicates, checked: bool) -> PatchBody:
    if document is None:
        return PatchBody({})
    if not isinstance(document, dict):
        raise errors.bad_request(
            f"json: cannot unmarshal {json_kind(document)} into Go value of type "
            "map[string]interface {}"
        )
    return PatchBody(document, duplicate_problems(document, duplicates) if checked else [])


def duplicate_problems(document: Any, duplicates: Duplicates) -> list[str]:
    """``duplicate field "a.b"`` for each key the body repeated, in the body's order, with
    the paths kube's strict decoder gives a map of interfaces (``a[0].b``)."""
    if not duplicates:
        return []
    out: list[str] = []
    stack: list[tuple[Any, str]] = [(document, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, dict):
            out += [
                f'duplicate field "{path}.{key}"' if path else f'duplicate field "{key}"'
                for key, _ in duplicates.get(id(item), ())
            ]
            children = [(v, f"{path}.{k}" if path else k) for k, v in item.items()]
        elif isinstance(item, list):
            children = [(v, f"{path}[{i}]") for i, v in enumerate(item)]
        else:
            continue
        stack.extend(reversed(children))
    return out


def patch_invalid(
    patched: Any, detail: str, strategic: Any = None, sort_keys: bool = False
) -> errors.StatusError:
    """kube's answer when the patched document does not decode: an Invalid on ``patch``,
    showing the result, or for a ``strategic`` merge patch the patch as Go prints it.
    json-patch writes the result's top level as a Go map (sorted keys; the levels below
    come in its order from ``merge.as_written`` and ``json_patch.as_written``);
    ``sort_keys`` sorts every level, as Go writes a custom resource's maps."""
    if strategic is not None:
        value = gotext.sprint(strategic)
    elif sort_keys or not isinstance(patched, dict):
        value = orjson.dumps(patched, option=orjson.OPT_SORT_KEYS if sort_keys else 0).decode()
    else:
        value = orjson.dumps(dict(sorted(patched.items()))).decode()
    return errors.invalid("", "", "", [causes.invalid("patch", value, detail)])


@dataclass(frozen=True)
class PatchTarget:
    """The type a patched document must decode as: a resource's, or a sub-resource's own
    (Scale)."""

    api_version: str
    kind: str
    definition: str
    custom: bool = False
    scheme: str = protobuf.SCHEME  # the scheme kube's decoder of the patched type has

    @classmethod
    def of(cls, rt: ResourceType) -> PatchTarget:
        return cls(rt.api_version, rt.kind, rt.definition, rt.custom)


TYPEMETA = ("apiVersion", "kind")


class Typeless(errors.StatusError):
    """A patched built-in object with no apiVersion: kube's decoder reads it as a kind
    with no fields (each other top-level field unknown to it), then finds no name."""

    def __init__(self, refusal: errors.StatusError) -> None:
        super().__init__(refusal.code, refusal.reason, refusal.message, refusal.details)

    @staticmethod
    def unknown_fields(doc: Obj) -> list[str]:
        """The strict problems kube's decoder finds in such a document (``doc`` as the
        patch library writes it)."""
        return [f'unknown field "{key}"' for key in doc if key not in TYPEMETA]


def check_patched_type(
    patched: Obj,
    target: PatchTarget,
    schemas: Schemas,
    name: str,
    strategic: bool,
    aliases: Aliases | None = None,
    shown: Callable[[], Any] | None = None,
) -> None:
    """The patched document's apiVersion and kind as kube's decoders take them; a
    refusal quotes ``shown()`` (the document as the patch library writes it), else
    ``patched``.

    A strategic merge patch's result goes through the unstructured converter, which
    keeps the resource's own type: a missing or other string is put back.  A JSON or
    merge patch's result is decoded as a body is, but what its decoder cannot read is an
    Invalid on ``patch``; a built-in kind's decoder takes the resource's kind for a
    missing one and yields no object (no name) for a missing apiVersion.  A custom
    resource's other kinds and versions are left to its validation."""
    if strategic:
        for key, own in (("apiVersion", target.api_version), ("kind", target.kind)):
            if isinstance(patched.get(key, ""), str):
                patched[key] = own
        return
    problem = typemeta_field_problem(patched)
    if problem:
        quoted = shown() if shown else patched
        problem = typemeta_field_problem(quoted)  # of two, the first as kube decodes them
        raise patch_invalid(quoted, problem, sort_keys=target.custom)
    version, kind = patched.get("apiVersion") or "", patched.get("kind") or ""
    if target.custom:
        if not version:
            raise errors.internal_error(
                "Object 'apiVersion' is missing in 'object has no apiVersion field'"
            )
        if not kind:
            text = orjson.dumps(patched, option=orjson.OPT_SORT_KEYS).decode()
            raise patch_invalid(patched, f"Object 'Kind' is missing in '{text}'", sort_keys=True)
        return
    if not version:
        raise Typeless(undeterminable(name))
    if aliases is not None:  # an upstream group's name is the branded group's
        patched["apiVersion"] = version = aliases.canonical_api_version(version)[0]
    patched["kind"] = kind = kind or target.kind
    if (version, kind) != (target.api_version, target.kind):
        detail = conversion_problem(
            patched, version, kind, target.kind, target.definition, schemas, target.scheme
        )
        raise patch_invalid(shown() if shown else patched, detail)
