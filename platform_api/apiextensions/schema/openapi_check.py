"""kube-openapi's ``SchemaValidator.Validate``, error for error.

The validators run in kube-openapi's order (type, allOf/anyOf/oneOf/not, string, format,
number, array, enum, object), errors are de-duplicated by message as its ``Result`` does, and
each result carries kube-openapi's ``MatchCount``, which picks the errors reported for a failed
``anyOf``/``oneOf`` (those of the alternative that matched most). Ratcheting (kube's
``CRDValidationRatcheting``) is the ``old`` argument: errors under a field whose value equals
the old object's are dropped. Go iterates maps in random order; properties are checked in
the order the schema lists them.
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.schema import ranges
from platform_api.apiextensions.schema.gotext import deep_equal, go_kind, is_go_int
from platform_api.apiextensions.schema.oerrors import (
    OErr,
    composite,
    enum_fail,
    invalid_type,
    merge,
    simple,
)
from platform_api.apiextensions.schema.openapi import VNode

NO_OLD: Any = object()  # "no correlated old value": validate without ratcheting
Found = tuple[list[OErr], int]
_EMPTY: list[OErr] = []


def validate(v: VNode, data: Any, path: str, old: Any = NO_OLD) -> Found:
    """(errors, match count) of ``data`` against ``v`` at message path ``path``."""
    if data is None:
        errs: list[OErr] = []
        count = 1
        if v.types and "null" not in v.types and not v.nullable:
            errs.append(invalid_type(path, v.type_text, "null"))
            count = 0
        if v.enum is not None:
            errs.append(enum_fail(path, None, v.enum))
        if errs and old is not NO_OLD and old is None:
            return _EMPTY, count
        return errs, count
    kind = go_kind(data)
    errs = []
    count = 1
    if v.type_applies:
        err = _type_error(v, data, kind, path)
        if err is None:
            count += 2
        else:
            errs.append(err)
            count += 1
    if v.all_of or v.any_of or v.one_of or v.not_ is not None:
        sub, sub_count = _props(v, data, path)
        merge(errs, sub)
        count += sub_count + 1
    else:
        count += 2
    if kind == "string":
        err = _string_error(v, data, path)
        if err is not None:
            merge(errs, [err])
        count += 1
        if v.format_check is not None:
            if not v.format_check(data):
                merge(errs, [invalid_type(path, v.format, data)])
            count += 1
    elif kind in ("integer", "number"):
        merge(errs, ranges.number_errors(v, data, path))
        count += 2
    elif kind == "array":
        sub, sub_count = _array(v, data, path, old)
        merge(errs, sub)
        count += sub_count + 2
    if v.enum is not None and not _in_enum(data, v.enum):
        merge(errs, [enum_fail(path, data, v.enum)])
    count += 1
    if kind == "object":
        sub, sub_count = _object(v, data, path, old)
        merge(errs, sub)
        count += sub_count + 1
    if errs and old is not NO_OLD and ratchet_equal(v, old, data):
        return _EMPTY, count
    return errs, count


def _type_error(v: VNode, data: Any, kind: str, path: str) -> OErr | None:
    go_format = "int64" if kind == "integer" else "float64" if kind == "number" else ""
    types = v.types
    float_int = kind == "number" and "integer" in types and ranges.is_json_integer(float(data))
    int_float = kind == "integer" and "number" in types
    if (
        kind not in ("string", "array")
        and v.format
        and not (kind in types or go_format == v.format or float_int or int_float)
    ):
        return invalid_type(path, v.format, go_format)
    numeric = "number" in types or "integer" in types
    if not numeric and v.format and kind in ("string", "array"):
        return None
    if not (kind in types or float_int or int_float):
        return invalid_type(path, v.type_text, kind)
    return None


def _string_error(v: VNode, data: str, path: str) -> OErr | None:
    if v.max_length is not None and len(data) > v.max_length:
        return OErr(
            "TooLong",
            path,
            data,
            f"{path} in body should be at most {v.max_length} chars long",
            valid=v.max_length,
        )
    if v.min_length is not None and len(data) < v.min_length:
        return OErr(
            "TooShort", path, data, f"{path} in body should be at least {v.min_length} chars long"
        )
    if v.pattern:
        if v.pattern_error:
            shown = f"{v.pattern}, but pattern is invalid: {v.pattern_error}"
            return OErr("Pattern", path, data, f"{path} in body should match '{shown}'")
        if v.pattern_rx is not None and v.pattern_rx.search(data) is None:
            return OErr("Pattern", path, data, f"{path} in body should match '{v.pattern}'")
    return None


def _in_enum(data: Any, enum: list[Any]) -> bool:
    """kube-openapi's enum match: Go-convert the value to each member's type, then compare."""
    for member in enum:
        converted = _convert(data, member)
        if converted is not NO_OLD and deep_equal(converted, member):
            return True
    return False


def _convert(data: Any, member: Any) -> Any:
    if member is None:
        return NO_OLD
    target, source = type(member), type(data)
    if target is bool or source is bool:
        return data if target is source else NO_OLD
    if target in (int, float):
        if source is int and not is_go_int(data):
            data, source = float(data), float
        if source in (int, float):
            return target(data) if target is float or source is int else int(data)
        return NO_OLD
    if target is str:
        if source is str:
            return data
        if source is int and is_go_int(data):
            return chr(data) if 0 <= data <= 0x10FFFF and not 0xD800 <= data < 0xE000 else "\ufffd"
        return NO_OLD
    return data if target is source else NO_OLD


def _props(v: VNode, data: Any, path: str) -> Found:
    """allOf, anyOf, oneOf and not (``schemaPropsValidator``)."""
    errs: list[OErr] = []
    count = 0
    if v.any_of:
        best: Found | None = None
        success: Found | None = None
        for alternative in v.any_of:
            found = validate(alternative, data, path)
            if not found[0]:
                best, success = None, found
                break
            if best is None or found[1] > best[1]:
                best = found
        if success is None:
            errs.append(composite(f'"{path}" must validate at least one schema (anyOf)'))
        chosen = best if best is not None else success
        if chosen is not None:
            merge(errs, chosen[0])
            count += chosen[1]
    if v.one_of:
        count += _one_of(v, data, path, errs)
    if v.all_of:
        passed = 0
        for part in v.all_of:
            found = validate(part, data, path)
            passed += not found[0]
            merge(errs, found[0])
            count += found[1]
        if passed != len(v.all_of):
            tail = ". None validated" if passed == 0 else ""
            merge(errs, [composite(f'"{path}" must validate all the schemas (allOf){tail}')])
    if v.not_ is not None and not validate(v.not_, data, path)[0]:
        merge(errs, [composite(f'"{path}" must not validate the schema (not)')])
    return errs, count + 1


def _one_of(v: VNode, data: Any, path: str, errs: list[OErr]) -> int:
    best: Found | None = None
    success: Found | None = None
    valid = 0
    for alternative in v.one_of:
        found = validate(alternative, data, path)
        if not found[0]:
            valid += 1
            best = None
            if success is None:
                success = found
            continue
        if valid == 0 and (best is None or found[1] > best[1]):
            best = found
    if valid == 1 and success is not None:
        merge(errs, success[0])
        return success[1]
    extra = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
    merge(errs, [composite(f'"{path}" must validate one and only one schema (oneOf). {extra}')])
    if best is not None:
        merge(errs, best[0])
        return best[1]
    return 0


def _array(v: VNode, data: list[Any], path: str, old: Any) -> Found:
    errs: list[OErr] = []
    count = 0
    if v.items is not None:
        olds = _correlate_items(v, data, old) if old is not NO_OLD else None
        for i, item in enumerate(data):
            item_old = olds[i] if olds is not None else NO_OLD
            found = validate(v.items, item, f"{path}[{i}]", item_old)
            merge(errs, found[0])
            count += found[1]
    size = len(data)
    if v.min_items is not None and size < v.min_items:
        merge(errs, [simple("MinItems", path, size, f"should have at least {v.min_items} items")])
    if v.max_items is not None and size > v.max_items:
        text = f"{path} in body should have at most {v.max_items} items"
        merge(errs, [OErr("MaxItems", path, size, text, valid=v.max_items)])
    if v.unique_items and _has_duplicates(data):
        merge(errs, [OErr("Unique", path, None, f"{path} in body shouldn't contain duplicates")])
    return errs, count


def _has_duplicates(data: list[Any]) -> bool:
    seen: list[Any] = []
    for item in data:
        if any(deep_equal(item, other) for other in seen):
            return True
        seen.append(item)
    return False


def _object(v: VNode, data: dict[str, Any], path: str, old: Any) -> Found:
    errs: list[OErr] = []
    count = 0
    size = len(data)
    if v.min_properties is not None and size < v.min_properties:
        text = f"{path} in body should have at least {v.min_properties} properties"
        errs.append(OErr("TooFewProperties", path, size, text))
    if v.max_properties is not None and size > v.max_properties:
        text = f"{path} in body should have at most {v.max_properties} properties"
        merge(errs, [OErr("TooManyProperties", path, size, text, valid=v.max_properties)])
    props = v.properties
    if v.additional_present and not v.additional_allows:
        for key in data:
            if key not in props:
                text = f"{path}.{key} in body is a forbidden property"
                merge(errs, [OErr("Unallowed", path, key, text)])
    elif v.additional is not None:
        for key, value in data.items():
            if key not in props:
                found = validate(v.additional, value, f"{path}.{key}", _child_old(old, key, path))
                merge(errs, found[0])
                count += found[1]
    for name, schema in props.items():
        if name in data:
            child = f"{path}.{name}" if path else name
            found = validate(schema, data[name], child, _child_old(old, name, path))
            merge(errs, found[0])
            count += found[1]
    for name in v.required:
        if name not in data:
            merge(
                errs,
                [OErr("Required", f"{path}.{name}", None, f"{path}.{name} in body is required")],
            )
    return errs, count


def _child_old(old: Any, key: str, path: str) -> Any:
    if old is NO_OLD or not isinstance(old, dict) or key not in old:
        return NO_OLD
    if not path and key in ("kind", "apiVersion"):
        return NO_OLD
    return old[key]


def _map_key(item: Any, keys: list[str]) -> Any:
    if not isinstance(item, dict):
        return None
    out = []
    for key in keys:
        if key not in item:
            return None
        value = item[key]
        if not isinstance(value, bool | int | float | str):
            return None
        out.append((type(value), value))
    return tuple(out)


def _correlate_items(v: VNode, data: list[Any], old: Any) -> list[Any] | None:
    """Old items for the new ones, by list-map key (other lists do not correlate)."""
    if not isinstance(old, list) or v.list_type != "map" or not v.list_map_keys:
        return None
    if v.types != ("array",) or not old:
        return None
    keyed: dict[Any, Any] = {}
    for item in old:
        key = _map_key(item, v.list_map_keys)
        if key is not None and key not in keyed:
            keyed[key] = item
    out = []
    for item in data:
        key = _map_key(item, v.list_map_keys)
        out.append(keyed.get(key, NO_OLD) if key is not None else NO_OLD)
    return out


def ratchet_equal(v: VNode | None, old: Any, new: Any) -> bool:
    """kube's ``CorrelatedObject.CachedDeepEqual``: equality through the schema."""
    if new is None or old is None:
        return new is None and old is None
    if isinstance(old, list) != isinstance(new, list) or isinstance(old, dict) != isinstance(
        new, dict
    ):
        return False
    if isinstance(new, list):
        if len(old) != len(new):
            return False
        if v is None or v.list_type != "map":
            return deep_equal(old, new)
        olds = _correlate_items(v, new, old)
        if olds is None or v.items is None:
            return not new
        return all(
            o is not NO_OLD and ratchet_equal(v.items, o, n) for o, n in zip(olds, new, strict=True)
        )
    if isinstance(new, dict):
        if len(old) != len(new) or v is None:
            return False
        for key, value in new.items():
            if key not in old:
                return False
            child = v.properties.get(key) or v.additional
            if child is None or not ratchet_equal(child, old[key], value):
                return False
        return True
    return deep_equal(old, new)
