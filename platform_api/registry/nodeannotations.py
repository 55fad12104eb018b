"""The Node annotations kube reads as JSON: taints and preferAvoidPods (kube's
ValidateNodeSpecificAnnotations), under this server's ``scheduler.alpha.platform.io`` keys.

kube decodes them with Go's encoding/json, so a value that is no JSON, or JSON of the
wrong shape, is refused with Go's words (``json: cannot unmarshal number into Go struct
field .0.key of type string``); field names match case-insensitively, unknown ones are
ignored, and the first error ends the decoding.  What decodes is then validated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from platform_api.apiextensions.schema.gojson_meta import DecodeError, parse_rfc3339
from platform_api.codec.bounds import BodyError
from platform_api.codec.text import parse_json
from platform_api.timestamps import format_time
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.tolerations import validate_taints

TAINTS_ANNOTATION = "scheduler.alpha.platform.io/taints"
AVOID_PODS_ANNOTATION = "scheduler.alpha.platform.io/preferAvoidPods"
ANNOTATIONS = "metadata.annotations"
Obj = dict[str, Any]


@dataclass(frozen=True)
class GoType:
    """The shape of a Go type as encoding/json sees it; ``name`` is how errors print it."""

    name: str
    kind: str  # "string", "bool", "time", "slice" or "struct"
    fields: tuple[tuple[str, GoType], ...] = ()
    elem: GoType | None = None


STRING = GoType("string", "string")
BOOL = GoType("bool", "bool")
TIME = GoType("v1.Time", "time")
TAINT = GoType(
    "core.Taint",
    "struct",
    (
        ("key", STRING),
        ("value", STRING),
        ("effect", GoType("core.TaintEffect", "string")),
        ("timeAdded", TIME),
    ),
)
TAINTS = GoType("[]core.Taint", "slice", elem=TAINT)
_OWNER = GoType(
    "v1.OwnerReference",
    "struct",
    (
        ("apiVersion", STRING),
        ("kind", STRING),
        ("name", STRING),
        ("uid", GoType("types.UID", "string")),
        ("controller", BOOL),
        ("blockOwnerDeletion", BOOL),
    ),
)
_ENTRY = GoType(
    "v1.PreferAvoidPodsEntry",
    "struct",
    (
        ("podSignature", GoType("v1.PodSignature", "struct", (("podController", _OWNER),))),
        ("evictionTime", TIME),
        ("reason", STRING),
        ("message", STRING),
    ),
)
AVOID_PODS = GoType(
    "v1.AvoidPods",
    "struct",
    (("preferAvoidPods", GoType("[]v1.PreferAvoidPodsEntry", "slice", elem=_ENTRY)),),
)
_KINDS = {str: "string", bool: "bool", list: "array", dict: "object"}
_JSON_KIND = {"string": "string", "bool": "bool", "slice": "array", "struct": "object"}


def _type_error(value: Any, go: GoType, top: str, path: list[str]) -> DecodeError:
    kind = _KINDS.get(type(value), "number")
    if not path:
        where = "Go value"
    elif path[-1].isdigit():  # an element of a list: Go names no struct field
        where = f"{top}.{'.'.join(path)}"
    else:
        where = f"Go struct field {top}.{'.'.join(path)}"
    return DecodeError(f"json: cannot unmarshal {kind} into {where} of type {go.name}")


def _decode(value: Any, go: GoType, top: str, path: list[str]) -> Any:
    """``value`` as Go would hold it (None for null: Go's zero value or nil pointer)."""
    if value is None:
        return None
    if go.kind == "time":
        if not isinstance(value, str):  # metav1.Time unmarshals a string itself
            kind = _KINDS.get(type(value), "number")
            raise DecodeError(f"json: cannot unmarshal {kind} into Go value of type string")
        return format_time(parse_rfc3339(value))
    if _KINDS.get(type(value)) != _JSON_KIND[go.kind]:
        raise _type_error(value, go, top, path)
    if isinstance(value, list):
        assert go.elem is not None
        return [_decode(v, go.elem, top, [*path, str(i)]) for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return value
    out: Obj = {}
    for key, item in value.items():
        name = _field_for(key, go)
        if name is not None:
            out[name] = _decode(item, dict(go.fields)[name], top, [*path, key])
    return {k: v for k, v in out.items() if v is not None}


def _field_for(key: str, go: GoType) -> str | None:
    """The struct field a JSON key sets: its exact name, else a case-insensitive match."""
    names = [name for name, _ in go.fields]
    if key in names:
        return key
    return next((name for name in names if name.lower() == key.lower()), None)


def _unmarshal(text: str, go: GoType, top: str) -> Any:
    """Go's json.Unmarshal of ``text`` into ``go``; raises DecodeError with its words."""
    try:
        value, _ = parse_json(text.encode())
    except BodyError as e:
        raise DecodeError(str(e)) from None
    return _decode(value, go, top, [])


def _time_added(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _taints(annotations: Obj) -> list[FieldError]:
    try:
        taints = _unmarshal(annotations[TAINTS_ANNOTATION], TAINTS, "")
    except DecodeError as e:
        return [field.invalid(ANNOTATIONS, TAINTS_ANNOTATION, str(e))]
    path = f"{ANNOTATIONS}.{TAINTS_ANNOTATION}"
    return validate_taints([t or {} for t in taints or []], path, _time_added)


def _avoid_pods(annotations: Obj) -> list[FieldError]:
    try:
        avoid = _unmarshal(annotations[AVOID_PODS_ANNOTATION], AVOID_PODS, "AvoidPods")
    except DecodeError as e:
        return [field.invalid(f"{ANNOTATIONS}.AvoidPods", AVOID_PODS_ANNOTATION, str(e))]
    errs: list[FieldError] = []
    for i, entry in enumerate((avoid or {}).get("preferAvoidPods") or []):
        at = f"{ANNOTATIONS}.{AVOID_PODS_ANNOTATION}[{i}].PodSignature"
        controller = ((entry or {}).get("podSignature") or {}).get("podController")
        if controller is None:
            errs.append(field.required(at))
        elif not controller.get("controller"):
            # kube dereferences a missing ``controller`` (and fails); read as false here
            detail = "must point to a controller"
            errs.append(field.invalid(f"{at}.PodController.Controller", False, detail))
    return errs


def validate_node_annotations(annotations: Obj) -> list[FieldError]:
    """kube's ValidateNodeSpecificAnnotations: each annotation, when not empty."""
    errs: list[FieldError] = []
    if annotations.get(TAINTS_ANNOTATION):
        errs += _taints(annotations)
    if annotations.get(AVOID_PODS_ANNOTATION):
        errs += _avoid_pods(annotations)
    return errs
