"""How strict CRD validation is: strict on create, as lenient as the old object on update.

An update never fails a rule the stored object already broke (kube's ``validationOptions``
derived from the old object), so CRDs written by older servers stay editable: a
non-structural schema, a non-atomic set, an unknown conversion review version, an
invalid CA bundle, too many selectable fields all ratchet.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from platform_api.apiextensions import crd as crds
from platform_api.apiextensions import validation_internal as internal
from platform_api.apiextensions import validation_schemautil as util
from platform_api.apiextensions import validation_webhook as webhook
from platform_api.apiextensions.schema.defaulting import default_errors
from platform_api.apiextensions.schema.structural import structural_errors

Obj = dict[str, Any]
MAX_SELECTABLE_FIELDS = 8
UNPRUNED_DEFAULT = "must not have unknown fields"


@dataclass(frozen=True)
class Options:
    """kube's ``validationOptions`` (less the CEL environment, chosen by the rules' compiler)."""

    allow_defaults: bool = True
    disallow_defaults_reason: str = ""
    require_recognized_review_version: bool = True
    require_immutable_names: bool = False
    require_openapi_schema: bool = True
    require_valid_property_type: bool = True
    require_structural_schema: bool = True
    require_pruned_defaults: bool = True
    require_atomic_set_type: bool = True
    require_map_list_keys_map_set_validation: bool = True
    versions_with_unchanged_schemas: frozenset[str] = frozenset()
    suppress_per_expression_cost: bool = False
    allow_invalid_ca_bundle: bool = True
    # "" stands for the top-level selectable fields, else a version's name.
    allow_too_many_selectable_fields: frozenset[str] = field(default_factory=frozenset)


CREATE = Options()


def is_non_structural(schema: Obj | None) -> bool:
    return schema is not None and bool(structural_errors(schema, ""))


def has_unpruned_defaults(schema: Obj | None) -> bool:
    """Defaults that pruning would change (kube compares the schema before and after)."""
    if schema is None or not util.has_defaults(schema) or is_non_structural(schema):
        return False
    return any(e.detail == UNPRUNED_DEFAULT for e in default_errors(schema, ""))


def _all_versions_have_schema(spec: Obj) -> bool:
    if internal.openapi_schema(spec.get("validation")) is not None:
        return True
    versions = spec.get("versions") or []
    return all(internal.openapi_schema(v.get("schema")) is not None for v in versions)


def _validation_for_version(spec: Obj, name: str) -> tuple[bool, Obj | None]:
    """``GetSchemaForVersion``: (found, the CustomResourceValidation)."""
    versions = spec.get("versions") or []
    if not internal.has_per_version(versions, "schema"):
        return True, spec.get("validation")
    for v in versions:
        if v.get("name") == name:
            return True, v.get("schema")
    return False, None


def _unchanged_schemas(new: Obj, old: Obj) -> frozenset[str]:
    unchanged = set()
    for v in new.get("versions") or []:
        found_new, new_schema = _validation_for_version(new, v.get("name", ""))
        found_old, old_schema = _validation_for_version(old, v.get("name", ""))
        if found_new and found_old and internal.semantic_equal(new_schema, old_schema):
            unchanged.add(v.get("name", ""))
    return frozenset(unchanged)


def _allow_invalid_ca_bundle(old_crd: Obj, old: Obj) -> bool:
    if not crds.is_true(old_crd, crds.ESTABLISHED):
        return True
    config = (old.get("conversion") or {}).get("webhookClientConfig") or {}
    if not config.get("caBundle"):
        return False
    return bool(webhook.validate_ca_bundle("caBundle", config["caBundle"]))


def _too_many_allowed(new: Obj, old: Obj) -> frozenset[str]:
    allowed = set()
    old_fields = old.get("selectableFields") or []
    if len(old_fields) > MAX_SELECTABLE_FIELDS and internal.semantic_equal(
        new.get("selectableFields"), old_fields
    ):
        allowed.add("")
    old_versions = {v.get("name"): v for v in old.get("versions") or []}
    for v in new.get("versions") or []:
        before = old_versions.get(v.get("name"))
        if before is None:
            continue
        fields = before.get("selectableFields") or []
        if len(fields) > MAX_SELECTABLE_FIELDS and internal.semantic_equal(
            v.get("selectableFields"), fields
        ):
            allowed.add(v.get("name", ""))
    return frozenset(allowed)


def update_options(new: Obj, old: Obj, old_crd: Obj) -> Options:
    """kube's options for an update, from the internal specs and the old object."""
    schemas = internal.spec_schemas(old)
    conversion = old.get("conversion")
    return Options(
        require_recognized_review_version=conversion is None
        or webhook.has_valid_review_version_or_empty(conversion.get("conversionReviewVersions")),
        require_immutable_names=crds.is_true(old_crd, crds.ESTABLISHED),
        require_openapi_schema=_all_versions_have_schema(old),
        require_valid_property_type=not any(util.has_invalid_types(s) for s in schemas),
        require_structural_schema=not any(is_non_structural(s) for s in schemas),
        require_pruned_defaults=not any(has_unpruned_defaults(s) for s in schemas),
        require_atomic_set_type=not any(util.has_non_atomic_set_type(s) for s in schemas),
        require_map_list_keys_map_set_validation=not any(
            util.has_invalid_map_list_keys_map_set(s) for s in schemas
        ),
        versions_with_unchanged_schemas=_unchanged_schemas(new, old),
        allow_invalid_ca_bundle=_allow_invalid_ca_bundle(old_crd, old),
        allow_too_many_selectable_fields=_too_many_allowed(new, old),
    )
