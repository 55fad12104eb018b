"""Table columns of the admission registration kinds (kube's internalversion printers):
webhook configurations, admission policies and their bindings."""

from __future__ import annotations

import functools
from typing import Any

from platform_api.endpoints.printers import AGE, NAME, age
from platform_api.endpoints.tables import COLUMNS, Column, Printer

GROUP = "admissionregistration.platform.io"
Obj = dict[str, Any]

# kube's printers (pkg/printers/internalversion): the number of webhooks.
_WEBHOOKS = Column(
    "Webhooks",
    "integer",
    "",
    "Webhooks indicates the number of webhooks registered in this configuration",
)


def _cells(obj: Obj) -> list[Any]:
    meta = obj.get("metadata") or {}
    return [
        meta.get("name", ""),
        len(obj.get("webhooks") or []),
        age(meta.get("creationTimestamp")),
    ]


for _plural in ("mutatingwebhookconfigurations", "validatingwebhookconfigurations"):
    COLUMNS[(GROUP, _plural)] = Printer((NAME, _WEBHOOKS, AGE), _cells)


_VALIDATIONS = Column(
    "Validations",
    "integer",
    "",
    "Validations indicates the number of validation rules defined in this configuration",
)
_MUTATIONS = Column(
    "Mutations",
    "integer",
    "",
    "Mutation indicates the number of mutations rules defined in this configuration",
)
_PARAM_KIND = Column(
    "ParamKind",
    "string",
    "",
    "ParamKind specifies the kind of resources used to parameterize this policy",
)
_POLICY_NAME = Column(
    "PolicyName",
    "string",
    "",
    "PolicyName indicates the policy definition which the policy binding binded to",
)
_PARAM_REF = Column(
    "ParamRef",
    "string",
    "",
    "ParamRef indicates the param resource which sets the configuration param",
)
UNSET = "<unset>"


def _policy_cells(obj: Obj, counted: str) -> list[Any]:
    """A policy's row: the number of its ``counted`` items (validations or mutations)."""
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    kind = spec.get("paramKind")
    param_kind = f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}" if kind else UNSET
    count = len(spec.get(counted) or [])
    return [meta.get("name", ""), count, param_kind, age(meta.get("creationTimestamp"))]


def selector_string(selector: Obj) -> str:
    """A LabelSelector as its generated Go ``String()`` prints it (kube's PARAMREF cell)."""
    labels = selector.get("matchLabels") or {}
    pairs = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    requirements = "".join(
        f"LabelSelectorRequirement{{Key:{r.get('key', '')},Operator:{r.get('operator', '')},"
        f"Values:[{' '.join(r.get('values') or [])}],}},"
        for r in selector.get("matchExpressions") or []
    )
    return (
        f"&LabelSelector{{MatchLabels:map[string]string{{{pairs}}},"
        f"MatchExpressions:[]LabelSelectorRequirement{{{requirements}}},}}"
    )


def _param_ref(ref: Obj | None) -> str:
    if not ref:
        return UNSET
    if ref.get("name"):
        # a name without a namespace may be cluster-scoped or in any namespace: kube prints */
        return f"{ref.get('namespace') or '*'}/{ref['name']}"
    if ref.get("selector") is not None:
        return selector_string(ref["selector"])
    return UNSET


def _binding_cells(obj: Obj) -> list[Any]:
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    return [
        meta.get("name", ""),
        spec.get("policyName", ""),
        _param_ref(spec.get("paramRef")),
        age(meta.get("creationTimestamp")),
    ]


COLUMNS[(GROUP, "validatingadmissionpolicies")] = Printer(
    (NAME, _VALIDATIONS, _PARAM_KIND, AGE), functools.partial(_policy_cells, counted="validations")
)
COLUMNS[(GROUP, "mutatingadmissionpolicies")] = Printer(
    (NAME, _MUTATIONS, _PARAM_KIND, AGE), functools.partial(_policy_cells, counted="mutations")
)
for _plural in ("validatingadmissionpolicybindings", "mutatingadmissionpolicybindings"):
    COLUMNS[(GROUP, _plural)] = Printer((NAME, _POLICY_NAME, _PARAM_REF, AGE), _binding_cells)
