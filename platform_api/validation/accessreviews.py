"""kube's validation of access reviews (pkg/apis/authorization/validation), and the
``evaluationError`` its REST adds for selectors it could not read.

kube prints the internal types' values in its messages: the non-resource attributes as
``{"Path":...,"Verb":...}`` (those Go fields have no JSON names), a missing one as null.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from platform_api.codec.goshape import STORED, shaper
from platform_api.fieldselectors import parse_field_selector
from platform_api.gotext import go_escaped
from platform_api.selectors import SelectorError, parse_label_selector
from platform_api.validation import field
from platform_api.validation.field import FieldError, GoText
from platform_api.validation.labelselector import validate_label_requirement

Obj = dict[str, Any]
_EXACTLY_ONE = "exactly one of nonResourceAttributes or resourceAttributes must be specified"
_RESOURCE = "spec.resourceAttributes"


def _non_resource(attrs: Obj | None) -> Obj | None:
    if attrs is None:
        return None
    return {"Path": attrs.get("path", ""), "Verb": attrs.get("verb", "")}


def validate_spec(spec: Obj, subject: bool) -> list[FieldError]:
    """``Validate(Self)SubjectAccessReviewSpec``: one kind of attributes, a subject
    (``subject``: not for a self review), well-formed selector attributes."""
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    errs = []
    if resource is not None and non_resource is not None:
        detail = "cannot be specified in combination with resourceAttributes"
        errs.append(
            field.invalid("spec.nonResourceAttributes", _non_resource(non_resource), detail)
        )
    if resource is None and non_resource is None:
        errs.append(field.invalid(_RESOURCE, None, _EXACTLY_ONE))
    if subject and not spec.get("user") and not spec.get("groups"):
        detail = "at least one of user or group must be specified"
        errs.append(field.invalid("spec.user", spec.get("user") or "", detail))
    if isinstance(resource, dict):
        errs += _selector_attributes(resource.get("fieldSelector"), "fieldSelector")
        errs += _selector_attributes(resource.get("labelSelector"), "labelSelector")
    return errs


def validate_metadata(meta: Obj, local: bool) -> list[FieldError]:
    """A review's metadata must be empty but for its managedFields (and, for a local
    review, its namespace)."""
    rest = {k: v for k, v in meta.items() if k != "managedFields" and v not in (None, "", {}, [])}
    if local:
        rest.pop("namespace", None)
    if not rest:
        return []
    # kube marshals the ObjectMeta struct: its fields (and a managedFields entry's) in
    # Go's order, map keys sorted
    shown = copy.deepcopy(meta)
    shaper("k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta")(shown, STORED)
    detail = "must be empty except for namespace" if local else "must be empty"
    return [field.invalid("metadata", GoText(go_escaped(orjson.dumps(shown)).decode()), detail)]


def validate_local(spec: Obj, namespace: str) -> list[FieldError]:
    """What a LocalSubjectAccessReview adds: the resource's namespace is the review's, and
    no non-resource attributes."""
    errs = []
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if isinstance(resource, dict) and resource.get("namespace", "") != namespace:
        detail = "must match metadata.namespace"
        errs.append(field.invalid(f"{_RESOURCE}.namespace", resource.get("namespace", ""), detail))
    if non_resource is not None:
        detail = "disallowed on this kind of request"
        errs.append(
            field.invalid("spec.nonResourceAttributes", _non_resource(non_resource), detail)
        )
    return errs


def _selector_attributes(selector: Any, name: str) -> list[FieldError]:
    if not isinstance(selector, dict):
        return []
    at = f"{_RESOURCE}.{name}"
    raw, requirements = selector.get("rawSelector") or "", selector.get("requirements") or []
    errs = []
    if raw and requirements:
        errs.append(
            field.invalid(
                f"{at}.rawSelector", raw, "may not specified at the same time as requirements"
            )
        )
    if not raw and not requirements:
        errs.append(
            field.required(
                f"{at}.requirements",
                f"when {at} is specified, requirements or rawSelector is required",
            )
        )
    for i, req in enumerate(requirements):
        if name == "labelSelector":
            errs += validate_label_requirement(
                req, f"{at}.requirements[{i}]", allow_unknown_operator=True
            )
        else:
            errs += _field_requirement(req, f"{at}.requirements[{i}]")
    return errs


def _field_requirement(req: Obj, at: str) -> list[FieldError]:
    """``ValidateFieldSelectorRequirement``, unknown operators allowed."""
    errs = [] if req.get("key") else [field.required(f"{at}.key", "must be specified")]
    op, values = req.get("operator", ""), req.get("values") or []
    if op in ("In", "NotIn") and not values:
        errs.append(
            field.required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'")
        )
    elif op in ("Exists", "DoesNotExist") and values:
        detail = "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        errs.append(field.forbidden(f"{at}.values", detail))
    return errs


def evaluation_error(resource: Obj | None) -> str:
    """kube's ``BuildEvaluationError`` for the selectors: each one it could not read
    whole is ignored (in part, when some requirements were usable)."""
    if not isinstance(resource, dict):
        return ""
    problems = []
    for name, usable in (("fieldSelector", _field_usable), ("labelSelector", _label_usable)):
        selector = resource.get(name)
        if not isinstance(selector, dict):
            continue
        some, failed = usable(selector)
        if failed:
            how = "partially ignored" if some else "ignored"
            problems.append(f"{_RESOURCE}.{name} {how} due to parse error")
    return "; ".join(problems)


def _label_usable(selector: Obj) -> tuple[bool, bool]:
    """(some requirement is usable, some failed) of a label selector's attributes."""
    requirements = selector.get("requirements") or []
    if requirements:
        # kube's labels.NewRequirement takes what its validation takes
        ok = [not validate_label_requirement(r, "") for r in requirements]
        return any(ok), not all(ok)
    raw = selector.get("rawSelector") or ""
    try:
        parse_label_selector(raw)
    except SelectorError:
        return False, True
    return True, False


def _field_usable(selector: Obj) -> tuple[bool, bool]:
    requirements = selector.get("requirements") or []
    if requirements:
        ok = [
            r.get("operator") in ("In", "NotIn") and len(r.get("values") or []) == 1
            for r in requirements
        ]
        return any(ok), not all(ok)
    try:
        parse_field_selector(selector.get("rawSelector") or "")
    except SelectorError:
        return False, True
    return True, False
