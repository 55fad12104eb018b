"""Configuration files as kube-apiserver decodes them (its ``--*-config-file`` flags):
YAML or JSON, one kind at known versions, strictly.

kube reads these with its scheme's strict decoder, so a misspelt field stops the start
instead of being ignored; the errors here are that decoder's (``strict decoding error:
unknown field "x"``) and encoding/json's for a field of the wrong type.  A
``ConfigKind`` names the kind, its versions and the fields each object of it may hold;
the loaders read the document's parts through it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from platform_api.gotext import json_kind, open_error, typemeta_problem

_GO_TYPES = {str: "string", list: "array", dict: "object", bool: "bool", int: "int"}


class DecodeError(ValueError):
    """The file does not decode: kube's words, without the loader's prefix."""


class ReadError(OSError):
    """The file cannot be read: Go's ``open p: ...`` text."""


def read_file(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise ReadError(open_error(path, e)) from None


class ConfigKind:
    """One configuration kind.  ``fields`` maps an object's key in the document ("" for
    the top) to the keys it may hold."""

    def __init__(self, kind: str, api_versions: tuple[str, ...], fields: Mapping[str, set[str]]):
        self.kind = kind
        self.api_versions = api_versions
        self.fields = fields

    def document(
        self, data: bytes, empty: dict[str, Any] | None = None, into: bool = False
    ) -> dict[str, Any]:
        """The decoded document, checked for its kind, version and unknown fields;
        ``empty``: what an empty file stands for (None: it is refused).  ``into``: decoded
        as kube's ``DecodeInto`` decodes, which takes a left-out kind or version to be
        the kind's own (the tracing configuration)."""
        try:
            doc = yaml.safe_load(data) if data.strip() else empty
        except yaml.YAMLError as e:
            raise DecodeError(f"error converting YAML to JSON: {e}") from None
        if into and not isinstance(doc, dict):
            raise DecodeError(typemeta_problem(doc))
        if not isinstance(doc, dict) or not (doc.get("kind") or into):
            raise DecodeError("Object 'Kind' is missing")
        kind, version = doc.get("kind") or self.kind, doc.get("apiVersion")
        if (version not in self.api_versions and not (into and not version)) or kind != self.kind:
            raise DecodeError(f'no kind "{kind}" is registered for version "{version}"')
        unknown = self.unknown_fields(doc, "", "")
        if unknown:
            listed = ", ".join(f'unknown field "{u}"' for u in unknown)
            raise DecodeError(f"strict decoding error: {listed}")
        return doc

    def unknown_fields(self, value: Any, key: str, at: str) -> list[str]:
        """The paths of fields no object of the kind has, in the document's order."""
        if isinstance(value, list):
            return [
                u
                for i, item in enumerate(value)
                for u in self.unknown_fields(item, key, f"{at}[{i}]")
            ]
        if not isinstance(value, dict) or key not in self.fields:
            return []
        found = []
        for name, item in value.items():
            path = f"{at}.{name}" if at else str(name)
            if name not in self.fields[key]:
                found.append(path)
            else:
                found += self.unknown_fields(item, str(name), path)
        return found

    def typed(self, value: Any, at: str, kind: type, default: Any) -> Any:
        """``value`` if it is of the JSON type ``kind`` (``default`` when absent)."""
        if value is None:
            return default
        if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
            raise DecodeError(
                f"json: cannot unmarshal {json_kind(value)} into Go struct field "
                f"{self.kind}.{at} of type {_GO_TYPES[kind]}"
            )
        return value

    def int32(self, value: Any, at: str) -> int | None:
        """``value`` as Go decodes it into an ``*int32`` (None when absent)."""
        if value is None:
            return None
        fits = isinstance(value, int | float) and not isinstance(value, bool)
        if not fits:
            kind = json_kind(value)
        elif value != int(value) or not -(2**31) <= value < 2**31:
            kind = f"number {value}"
        else:
            return int(value)
        raise DecodeError(
            f"json: cannot unmarshal {kind} into Go struct field {self.kind}.{at} of type int32"
        )

    def field(self, block: dict[str, Any], key: str, at: str, kind: type, default: Any) -> Any:
        return self.typed(block.get(key), f"{at}.{key}" if at else key, kind, default)
