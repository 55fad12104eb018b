"""One validation schema of a CRD (top-level or a version's), checked in kube's order.

kube's ``validateCustomResourceDefinitionValidation``: the root restrictions when a status
subresource is on, then structural-ness, then defaults (only for a structural schema), then
the keyword rules, then the CEL rules (only for a schema whose structure and defaults are
sound; see ``validation_cel``).  The reason kube could not even read the schema as
structural is shown only when nothing else is wrong.
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions import validation_gojson as gojson
from platform_api.apiextensions import validation_schemautil as util
from platform_api.apiextensions.schema.defaulting import default_errors
from platform_api.apiextensions.schema.structural import structural_errors
from platform_api.apiextensions.validation_cel import cel_errors, default_rules
from platform_api.apiextensions.validation_openapi import Walk, schema_errors
from platform_api.apiextensions.validation_options import Options
from platform_api.validation import field
from platform_api.validation.field import FieldError

Obj = dict[str, Any]
# JSONSchemaProps fields kube allows at the root with a status subresource, in its order.
_ROOT_WITH_STATUS = [
    "Description",
    "Type",
    "Format",
    "Title",
    "Maximum",
    "ExclusiveMaximum",
    "Minimum",
    "ExclusiveMinimum",
    "MaxLength",
    "MinLength",
    "Pattern",
    "MaxItems",
    "MinItems",
    "UniqueItems",
    "MultipleOf",
    "Required",
    "Items",
    "Properties",
    "ExternalDocs",
    "Example",
    "XPreserveUnknownFields",
    "XValidations",
]


def _root_with_status(schema: Obj, path: str) -> list[FieldError]:
    """Only keywords that survive extracting ``properties.status`` may sit at the root."""
    for key, go_name in gojson.GO_NAMES.items():
        value = schema.get(key)
        if value is None or value is False or value == "":
            continue  # Go's zero value
        if go_name == "Type":
            if value != "object":
                return [
                    field.invalid(
                        f"{path}.openAPIV3Schema.type",
                        value,
                        'only "object" is allowed as the type at the root of the schema if the '
                        "status subresource is enabled",
                    )
                ]
            continue
        if go_name not in _ROOT_WITH_STATUS:
            allowed = "[" + " ".join(_ROOT_WITH_STATUS) + "]"
            return [
                field.invalid(
                    f"{path}.openAPIV3Schema",
                    gojson.text(gojson.schema(schema)),
                    f"only {allowed} fields are allowed at the root of the schema if the status "
                    "subresource is enabled",
                )
            ]
    return []


def validate_validation(
    validation: Obj | None, status_enabled: bool, opts: Options, path: str
) -> list[FieldError]:
    """Errors of one ``CustomResourceValidation`` at ``path`` (``spec.validation`` or
    ``spec.versions[i].schema``)."""
    schema = None if validation is None else validation.get("openAPIV3Schema")
    if schema is None:
        return []
    errs = _root_with_status(schema, path) if status_enabled else []
    if schema.get("nullable"):
        errs.append(
            field.forbidden(
                f"{path}.openAPIV3Schema.nullable", "nullable cannot be true at the root"
            )
        )
    at = f"{path}.openAPIV3Schema"
    init_errs: list[FieldError] = []
    cel = False
    if opts.require_structural_schema:
        init = util.structural_init_error(schema)
        if init is not None:
            init_errs = [field.invalid(at, "", init)]
        elif (found := structural_errors(schema, at)) or (
            found := default_errors(
                schema, at, require_pruned=opts.require_pruned_defaults, cel_check=default_rules()
            )
        ):
            errs += found
        else:
            cel = True
    walk = Walk(
        allow_defaults=opts.allow_defaults,
        disallow_defaults_reason=opts.disallow_defaults_reason,
        require_valid_property_type=opts.require_valid_property_type,
        require_atomic_set_type=opts.require_atomic_set_type,
        require_map_list_keys_map_set_validation=opts.require_map_list_keys_map_set_validation,
    )
    found = schema_errors(schema, at, walk, True)
    errs += found
    if cel:
        errs += cel_errors(schema, at, found, opts.suppress_per_expression_cost)
    if not errs:
        errs = init_errs
    return errs
