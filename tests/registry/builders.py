"""Webhook configurations for the admissionregistration tests, and their strategies."""

from __future__ import annotations

import copy
from typing import Any

from platform_api.registry.defaults import apply_defaults
from platform_api.registry.strategy import Strategy, strategy_for
from platform_api.scheme.catalog import builtin_scheme
from platform_api.validation.field import FieldError

GROUP = "admissionregistration.platform.io"
MUTATING = "MutatingWebhookConfiguration"
VALIDATING = "ValidatingWebhookConfiguration"
Obj = dict[str, Any]


def hook(**fields: Any) -> Obj:
    """A valid webhook; a field given as None is left out."""
    out: Obj = {
        "name": "a.example.com",
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": "https://example.com/hook"},
    }
    out.update(fields)
    return {k: v for k, v in out.items() if v is not None}


def config(kind: str, *hooks: Obj, name: str = "cfg") -> Obj:
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": list(hooks),
    }


def strategy(kind: str) -> Strategy:
    rt = builtin_scheme().by_kind(GROUP, "v1", kind)
    assert rt is not None
    return strategy_for(rt)


def created(obj: Obj) -> Obj:
    """``obj`` defaulted and prepared as a create stores it."""
    obj = copy.deepcopy(obj)
    apply_defaults(GROUP, obj["kind"], obj)
    strategy(obj["kind"]).prepare_for_create(obj)
    obj["metadata"]["resourceVersion"] = "1"
    return obj


def create_errors(obj: Obj) -> list[str]:
    obj = copy.deepcopy(obj)
    apply_defaults(GROUP, obj["kind"], obj)
    return [str(e) for e in strategy(obj["kind"]).validate(obj)]


def update_errors(new: Obj, old: Obj) -> list[FieldError]:
    new = copy.deepcopy(new)
    apply_defaults(GROUP, new["kind"], new)
    return strategy(new["kind"]).validate_update(new, old)


POLICY = "ValidatingAdmissionPolicy"
BINDING = "ValidatingAdmissionPolicyBinding"
RULE: Obj = {
    "apiGroups": ["apps"],
    "apiVersions": ["v1"],
    "operations": ["CREATE"],
    "resources": ["deployments"],
}


def policy(name: str = "p", **spec: Any) -> Obj:
    """A valid policy; a spec field given as None is left out."""
    fields: Obj = {
        "matchConstraints": {"resourceRules": [copy.deepcopy(RULE)]},
        "validations": [{"expression": "true"}],
    }
    fields.update(spec)
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": POLICY,
        "metadata": {"name": name},
        "spec": {k: v for k, v in fields.items() if v is not None},
    }


def binding(name: str = "b", **spec: Any) -> Obj:
    """A valid binding; a spec field given as None is left out."""
    fields: Obj = {"policyName": "p", "validationActions": ["Deny"]}
    fields.update(spec)
    return {
        "apiVersion": f"{GROUP}/v1",
        "kind": BINDING,
        "metadata": {"name": name},
        "spec": {k: v for k, v in fields.items() if v is not None},
    }
