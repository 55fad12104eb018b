"""The CEL side of a CRD schema's validation: rule compile and cost errors, rules on defaults.

kube compiles a node's ``x-kubernetes-validations`` only where that node and everything below
it have no schema error; the rule-shape errors are the keyword walk's, so only the compile and
cost errors are taken from the compiled rules.  A schema ``default`` must also pass the rules
of its node, run with the default as both the new and the old value, then as a create.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from platform_api.apiextensions import validation_schemautil as util
from platform_api.apiextensions.schema.celrules import compile_schema
from platform_api.apiextensions.schema.defaulting import CelCheck
from platform_api.cel.cost import RUNTIME_BUDGET
from platform_api.validation import field
from platform_api.validation.field import FieldError

Obj = dict[str, Any]
_RULES = ".x-kubernetes-validations["
_PER_EXPRESSION_COST = ("estimated rule cost exceeds", "estimated messageExpression cost exceeds")


def _under(error: FieldError, node: str) -> bool:
    return error.field == node or error.field.startswith((node + ".", node + "["))


def cel_errors(
    schema: Obj, path: str, schema_errs: list[FieldError], suppress_per_expression_cost: bool
) -> list[FieldError]:
    """Compile and cost errors of the rules of ``schema`` (at ``path``), as kube reports them:
    none for a node whose subtree has schema errors, no per-rule cost error for a version whose
    schema is unchanged by an update."""
    compiled = compile_schema(schema, path)
    out = []
    for error in compiled.cel_errors:
        node = error.field.split(_RULES, 1)[0]
        if any(_under(e, node) for e in schema_errs):
            continue
        if (
            suppress_per_expression_cost
            and error.type == field.FORBIDDEN
            and error.detail.startswith(_PER_EXPRESSION_COST)
        ):
            continue
        out.append(error)
    return out + compiled.cost_errors


def _has_rules(schema: Obj) -> bool:
    return util.schema_has(schema, lambda n: bool(n.get("x-kubernetes-validations")))


def _rebase(error: FieldError, at: str) -> FieldError:
    """A rule error on a default, from the default's own root to its place in the CRD."""
    if not error.field:
        return replace(error, field=at)
    joiner = "" if error.field.startswith("[") else "."
    return replace(error, field=f"{at}{joiner}{error.field}")


def default_rules() -> CelCheck:
    """The hook that runs a node's rules on its default; one runtime budget for the schema."""
    budget = [RUNTIME_BUDGET]

    def check(schema: Obj, value: Any, at: str, is_root: bool) -> list[FieldError]:
        if budget[0] < 0 or not _has_rules(schema):
            return []
        compiled = compile_schema(schema, at)
        errs, left = compiled.validate(value, value, budget[0], ratcheting=False)
        if not errs:
            errs, fresh = compiled.validate(value, None, budget[0], ratcheting=False)
            left = min(left, fresh)
        budget[0] = left
        return [_rebase(e, at) for e in errs]

    return check
