"""The strategy of a custom resource version: kube's ``customResourceStrategy``.

Custom resources are unstructured: a body is shaped by the CRD's structural schema
(metadata coerced, unknown fields pruned, defaults applied) rather than decoded into
a type, and validated against the schema and its CEL rules inside the store's
compare-and-swap loop.  One strategy serves one version of one CRD; it is built when
the CRD is installed and compiled once.
"""

from __future__ import annotations

from typing import Any

from platform_api import errors
from platform_api.apiextensions import crd as crds
from platform_api.codec import Duplicates
from platform_api.jsonpath import parse, sprint
from platform_api.registry.strategy import GenericStrategy
from platform_api.scheme.decoding import Decoded
from platform_api.scheme.types import ResourceType
from platform_api.selectors import FieldGetter, field_getters
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import validate_object_meta, validate_object_meta_update

Obj = dict[str, Any]
_TERMINATING = "create not allowed while custom resource definition is terminating"


def _non_metadata(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k != "metadata"}


def duplicate_paths(value: Any, dups: Duplicates, path: str = "") -> list[str]:
    """Paths of the keys a parsed body held twice, as kube's strict decoder names them."""
    found: list[str] = []
    if isinstance(value, dict):
        for key in dups.get(id(value), ()):
            found.append(f"{path}.{key}" if path else key)
        for key, child in value.items():
            found += duplicate_paths(child, dups, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += duplicate_paths(item, dups, f"{path}[{index}]")
    return found


class CustomResourceStrategy(GenericStrategy):
    allow_unconditional_update = False

    def __init__(self, resource: ResourceType, crd: Obj) -> None:
        super().__init__(resource)
        self.version = resource.version
        self.schema = crds.schema_of(crd, resource.version) or {}
        subresources = crds.subresources_of(crd, resource.version)
        self.scale: Obj | None = subresources.get("scale")
        self.has_status_subresource = "status" in subresources
        self.terminating = crds.is_true(crd, crds.TERMINATING)
        self.has_defaults = False
        self._selectable = [
            str(f["jsonPath"])
            for f in crds.version_of(crd, resource.version).get("selectableFields") or []
        ]

    # -- decoding -----------------------------------------------------------------------

    def decode(self, raw: Obj, duplicates: Duplicates) -> Decoded:
        """The body as stored: metadata coerced, unknown fields pruned, defaults set."""
        obj = raw
        return Decoded(obj, [], duplicate_paths(raw, duplicates))

    def default_on_read(self, obj: Obj) -> Obj | None:
        """Defaults added to an object read from storage, or None when none apply."""
        return None

    # -- writes -------------------------------------------------------------------------

    def prepare_for_create(self, obj: Obj) -> None:
        if self.terminating:
            rt = self.resource
            name = obj.get("metadata", {}).get("name", "")
            raise errors.forbidden(rt.plural, rt.group, name, _TERMINATING)
        if self.has_status_subresource:
            obj.pop("status", None)
        obj["metadata"]["generation"] = 1

    def prepare_for_update(self, new: Obj, old: Obj) -> None:
        if self.has_status_subresource:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        generation = old["metadata"].get("generation", 1)
        changed = _non_metadata(new) != _non_metadata(old)
        new["metadata"]["generation"] = generation + 1 if changed else generation

    def _type_meta_errors(self, obj: Obj) -> list[FieldError]:
        rt = self.resource
        errs = []
        if obj.get("kind") != rt.kind:
            errs.append(field.invalid("kind", obj.get("kind"), f"must be {rt.kind}"))
        if obj.get("apiVersion") != rt.api_version:
            errs.append(
                field.invalid("apiVersion", obj.get("apiVersion"), f"must be {rt.api_version}")
            )
        return errs

    def validate(self, obj: Obj) -> list[FieldError]:
        errs = self._type_meta_errors(obj)
        if errs:
            return errs
        return validate_object_meta(obj["metadata"], self.resource.namespaced, "subdomain")

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self._type_meta_errors(new)
        if errs:
            return errs
        return validate_object_meta_update(new["metadata"], old["metadata"])

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.validate_update(new, old)

    def field_getters(self) -> dict[str, FieldGetter]:
        getters = field_getters(self.resource.group, self.resource.plural)
        for path in self._selectable:
            getters[path.lstrip(".")] = _selectable(path)
        return getters


def _selectable(json_path: str) -> FieldGetter:
    """A selectable field's value as kube's field sets hold it (``fmt.Sprint``)."""
    path = parse("{" + json_path + "}", allow_missing_keys=True)

    def get(obj: Obj) -> str:
        results = path.find_results(obj)
        if not results or not results[0]:
            return ""
        if len(results) > 1 or len(results[0]) > 1:
            raise errors.bad_request("unexpectedly received more than one JSON path result")
        value = results[0][0]
        return "" if value is None else sprint(value)

    return get
