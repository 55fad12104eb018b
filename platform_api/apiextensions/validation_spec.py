"""A CRD's spec: group, scope, names, versions, and each version's parts.

kube's ``validateCustomResourceDefinitionSpec`` over the internal spec (see
``validation_internal``), in its order: group, scope, required schemas, versions, names,
then the top-level schema, subresources, columns, selectable fields and conversion.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from platform_api.apiextensions import validation_gojson as gojson
from platform_api.apiextensions import validation_internal as internal
from platform_api.apiextensions import validation_schemautil as util
from platform_api.apiextensions import validation_webhook as webhook
from platform_api.apiextensions.validation_options import MAX_SELECTABLE_FIELDS, Options
from platform_api.apiextensions.validation_schema import validate_validation
from platform_api.validation import field
from platform_api.validation.field import FieldError
from platform_api.validation.names import is_dns1035_label, is_dns1123_subdomain

Obj = dict[str, Any]
COLUMN_TYPES = ("boolean", "date", "integer", "number", "string")
COLUMN_FORMATS = ("byte", "date", "date-time", "double", "float", "int32", "int64", "password")


def _dns1035(path: str, value: str) -> list[FieldError]:
    errs = is_dns1035_label(value)
    return [field.invalid(path, value, ",".join(errs))] if errs else []


def validate_names(names: Obj, path: str) -> list[FieldError]:
    """``ValidateCustomResourceDefinitionNames`` (spec.names and status.acceptedNames)."""
    errs: list[FieldError] = []
    for key in ("plural", "singular"):
        if names.get(key):
            errs += _dns1035(f"{path}.{key}", names[key])
    for key in ("kind", "listKind"):
        value = names.get(key) or ""
        problems = is_dns1035_label(value.lower())
        if value and problems:
            detail = "may have mixed case, but should otherwise match: " + ",".join(problems)
            errs.append(field.invalid(f"{path}.{key}", value, detail))
    for i, short in enumerate(names.get("shortNames") or []):
        errs += _dns1035(f"{path}.shortNames[{i}]", short)
    if names.get("kind") and names.get("kind") == names.get("listKind"):
        errs.append(
            field.invalid(
                f"{path}.listKind", names["listKind"], "kind and listKind may not be the same"
            )
        )
    for i, category in enumerate(names.get("categories") or []):
        errs += _dns1035(f"{path}.categories[{i}]", category)
    return errs


def _simple_json_path(value: str, path: str) -> list[FieldError]:
    if not value:
        return [field.invalid(path, value, "must not be empty")]
    if value[0] != ".":
        return [field.invalid(path, value, "must be a simple json path starting with .")]
    return []


def validate_column(column: Obj, path: str) -> list[FieldError]:
    errs = []
    if not column.get("name"):
        errs.append(field.required(f"{path}.name"))
    kinds = ",".join(COLUMN_TYPES)
    if not column.get("type"):
        errs.append(field.required(f"{path}.type", f"must be one of {kinds}"))
    elif column["type"] not in COLUMN_TYPES:
        errs.append(field.invalid(f"{path}.type", column["type"], f"must be one of {kinds}"))
    if column.get("format") and column["format"] not in COLUMN_FORMATS:
        formats = ",".join(COLUMN_FORMATS)
        errs.append(field.invalid(f"{path}.format", column["format"], f"must be one of {formats}"))
    if not column.get("jsonPath"):
        errs.append(field.required(f"{path}.JSONPath"))
    else:
        errs += _simple_json_path(column["jsonPath"], f"{path}.JSONPath")
    return errs


def _scale_path(value: str, path: str, prefixes: tuple[str, ...], where: str) -> list[FieldError]:
    errs = _simple_json_path(value, path)
    if not errs and not value.startswith(prefixes):
        return [field.invalid(path, value, f"should be a json path under {where}")]
    return errs


def validate_subresources(subresources: Obj | None, path: str) -> list[FieldError]:
    scale = None if subresources is None else subresources.get("scale")
    if scale is None:
        return []
    errs = []
    for key, prefix in (("specReplicasPath", ".spec."), ("statusReplicasPath", ".status.")):
        at = f"{path}.scale.{key}"
        if not scale.get(key):
            errs.append(field.required(at))
        else:
            errs += _scale_path(scale[key], at, (prefix,), prefix[:-1])
    selector = scale.get("labelSelectorPath")
    if selector:
        errs += _scale_path(
            selector,
            f"{path}.scale.labelSelectorPath",
            (".spec.", ".status."),
            "either .spec or .status",
        )
    return errs


def validate_selectable_fields(
    fields: list[Obj], schema: Obj | None, path: str, opts: Options, version: str
) -> list[FieldError]:
    errs: list[FieldError] = []
    unique: set[str] = set()
    for i, selectable in enumerate(fields):
        at = f"{path}[{i}].jsonPath"
        json_path = selectable.get("jsonPath") or ""
        if not json_path:
            errs.append(field.required(at))
            continue
        try:
            steps, found = util.valid_field_path(json_path, schema, allow_arrays=False)
        except ValueError as e:
            errs.append(field.invalid(at, json_path, f"is an invalid path: {e}"))
            continue
        if steps and steps[0][0] == "metadata":
            errs.append(field.invalid(at, json_path, "must not point to fields in metadata"))
        if found is None or found.get("type") not in ("string", "boolean", "integer"):
            errs.append(
                field.invalid(
                    at,
                    json_path,
                    "must point to a field of type string, boolean or integer. Enum string fields "
                    "and strings with formats are allowed.",
                )
            )
        if str(steps) in unique:
            errs.append(field.duplicate(at, json_path))
        unique.add(str(steps))
    if len(unique) > MAX_SELECTABLE_FIELDS and version not in opts.allow_too_many_selectable_fields:
        errs.append(field.too_many(path, len(unique), MAX_SELECTABLE_FIELDS))
    return errs


def _selectable(
    fields: list[Obj] | None, validation: Obj | None, path: str, opts: Options, version: str | None
) -> list[FieldError]:
    """A version's (``version`` its name) or the top-level (None) selectable fields."""
    if not fields:
        return []
    schema = internal.openapi_schema(validation)
    if validation is None or (version is not None and schema is None):
        # sic: kube's texts
        where = (
            "`version.schema.openAPIV3Schema` is not"
            if version is not None
            else "validations.schema is"
        )
        return [
            field.invalid(f"{path}.selectableFields", "", f"may only be set when {where} included")
        ]
    errs = []
    init = util.structural_init_error(schema)
    if init is not None:
        errs.append(field.invalid(f"{path}.schema.openAPIV3Schema", "", init))
    return errs + validate_selectable_fields(
        fields, schema, f"{path}.selectableFields", opts, version or ""
    )


def deprecation_warning_problems(deprecated: bool, warning: str | None) -> list[str]:
    if not deprecated and warning is not None:
        return ["can only be set for deprecated versions"]
    if warning is None:
        return []
    problems = []
    if len(warning.encode()) > 256:
        problems.append("must be <= 256 characters long")
    if not warning:
        problems.append("must not be an empty string")
    for i, char in enumerate(warning):
        if not char.isprintable():
            index = len(warning[:i].encode())
            problems.append(
                "must only contain printable UTF-8 characters; non-printable character found "
                f"at index {index}"
            )
            break
    return problems


def _version(version: Obj, path: str, status_enabled: bool, opts: Options) -> list[FieldError]:
    warning = version.get("deprecationWarning")
    errs = [
        field.invalid(f"{path}.deprecationWarning", gojson.text(warning), problem)
        for problem in deprecation_warning_problems(bool(version.get("deprecated")), warning)
    ]
    if version.get("name") in opts.versions_with_unchanged_schemas:
        opts = replace(opts, suppress_per_expression_cost=True)
    errs += validate_validation(version.get("schema"), status_enabled, opts, f"{path}.schema")
    errs += validate_subresources(version.get("subresources"), f"{path}.subresources")
    for i, column in enumerate(version.get("additionalPrinterColumns") or []):
        errs += validate_column(column, f"{path}.additionalPrinterColumns[{i}]")
    errs += _selectable(
        version.get("selectableFields"), version.get("schema"), path, opts, version.get("name", "")
    )
    return errs


def _required_schemas(spec: Obj, opts: Options, path: str) -> list[FieldError]:
    if internal.openapi_schema(spec.get("validation")) is not None:
        return []
    errs = []
    for i, v in enumerate(spec.get("versions") or []):
        at = f"{path}.versions[{i}].schema.openAPIV3Schema"
        missing = internal.openapi_schema(v.get("schema")) is None
        if opts.require_openapi_schema and missing:
            errs.append(field.required(at))
        elif (
            not opts.require_openapi_schema
            and not spec["preserveUnknownFields"]
            and missing
            and v.get("served")
        ):
            errs.append(field.required(at, "because otherwise all fields are pruned"))
    return errs


def _versions(spec: Obj, opts: Options, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    versions = spec.get("versions") or []
    for i, v in enumerate(versions):
        errs += _dns1035(f"{path}.versions[{i}].name", v.get("name") or "")
        status = internal.has_status_enabled(internal.subresources_for_version(spec, v.get("name")))
        errs += _version(v, f"{path}.versions[{i}]", status, opts)
    listed = spec.get("versions")
    shown = gojson.text(None if listed is None else [gojson.version(v) for v in listed])
    names = [v.get("name") for v in versions]
    if len(set(names)) != len(names):
        errs.append(field.invalid(f"{path}.versions", shown, "must contain unique version names"))
    if sum(1 for v in versions if v.get("storage")) != 1:
        errs.append(
            field.invalid(
                f"{path}.versions", shown, "must have exactly one version marked as storage version"
            )
        )
    if spec.get("version"):
        errs += _dns1035(f"{path}.version", spec["version"])
    return errs


def _group_and_scope(spec: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    group = spec.get("group") or ""
    if not group:
        errs.append(field.required(f"{path}.group"))
    elif problems := is_dns1123_subdomain(group):
        errs.append(field.invalid(f"{path}.group", group, ",".join(problems)))
    elif "." not in group:
        errs.append(
            field.invalid(f"{path}.group", group, "should be a domain with at least one dot")
        )
    scope = spec.get("scope") or ""
    if not scope:
        errs.append(field.required(f"{path}.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        # validateEnumStrings: a plain string, quoted with %q
        errs.append(
            field.not_supported(f"{path}.scope", field.plain(scope), ["Cluster", "Namespaced"])
        )
    return errs


def _top_level(spec: Obj, opts: Options, path: str) -> list[FieldError]:
    """The top-level schema, subresources, columns and selectable fields."""
    top = opts
    if spec.get("version") in opts.versions_with_unchanged_schemas:
        top = replace(opts, suppress_per_expression_cost=True)
    status = internal.has_any_status_enabled(spec)
    errs = validate_validation(spec.get("validation"), status, top, f"{path}.validation")
    errs += validate_subresources(spec.get("subresources"), f"{path}.subresources")
    for i, column in enumerate(spec.get("additionalPrinterColumns") or []):
        errs += validate_column(column, f"{path}.additionalPrinterColumns[{i}]")
    errs += _selectable(spec.get("selectableFields"), spec.get("validation"), path, opts, None)
    return errs


def validate_spec(spec: Obj, opts: Options, path: str = "spec") -> list[FieldError]:
    """``validateCustomResourceDefinitionSpec`` of an internal spec."""
    errs = _group_and_scope(spec, path)
    preserve = spec["preserveUnknownFields"]
    if not preserve:
        opts = replace(opts, require_structural_schema=True)
    errs += _required_schemas(spec, opts, path)
    schemas = internal.spec_schemas(spec)
    if opts.allow_defaults and any(util.has_defaults(s) for s in schemas):
        opts = replace(opts, require_structural_schema=True)
        if preserve:
            errs.append(
                field.invalid(
                    f"{path}.preserveUnknownFields",
                    True,
                    "must be false in order to use defaults in the schema",
                )
            )
    if any(util.has_kubernetes_extensions(s) for s in schemas):
        opts = replace(opts, require_structural_schema=True)
    errs += _versions(spec, opts, path)
    names = spec.get("names") or {}
    for key in ("plural", "singular", "kind", "listKind"):
        if not names.get(key):
            errs.append(field.required(f"{path}.names.{key}"))
    errs += validate_names(names, f"{path}.names")
    errs += _top_level(spec, opts, path)
    conversion = spec.get("conversion")
    if conversion is not None and conversion.get("strategy") != "None" and preserve:
        errs.append(
            field.invalid(
                f"{path}.conversion.strategy",
                conversion.get("strategy") or "",
                "must be None if spec.preserveUnknownFields is true",
            )
        )
    errs += webhook.validate_conversion(
        conversion,
        opts.require_recognized_review_version,
        opts.allow_invalid_ca_bundle,
        f"{path}.conversion",
    )
    return errs
