"""The strategy of a custom resource version: kube's ``customResourceStrategy``.

Custom resources are unstructured: a body is shaped by the CRD's structural schema
(metadata coerced, unknown fields pruned, defaults applied) rather than decoded into
a type, and validated against the schema, the scale paths and the CEL rules inside
the store's compare-and-swap loop, in kube's order.  One strategy serves one version
of one CRD; it is built, and its schema and rules compiled, when the CRD is installed.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from platform_api import errors
from platform_api.apiextensions import crd as crds
from platform_api.apiextensions.scale import scale_errors
from platform_api.apiextensions.schema.celrules import CompiledRules, compile_schema
from platform_api.apiextensions.schema.compiled import CompiledSchema, DecodeError
from platform_api.codec import Duplicates
from platform_api.codec.bounds import whole_floats_to_ints
from platform_api.fieldselectors import FieldGetter, field_getters
from platform_api.jsonpath import parse, sprint
from platform_api.registry.strategy import GenericStrategy
from platform_api.scheme import gonames
from platform_api.scheme.decoding import Decoded
from platform_api.scheme.types import ResourceType
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.objectmeta import validate_object_meta, validate_object_meta_update

Obj = dict[str, Any]
_TERMINATING = "create not allowed while custom resource definition is terminating"
# kube's hasBlockingErr: after these, CEL rules would only see an object it refuses anyway.
_BLOCKING = (
    field.NOT_SUPPORTED,
    field.REQUIRED,
    field.TOO_LONG,
    field.TOO_MANY,
    field.TYPE_INVALID,
)
_NOT_CHECKED = (
    "some validation rules were not checked because the object was invalid; correct the "
    "existing errors to complete validation"
)


def duplicate_paths(value: Any, dups: Duplicates, path: str = "") -> list[str]:
    """Paths of the keys a parsed body held twice, as kube's strict decoder names them."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, _ in dups.get(id(value), ()):
            found.append(f"{path}.{key}" if path else key)
        for key, child in value.items():
            found += duplicate_paths(child, dups, f"{path}.{key}" if path else key)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += duplicate_paths(item, dups, f"{path}[{index}]")
    return found


def _has_key(node: Any, key: str) -> bool:
    if isinstance(node, dict):
        return key in node or any(_has_key(v, key) for v in node.values())
    if isinstance(node, list):
        return any(_has_key(v, key) for v in node)
    return False


class CustomResourceStrategy(GenericStrategy):
    allow_unconditional_update = False
    status_writes_metadata = False  # kube's custom resource status strategy copies the old

    def __init__(self, resource: ResourceType, crd: Obj) -> None:
        super().__init__(resource)
        self.version = resource.version
        schema = crds.schema_of(crd, resource.version) or {}
        self.compiled = CompiledSchema(schema, crd["spec"].get("preserveUnknownFields", False))
        self.rules: CompiledRules = compile_schema(schema, "")
        subresources = crds.subresources_of(crd, resource.version)
        self.scale: Obj | None = subresources.get("scale")
        # each version's specReplicasPath (None: no scale there), for the Scale's owners
        group = crd["spec"]["group"]
        self.replicas_paths: dict[str, str | None] = {
            f"{group}/{v['name']}": (crds.subresources_of(crd, v["name"]).get("scale") or {}).get(
                "specReplicasPath"
            )
            for v in crd["spec"].get("versions") or []
        }
        self.has_status_subresource = "status" in subresources
        self.terminating = crds.is_true(crd, crds.TERMINATING)
        self.has_defaults = _has_key(schema, "default")
        # Objects written before this schema may hold what it prunes or defaults: they are
        # fixed up when read; newer ones were written through it already.
        self.schema_revision = int(crd["metadata"].get("resourceVersion") or 0)
        fields = crds.version_of(crd, resource.version).get("selectableFields") or []
        self._selectable = [str(f["jsonPath"]) for f in fields]

    # -- decoding -----------------------------------------------------------------------

    def decode(
        self, raw: Obj, duplicates: Duplicates, keep_nulls: bool = False, defaults: bool = True
    ) -> Decoded:
        """A body as stored: metadata coerced, unknown fields pruned, defaults set unless
        not ``defaults`` (and, but for an applied configuration, nulls the schema does not
        allow dropped)."""
        dups = duplicate_paths(raw, duplicates) if duplicates else []
        try:
            unknown = self.compiled.decode(raw, strict=True, keep_nulls=keep_nulls)
        except DecodeError as e:
            raise gonames.DecodeError(str(e)) from None
        if defaults:
            self.compiled.default(raw)
        return Decoded(raw, unknown, dups)

    def default_on_read(self, obj: Obj) -> Obj | None:
        """An object read from storage as this schema shapes it, or None when it already
        is (it was written through this schema)."""
        version = (obj.get("metadata") or {}).get("resourceVersion") or "0"
        if not version.isdigit() or int(version) >= self.schema_revision:
            return None
        fixed = copy.deepcopy(obj)
        try:
            self.compiled.decode(fixed, from_storage=True)
        except DecodeError:
            return None  # served as stored, as kube serves what it cannot coerce
        self.compiled.default(fixed)
        return fixed if fixed != obj else None

    def mutated(self, obj: Obj) -> Obj:
        """An object a mutating webhook or policy changed, as kube's defaulter leaves it:
        the nulls the schema does not allow dropped and its defaults set (a field set to
        null gets its default back).  As it was when its metadata does not coerce:
        validation says why."""
        fixed = copy.deepcopy(obj)
        try:
            self.compiled.decode(fixed)
        except DecodeError:
            return obj
        self.compiled.default(fixed)
        return fixed

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

    def _with_rules(self, errs: list[FieldError], obj: Obj, old: Obj | None) -> list[FieldError]:
        """The CEL rules' errors after the others, unless those already refuse the object."""
        if self.rules.validator is None:
            return errs
        if any(e.type in _BLOCKING for e in errs):
            return [*errs, field.FieldError(field.INVALID, "<nil>", None, _NOT_CHECKED)]
        found, _ = self.rules.validate(obj, old)
        return errs + found

    # kube's validator stops at a wrong kind or apiVersion; the CEL rules run all the same
    def validate(self, obj: Obj) -> list[FieldError]:
        errs = self._type_meta_errors(obj)
        if not errs:
            rt = self.resource
            errs = validate_object_meta(obj["metadata"], rt.namespaced, "subdomain")
            errs += self.compiled.validate(obj)
            errs += scale_errors(obj, self.scale)
        return self._with_rules(errs, obj, None)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self._type_meta_errors(new)
        if not errs:
            errs = validate_object_meta_update(new["metadata"], old["metadata"])
            errs += self.compiled.validate_update(new, old)
            errs += scale_errors(new, self.scale)
        return self._with_rules(errs, new, old)

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self._type_meta_errors(new)
        if not errs:
            errs = validate_object_meta_update(new["metadata"], old["metadata"])
            errs += self.compiled.validate_status_update(new, old)
            errs += scale_errors(new, self.scale, spec=False)
        return self._with_rules(errs, new, old)

    def canonicalize(self, obj: Obj) -> None:
        """Keys sorted at every level: kube's custom resources are Go maps, written sorted
        (an orjson round trip sorts faster than a walk in Python).  A whole float (``3.0``
        in a JSON body) was a float64 to validation and the CEL rules (which refuse it for
        an integer), and is written as Go writes it, ``3``: an int from here on."""
        sorted_obj = orjson.loads(orjson.dumps(obj, option=orjson.OPT_SORT_KEYS))
        whole_floats_to_ints(sorted_obj)
        obj.clear()
        obj.update(sorted_obj)

    def field_getters(self) -> dict[str, FieldGetter]:
        getters = field_getters(self.resource.group, self.resource.plural)
        for path in self._selectable:
            getters[path.lstrip(".")] = _selectable(path)
        return getters


def _non_metadata(obj: Obj) -> Obj:
    return {k: v for k, v in obj.items() if k != "metadata"}


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
