"""CRD ``x-kubernetes-validations``: compiled once per CRD version, run on every write.

``compile_schema(schema, fld_path)`` does what kube's CRD validation does with the rules of an
``openAPIV3Schema`` (shape of each rule, compilation, return types, ``oldSelf`` placement, cost
limits per rule and per CRD, with kube's texts and field paths) and builds the validator kube's
custom-resource strategy runs (``CompiledRules.validate``, see ``celrules_eval``).

``.errors`` lists, in kube's order, the rule-shape errors of the whole schema, then the CEL errors,
then the CRD-wide cost errors (also available apart: ``shape_errors``, ``cel_errors``,
``cost_errors``).  kube skips compiling a node's rules when schema errors exist at or below it;
this module only knows the rule-shape errors, so that is all it skips on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from platform_api.apiextensions.schema.celrules_compile import CompiledRule, TypeScope
from platform_api.apiextensions.schema.celrules_eval import Validator, build_validator
from platform_api.apiextensions.schema.celrules_paths import PathError, valid_field_path
from platform_api.cel.cost import RUNTIME_BUDGET, STATIC_CRD_LIMIT, STATIC_RULE_LIMIT, U64
from platform_api.cel.schematypes import DeclType, decl_type, escape
from platform_api.gotext import Struct, marshal
from platform_api.validation import field as fe
from platform_api.validation.field import FieldError, GoText

_REASONS = ["FieldValueDuplicate", "FieldValueForbidden", "FieldValueInvalid", "FieldValueRequired"]
_META_FIELDS = ("metadata", "kind", "apiVersion")


def cost_error_message(name: str, cost: int, limit: int) -> str:
    factor = cost / limit
    if factor > 100.0:
        text = "more than 100x"
    elif factor < 1.5:
        text = f"{factor:f}x"
    else:
        text = f"{factor:.1f}x"
    return (
        f"{name} exceeds budget by factor of {text} (try simplifying the rule, or adding "
        "maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )


def rule_text(spec: dict[str, Any]) -> GoText:
    """A ValidationRule as kube's field errors print a struct value: Go's JSON of the
    internal type (field names as declared, absent pointers null, HTML-safe escapes)."""
    value = Struct(
        Rule=spec.get("rule") or "",
        Message=spec.get("message") or "",
        MessageExpression=spec.get("messageExpression") or "",
        Reason=spec.get("reason"),
        FieldPath=spec.get("fieldPath") or "",
        OptionalOldSelf=spec.get("optionalOldSelf"),
    )
    return GoText(marshal(value))


def _has_newline(text: str) -> bool:
    return "\n" in text or "\r" in text


def shape_errors(rules: list[dict[str, Any]], schema: dict[str, Any], at: str) -> list[FieldError]:
    """kube's checks of each rule's fields, before any compilation."""
    errs: list[FieldError] = []
    for i, spec in enumerate(rules):
        path = f"{at}.x-kubernetes-validations[{i}]"
        rule, message = spec.get("rule") or "", spec.get("message") or ""
        if not rule.strip():
            errs.append(fe.required(f"{path}.rule", "rule is not specified"))
        elif message and not message.strip():
            errs.append(fe.invalid(f"{path}.message", message, "must be non-empty if specified"))
        elif _has_newline(message.strip()):
            errs.append(fe.invalid(f"{path}.message", message, "must not contain line breaks"))
        elif _has_newline(rule.strip()) and not message.strip():
            errs.append(
                fe.required(
                    f"{path}.message", "message must be specified if rule contains line breaks"
                )
            )
        expr = spec.get("messageExpression") or ""
        if expr and not expr.strip():
            errs.append(
                fe.required(
                    f"{path}.messageExpression", "messageExpression must be non-empty if specified"
                )
            )
        reason = spec.get("reason")
        if reason is not None and reason not in _REASONS:
            errs.append(fe.not_supported(f"{path}.reason", reason, _REASONS))
        fpath = spec.get("fieldPath") or ""
        if fpath and not fpath.strip():
            errs.append(fe.invalid(f"{path}.fieldPath", fpath, "must be non-empty if specified"))
        if _has_newline(fpath):
            errs.append(fe.invalid(f"{path}.fieldPath", fpath, "must not contain line breaks"))
        if fpath:
            try:
                valid_field_path(fpath, schema)
            except PathError:
                errs.append(fe.invalid(f"{path}.fieldPath", fpath, "must be a valid path"))
    return errs


@dataclass
class _Context:
    """kube's CELSchemaContext for one node."""

    decl: DeclType | None
    scope: TypeScope | None
    in_scope: bool
    cardinality: int | None
    forbid_old_self: str | None = None


@dataclass
class _Totals:
    total: int = 0
    expensive: list[tuple[str, int]] = field(default_factory=list)

    def observe(self, path: str, cost: int) -> None:
        self.total = min(self.total + cost, U64)
        if cost < STATIC_CRD_LIMIT // 100:
            return
        self.expensive.append((path, cost))
        self.expensive.sort(key=lambda item: -item[1])
        del self.expensive[4:]


def _max_elements(schema: dict[str, Any]) -> int | None:
    kind = schema.get("type")
    if kind == "object":
        if schema.get("additionalProperties") is not None:
            limit = schema.get("maxProperties")
            return max(int(limit), 0) if limit is not None else None
        return 1
    if kind == "array":
        limit = schema.get("maxItems")
        return max(int(limit), 0) if limit is not None else None
    return 1


class _Walker:
    """Walks the schema as kube's ValidateCustomResourceDefinitionOpenAPISchema does."""

    def __init__(self) -> None:
        self.shape: list[FieldError] = []
        self.cel: list[FieldError] = []
        self.totals = _Totals()
        self.scopes: dict[int, TypeScope] = {}

    def scope_for(self, decl: DeclType) -> TypeScope:
        """The scope whose pool types ``decl`` (a new one when ``decl`` was converted apart)."""
        for scope in self.scopes.values():
            if id(decl) in scope.members:
                return scope
        self.scopes[id(decl)] = TypeScope.of(decl)
        return self.scopes[id(decl)]

    def child(
        self,
        parent: _Context,
        parent_schema: dict[str, Any],
        schema: Any,
        decl: DeclType | None,
        scope: TypeScope | None,
        forbid: str | None,
    ) -> _Context:
        cardinality = None
        if parent.cardinality is not None:
            limit = _max_elements(parent_schema)
            if limit is not None:
                cardinality = min(parent.cardinality * limit, U64)
        in_scope = parent.in_scope or bool(
            isinstance(schema, dict) and schema.get("x-kubernetes-validations")
        )
        return _Context(decl, scope, in_scope, cardinality, forbid or parent.forbid_old_self)

    def walk(self, schema: dict[str, Any], at: str, ctx: _Context | None, root: bool) -> int:
        """Returns how many rule-shape errors were found at or below this node."""
        before = len(self.shape)
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict):
            sub = None
            if ctx is not None:
                sub = self.child(
                    ctx, schema, extra, ctx.decl.elem if ctx.decl else None, ctx.scope, None
                )
            self.walk(extra, f"{at}.additionalProperties", sub, False)
        for name, prop in (schema.get("properties") or {}).items():
            if not isinstance(prop, dict):
                continue
            sub = None
            if ctx is not None:
                decl, scope = self._property_type(ctx, name)
                sub = self.child(ctx, schema, prop, decl, scope, None)
            self.walk(prop, f"{at}.properties[{name}]", sub, False)
        for key in ("not",):
            if isinstance(schema.get(key), dict):
                self.walk(schema[key], f"{at}.{key}", None, False)
        for key in ("allOf", "oneOf", "anyOf"):
            for i, sub_schema in enumerate(schema.get(key) or []):
                self.walk(sub_schema, f"{at}.{key}[{i}]", None, False)
        items = schema.get("items")
        if isinstance(items, dict):
            sub = None
            if ctx is not None:
                forbid = at if schema.get("x-kubernetes-list-type") != "map" else None
                sub = self.child(
                    ctx, schema, items, ctx.decl.elem if ctx.decl else None, ctx.scope, forbid
                )
            self.walk(items, f"{at}.items", sub, False)
        rules = schema.get("x-kubernetes-validations") or []
        if rules:
            self.shape.extend(shape_errors(rules, schema, at))
            if len(self.shape) == before and ctx is not None and ctx.in_scope:
                self.compile_node(schema, rules, at, ctx, root)
        return len(self.shape) - before

    def _property_type(self, ctx: _Context, name: str) -> tuple[DeclType | None, TypeScope | None]:
        escaped = escape(name)
        if ctx.decl is not None and escaped is not None and escaped in ctx.decl.fields:
            return ctx.decl.fields[escaped][1], ctx.scope
        return None, None

    def compile_node(
        self,
        schema: dict[str, Any],
        rules: list[dict[str, Any]],
        at: str,
        ctx: _Context,
        root: bool,
    ) -> None:
        decl, scope = ctx.decl, ctx.scope
        if decl is None:  # no type from the parent: convert this node on its own
            decl = decl_type(schema, root or bool(schema.get("x-kubernetes-embedded-resource")))
            if decl is None and _has_unknown_type(schema):
                return  # kube skips CEL under a schema error (here: a type it refuses)
            if decl is None:
                self.cel.append(
                    FieldError(
                        fe.INTERNAL,
                        f"{at}.x-kubernetes-validations",
                        fe.OMIT,
                        "internal error: failed to construct type information for "
                        "x-kubernetes-validations rules: unable to convert structural schema to "
                        "CEL declarations",
                    )
                )
                return
            scope = self.scope_for(decl)
        assert scope is not None
        for i, spec in enumerate(rules):
            path = f"{at}.x-kubernetes-validations[{i}]"
            self.rule_errors(scope.compile(decl, schema, spec), path, ctx)

    def rule_errors(self, cr: CompiledRule, path: str, ctx: _Context) -> None:
        card = ctx.cardinality if ctx.cardinality is not None else cr.max_cardinality
        cost = 0 if cr.max_cost == 0 else min(cr.max_cost * card, U64)
        if cost > STATIC_RULE_LIMIT:
            self.cel.append(
                fe.forbidden(
                    f"{path}.rule",
                    cost_error_message("estimated rule cost", cost, STATIC_RULE_LIMIT),
                )
            )
        self.totals.observe(f"{path}.rule", cost)
        if cr.error is not None:
            self.cel.append(fe.invalid(f"{path}.rule", rule_text(cr.spec), cr.error))
        if cr.message_error is not None:
            self.cel.append(
                fe.invalid(f"{path}.messageExpression", rule_text(cr.spec), cr.message_error)
            )
        elif cr.message_program is not None:
            if cr.message_max_cost > STATIC_RULE_LIMIT:
                self.cel.append(
                    fe.forbidden(
                        f"{path}.messageExpression",
                        cost_error_message(
                            "estimated messageExpression cost",
                            cr.message_max_cost,
                            STATIC_RULE_LIMIT,
                        ),
                    )
                )
            self.totals.observe(f"{path}.messageExpression", cr.message_max_cost)
        if cr.uses_old_self:
            if ctx.forbid_old_self is not None:
                self.cel.append(
                    fe.invalid(
                        f"{path}.rule",
                        cr.spec.get("rule", ""),
                        "oldSelf cannot be used on the uncorrelatable portion of the schema within "
                        f"{ctx.forbid_old_self}",
                    )
                )
        elif cr.spec.get("optionalOldSelf") is not None:
            self.cel.append(
                fe.invalid(
                    f"{path}.optionalOldSelf",
                    cr.spec["optionalOldSelf"],
                    "may not be set if oldSelf is not used in rule",
                )
            )

    def cost_errors(self, at: str) -> list[FieldError]:
        if self.totals.total <= STATIC_CRD_LIMIT:
            return []
        errs = [
            fe.forbidden(
                path,
                "contributed to estimated rule cost total exceeding cost limit "
                "for entire OpenAPIv3 schema",
            )
            for path, _ in self.totals.expensive
        ]
        errs.append(
            fe.forbidden(
                at,
                cost_error_message(
                    "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                    self.totals.total,
                    STATIC_CRD_LIMIT,
                ),
            )
        )
        return errs


class CompiledRules:
    """The rules of one CRD version's schema: CRD-validation errors and the runtime validator."""

    def __init__(self, schema: dict[str, Any], fld_path: str) -> None:
        walker = _Walker()
        root_decl = decl_type(schema, True)
        scope = walker.scope_for(root_decl) if root_decl is not None else None
        ctx = _Context(root_decl, scope, bool(schema.get("x-kubernetes-validations")), 1)
        walker.walk(schema, fld_path, ctx, True)
        self.shape_errors = walker.shape
        self.cel_errors = walker.cel
        self.cost_errors = walker.cost_errors(fld_path)
        self.errors = [*self.shape_errors, *self.cel_errors, *self.cost_errors]
        self.validator: Validator | None = build_validator(schema, root_decl, walker.scope_for)

    def validate(
        self,
        obj: dict[str, Any],
        old: dict[str, Any] | None = None,
        budget: int = RUNTIME_BUDGET,
        *,
        ratcheting: bool = True,
        warnings: list[str] | None = None,
    ) -> tuple[list[FieldError], int]:
        """Run every rule on ``obj`` (``old`` on updates): (errors, remaining cost budget).

        With ``ratcheting`` (kube 1.30+ default), an error on a value unchanged since ``old``
        is not returned; its text goes to ``warnings`` when given.
        """
        if self.validator is None:
            return [], budget
        return self.validator.run(obj, old, budget, ratcheting, warnings)


def compile_schema(schema: dict[str, Any], fld_path: str) -> CompiledRules:
    """Compile every rule of ``schema`` (a CRD version's openAPIV3Schema) once."""
    return CompiledRules(schema, fld_path)


_OPENAPI_TYPES = frozenset({"array", "boolean", "integer", "number", "object", "string"})


def _has_unknown_type(schema: Any) -> bool:
    """Whether ``schema`` or a schema below it names a type kube refuses."""
    if not isinstance(schema, dict):
        return False
    kind = schema.get("type")
    if kind and kind not in _OPENAPI_TYPES:
        return True
    below: list[Any] = list((schema.get("properties") or {}).values())
    below += [schema.get("items"), schema.get("additionalProperties")]
    return any(_has_unknown_type(sub) for sub in below)
