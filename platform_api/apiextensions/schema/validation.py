"""Value validation of custom resources against their CRD schema, as kube reports it.

``SchemaValidator`` is apiextensions-apiserver's ``NewSchemaValidator`` +
``ValidateCustomResource(Update)``: kube-openapi's checks (``openapi_check.py``) rendered as
the field errors of kube's 422, e.g. ``spec.replicas: Invalid value: "string": spec.replicas
in body must be of type integer: "string"``. Updates ratchet (CRDValidationRatcheting, on
in v1.36): an error inside a value equal to the old object's is dropped.

``validate_create``/``validate_update`` add what the custom resource strategy checks after
it: embedded resources (``objectmeta.validate``) and list-type sets and maps. TypeMeta,
the root ObjectMeta, scale paths and CEL rules are the registry's.
"""

from __future__ import annotations

from typing import Any

from platform_api.apiextensions.schema import listtype, objectmeta
from platform_api.apiextensions.schema.node import Node, Obj
from platform_api.apiextensions.schema.oerrors import to_field_errors
from platform_api.apiextensions.schema.openapi import VNode
from platform_api.apiextensions.schema.openapi_check import NO_OLD, validate
from platform_api.apiextensions.schema.openapi_fast import fast_check
from platform_api.validation.field import FieldError


class SchemaValidator:
    """kube-openapi validation of values against one (sub)schema."""

    def __init__(self, schema: Obj | None, for_defaults: bool = False) -> None:
        self.root = VNode(schema or {}, for_defaults)
        self.valid = fast_check(self.root)

    def validate(self, value: Any, fld_path: str | None = None) -> list[FieldError]:
        """``ValidateCustomResource``; ``fld_path`` prefixes the paths (None: kube's nil)."""
        if self.valid(value):
            return []
        errs, _ = validate(self.root, value, "")
        return to_field_errors(errs, fld_path) if errs else []

    def validate_update(
        self, value: Any, old: Any, fld_path: str | None = None
    ) -> list[FieldError]:
        """``ValidateCustomResourceUpdate`` with ratcheting against ``old``."""
        if self.valid(value):
            return []
        errs, _ = validate(self.root, value, "", old if old is not None else NO_OLD)
        return to_field_errors(errs, fld_path) if errs else []


def validate_create(obj: Obj, structural: Node, validator: SchemaValidator) -> list[FieldError]:
    """The schema part of the custom resource strategy's ``Validate``, in kube's order."""
    errs = validator.validate(obj)
    errs += objectmeta.validate(obj, structural)
    errs += listtype.validate_lists(obj, structural)
    return errs


def validate_update(
    obj: Obj, old: Obj, structural: Node, validator: SchemaValidator
) -> list[FieldError]:
    """The schema part of ``ValidateUpdate``: ratcheted values, embedded metadata, lists.

    List-type violations are reported only if the old object had none (kube's ratchet).
    """
    errs = validator.validate_update(obj, old)
    errs += objectmeta.validate(obj, structural)
    if not listtype.validate_lists(old, structural):
        errs += listtype.validate_lists(obj, structural)
    return errs


def validate_status_update(
    obj: Obj, old: Obj, structural: Node, status_validator: SchemaValidator | None
) -> list[FieldError]:
    """The schema part of ``ValidateStatusUpdate``: ``status`` against its own schema."""
    errs: list[FieldError] = []
    if status_validator is not None and "status" in obj:
        errs += status_validator.validate_update(obj["status"], old.get("status"), "status")
    errs += objectmeta.validate(obj, structural)
    if not listtype.validate_lists(old, structural):
        errs += listtype.validate_lists(obj, structural)
    return errs
