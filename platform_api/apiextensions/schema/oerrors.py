"""kube-openapi's validation errors, and how kube turns them into field errors.

``OErr`` is kube-openapi's ``errors.Validation`` (a code, the dotted path it calls ``Name``,
the offending value and its English message) or, with no code, one of its plain errors
(``"spec" must validate at least one schema (anyOf)``, ``Checked value must be of type ...``).
``to_field_errors`` is apiextensions-apiserver's ``kubeOpenAPIResultToFieldErrors``: plain
errors land on the root path, which Go prints as ``<nil>`` when there is none.
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.schema.gotext import bad_value, go_json
from platform_api.validation import field
from platform_api.validation.field import FieldError

NIL_PATH = "<nil>"


class OErr:
    __slots__ = ("code", "message", "name", "valid", "value", "values")

    def __init__(
        self,
        code: str | None,
        name: str,
        value: Any,
        message: str,
        valid: Any = None,
        values: list[Any] | None = None,
    ) -> None:
        self.code = code
        self.name = name
        self.value = value
        self.message = message
        self.valid = valid
        self.values = values

    def __repr__(self) -> str:
        return f"OErr({self.code!r}, {self.message!r})"


def merge(into: list[OErr], errs: list[OErr]) -> None:
    """``Result.AddErrors``: keep the first of errors with the same message."""
    if not errs:
        return
    if not into:
        into.extend(errs)
        return
    for err in errs:
        message = err.message
        if all(e.message != message for e in into):
            into.append(err)


def composite(message: str) -> OErr:
    return OErr(None, "", None, message)


def simple(code: str, path: str, value: Any, text: str) -> OErr:
    return OErr(code, path, value, f"{path} in body {text}")


def _quote(value: str) -> str:
    return field.go_quote(value)


def invalid_type(path: str, type_name: str, value: Any) -> OErr:
    """``errors.InvalidType``: the value shown is the JSON type (or format) found."""
    if isinstance(value, str):
        text = f"{path} in body must be of type {type_name}: {_quote(value)}"
    else:
        text = f"{path} in body must be of type {type_name}"
    return OErr("InvalidType", path, value, text)


def enum_fail(path: str, value: Any, values: list[Any]) -> OErr:
    return OErr("Enum", path, value, f"{path} in body should be one of {values}", values=values)


def _child(base: str | None, name: str) -> str:
    return name if base is None else f"{base}.{name}"


def to_field_errors(errs: list[OErr], fld_path: str | None = None) -> list[FieldError]:
    """``kubeOpenAPIResultToFieldErrors`` under ``fld_path`` (None: Go's nil path)."""
    out: list[FieldError] = []
    root = NIL_PATH if fld_path is None else fld_path
    for err in errs:
        if err.code is None:
            out.append(field.invalid(root, "", err.message))
            continue
        name = err.name
        path = _child(fld_path, name[1:] if name.startswith(".") else name)
        if not name or name == ".":
            path = root
        out.append(_field_error(err, path))
    return out


def _field_error(err: OErr, path: str) -> FieldError:
    code = err.code
    if code == "Required":
        return field.required(path)
    if code == "Enum":
        shown = [v if isinstance(v, str) else go_json(v) for v in err.values or []]
        return field.not_supported(path, bad_value(err.value), shown)
    if code == "TooLong":
        return field.too_long(path, err.valid)
    if code in ("MaxItems", "TooManyProperties"):
        return field.too_many(path, err.value, err.valid)
    value = "" if err.value is None else bad_value(err.value)
    if code == "InvalidType":
        return field.type_invalid(path, value, err.message)
    return field.invalid(path, value, err.message)
