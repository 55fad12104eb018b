"""ObjectMeta and TypeMeta of custom resources and their embedded resources.

kube's ``objectmeta`` package: ``coerce`` checks the types of ``apiVersion``/``kind`` and
rewrites each ``metadata`` through Go's ObjectMeta (dropping unknown fields; with
``drop_invalid`` also the malformed ones, as kube does for objects read from storage), and
``validate`` is ``objectmeta.Validate``: embedded resources need ``apiVersion`` and ``kind``,
and their metadata passes ObjectMeta validation (names as path segments).
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.schema import gojson_meta
from platform_api.apiextensions.schema.gojson_meta import DecodeError
from platform_api.apiextensions.schema.gotext import bad_value
from platform_api.apiextensions.schema.node import EMPTY, Node
from platform_api.validation import field, names
from platform_api.validation.field import FieldError
from platform_api.validation.objectmeta import validate_finalizers, validate_owner_references

Obj = dict[str, Any]
_GO_TYPES = {bool: "bool", int: "int64", float: "float64", str: "string", list: "[]interface {}"}


def _child(path: str | None, name: str) -> str:
    return name if not path else f"{path}.{name}"


def _key(path: str | None, key: str) -> str:
    return f"{path or ''}[{key}]"


def get_object_meta(
    obj: Obj, drop_malformed: bool, track: bool = False, parent: str | None = None
) -> tuple[Obj | None, bool, list[str]]:
    """``GetObjectMetaWithOptions``: (canonical metadata, found, unknown field paths).

    Raises ``DecodeError`` with Go's message for a malformed field unless ``drop_malformed``.
    """
    if "metadata" not in obj:
        return None, False, []
    metadata = obj["metadata"]
    prefix = _child(parent, "metadata") if track else None
    try:
        meta, unknown = gojson_meta.decode(metadata, prefix)
        return meta, True, unknown
    except DecodeError:
        if not drop_malformed:
            raise
    if not isinstance(metadata, dict):
        got = "map[string]interface {}" if metadata is None else _GO_TYPES.get(type(metadata))
        raise DecodeError(f"invalid metadata: expected object, got {got}")
    accumulated: Obj = {}
    unknown = []
    for key in metadata:
        try:
            part, strict = gojson_meta.decode({key: metadata[key]}, prefix)
        except DecodeError:
            continue
        accumulated.update(part)
        unknown += strict
    canonical, _ = gojson_meta.decode(accumulated)
    return canonical, True, unknown


def coerce(
    obj: Any,
    schema: Node | None,
    root: bool,
    drop_invalid: bool = False,
    track: bool = False,
    path: str | None = None,
) -> tuple[FieldError | None, list[str]]:
    """``CoerceWithOptions``: the first error (kube stops there) and the sorted unknown paths."""
    if root:
        schema = (schema or EMPTY).as_embedded()
    unknown: list[str] = []
    err = _coerce(path, obj, schema, drop_invalid, track, unknown)
    return err, sorted(unknown)


def _coerce(
    path: str | None, x: Any, s: Node | None, drop: bool, track: bool, unknown: list[str]
) -> FieldError | None:
    if s is None or not s.embedded_inside:
        return None
    if isinstance(x, dict):
        for key in list(x):
            if key not in x:
                continue
            value = x[key]
            if s.embedded:
                err = _coerce_meta_field(path, x, key, value, drop, track, unknown)
                if err is not None:
                    return err
                value = x.get(key)
            prop = s.properties.get(key)
            if prop is not None:
                err = _coerce(_child(path, key), value, prop, drop, track, unknown)
            elif s.additional_present:
                err = _coerce(_key(path, key), value, s.additional, drop, track, unknown)
            else:
                err = None
            if err is not None:
                return err
    elif isinstance(x, list):
        for i, value in enumerate(x):
            err = _coerce(f"{path or ''}[{i}]", value, s.items, drop, track, unknown)
            if err is not None:
                return err
    return None


def _coerce_meta_field(
    path: str | None, x: Obj, key: str, value: Any, drop: bool, track: bool, unknown: list[str]
) -> FieldError | None:
    if key in ("apiVersion", "kind"):
        if not isinstance(value, str):
            if drop:
                del x[key]
            else:
                return field.invalid(_child(path, key), bad_value(value), "must be a string")
    elif key == "metadata":
        try:
            meta, found, strict = get_object_meta(x, drop, track, path)
        except DecodeError as e:
            if not drop:
                return field.invalid(_child(path, "metadata"), bad_value(value), str(e))
            return None
        unknown += strict
        if found:
            x["metadata"] = meta
    return None


def validate(
    obj: Any, schema: Node | None, root: bool = False, path: str | None = None
) -> list[FieldError]:
    """``objectmeta.Validate``: TypeMeta and ObjectMeta of embedded resources."""
    if root:
        schema = (schema or EMPTY).as_embedded()
    errs: list[FieldError] = []
    _validate(path, obj, schema, errs)
    return errs


def _validate(path: str | None, x: Any, s: Node | None, errs: list[FieldError]) -> None:
    if s is None or not s.embedded_inside:
        return
    if isinstance(x, dict):
        if s.embedded:
            errs += _embedded(path, x)
        for key, value in x.items():
            prop = s.properties.get(key)
            if prop is not None:
                _validate(_child(path, key), value, prop, errs)
            elif s.additional_present:
                _validate(_key(path, key), value, s.additional, errs)
    elif isinstance(x, list):
        for i, value in enumerate(x):
            _validate(f"{path or ''}[{i}]", value, s.items, errs)


def _embedded(path: str | None, x: Obj) -> list[FieldError]:
    errs: list[FieldError] = []
    for key in ("apiVersion", "kind"):
        if key not in x:
            errs.append(field.required(_child(path, key)))
    for key, value in x.items():
        if key == "apiVersion":
            errs += _api_version(_child(path, key), value)
        elif key == "kind":
            errs += _kind(_child(path, key), value)
        elif key == "metadata":
            try:
                meta, _, _ = get_object_meta(x, False)
            except DecodeError as e:
                errs.append(field.invalid(_child(path, "metadata"), bad_value(value), str(e)))
                continue
            errs += validate_object_meta(meta or {}, _child(path, "metadata"))
    return errs


def _api_version(path: str, value: Any) -> list[FieldError]:
    if not isinstance(value, str):
        return [field.invalid(path, bad_value(value), "must be a string")]
    if not value:
        return [field.invalid(path, value, "must not be empty")]
    if value != "/" and value.count("/") > 1:
        return [field.invalid(path, value, f"unexpected GroupVersion string: {value}")]
    return []


def _kind(path: str, value: Any) -> list[FieldError]:
    if not isinstance(value, str):
        return [field.invalid(path, bad_value(value), "must be a string")]
    if not value:
        return [field.invalid(path, value, "must not be empty")]
    msgs = names.is_dns1035_label(value.lower())
    if msgs:
        return [
            field.invalid(
                path, value, "may have mixed case, but should otherwise match: " + ",".join(msgs)
            )
        ]
    return []


def _path_segment(name: str, prefix: bool) -> list[str]:
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


def validate_object_meta(meta: Obj, path: str) -> list[FieldError]:
    """``ValidateObjectMetaAccessor`` of an embedded resource (names are path segments)."""
    errs: list[FieldError] = []
    generate_name = meta.get("generateName", "")
    if generate_name:
        errs += [
            field.invalid(f"{path}.generateName", generate_name, m)
            for m in _path_segment(generate_name, True)
        ]
    name = meta.get("name") or "fakename"
    errs += [field.invalid(f"{path}.name", name, m) for m in _path_segment(name, False)]
    namespace = meta.get("namespace", "")
    if namespace:
        errs += [
            field.invalid(f"{path}.namespace", namespace, m)
            for m in names.is_dns1123_label(namespace)
        ]
    generation = meta.get("generation", 0)
    if generation < 0:
        errs.append(
            field.invalid(f"{path}.generation", generation, "must be greater than or equal to 0")
        )
    errs += names.validate_labels(meta.get("labels") or {}, f"{path}.labels")
    errs += names.validate_annotations(meta.get("annotations") or {}, f"{path}.annotations")
    errs += validate_owner_references(meta.get("ownerReferences") or [], f"{path}.ownerReferences")
    errs += validate_finalizers(meta.get("finalizers") or [], f"{path}.finalizers")
    errs += _managed_fields(meta.get("managedFields") or [], f"{path}.managedFields")
    return errs


def _managed_fields(entries: list[Obj], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, entry in enumerate(entries):
        at = f"{path}[{i}]"
        operation = entry.get("operation", "")
        if operation not in ("Apply", "Update"):
            errs.append(field.invalid(f"{at}.operation", operation, "must be `Apply` or `Update`"))
        fields_type = entry.get("fieldsType", "")
        if fields_type and fields_type != "FieldsV1":
            errs.append(field.invalid(f"{at}.fieldsType", fields_type, "must be `FieldsV1`"))
        manager = entry.get("manager", "")
        if len(manager.encode()) > 128:
            errs.append(field.too_long(f"{at}.manager", 128))
        offset = 0
        for c in manager:
            if not c.isprintable():
                detail = f"invalid character U+{ord(c):04X} (at position {offset})"
                errs.append(field.invalid(f"{at}.manager", manager, detail))
            offset += len(c.encode())
        if len(entry.get("subresource", "")) > 256:
            errs.append(field.too_long(f"{at}.subresource", 256))
    return errs
