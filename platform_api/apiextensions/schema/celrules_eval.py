"""Running CRD validation rules on custom resources (kube's ``cel.Validator``).

Rules run where they are declared: ``self`` is that node's value, for every item of a list and
every value of a map; ``oldSelf`` is the correlated old value (same map key, same list-map
keys), and rules using it are skipped without one unless ``optionalOldSelf``.  Errors carry
``message``/``messageExpression``, ``reason`` and ``fieldPath`` as kube renders them.

Cost: cel-cpp does not count evaluation steps.  A rule whose static estimate is small is charged
its estimate; a larger one is charged the estimate recomputed with the sizes of the actual
values (an upper bound of kube's actual cost), which also decides the per-call limit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from platform_api.apiextensions.schema.celrules_compile import (
    OLD_PRESENT,
    OLD_SELF,
    SELF,
    CompiledRule,
    TypeScope,
)
from platform_api.apiextensions.schema.celrules_paths import Correlation, map_list_get
from platform_api.cel import CELError, activation
from platform_api.cel.cost import PER_CALL_LIMIT, estimate
from platform_api.cel.schematypes import DeclType, decl_type, escape, with_type_and_object_meta
from platform_api.cel.sizes import ActualSizes
from platform_api.cel.values import Convert, converter
from platform_api.validation import field as fe
from platform_api.validation.field import FieldError

CHEAP = 10_000  # below this static estimate a rule is charged its estimate
MAX_MESSAGE = 5 * 1024
OUT_OF_BUDGET = (
    "validation failed due to running out of cost budget, no further validation rules will be run"
)


@dataclass
class _Ratchet:
    current: Correlation | None = None
    parent: Correlation | None = None

    def key(self, name: str) -> _Ratchet:
        if self.current is None:
            return self
        if self.parent is None and name in ("apiVersion", "kind"):
            return _Ratchet()
        return _Ratchet(self.current.key(name), self.current)

    def index(self, i: int) -> _Ratchet:
        if self.current is None:
            return self
        return _Ratchet(self.current.index(i), self.current)

    def unchanged(self) -> bool:
        if self.current is not None:
            return self.current.unchanged()
        return self.parent.unchanged() if self.parent is not None else False


@dataclass
class _Run:
    budget: int
    ratcheting: bool
    warnings: list[str] | None
    errors: list[FieldError] = field(default_factory=list)


def _child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


@dataclass
class Validator:
    """The compiled rules of one schema node and the validators below it."""

    schema: dict[str, Any]
    type: str
    rules: list[CompiledRule]
    compile_error: str | None = None
    convert: Convert | None = None
    items: Validator | None = None
    additional: Validator | None = None
    properties: dict[str, Validator] = field(default_factory=dict)
    all_of: list[Validator] = field(default_factory=list)

    def run(
        self, obj: Any, old: Any, budget: int, ratcheting: bool, warnings: list[str] | None
    ) -> tuple[list[FieldError], int]:
        state = _Run(budget, ratcheting, warnings)
        ratchet = (
            _Ratchet(Correlation(obj, old, self.schema))
            if ratcheting and old is not None
            else _Ratchet()
        )
        self.validate("", obj, old, ratchet, state)
        return state.errors, state.budget

    def validate(self, path: str, obj: Any, old: Any, ratchet: _Ratchet, state: _Run) -> None:
        if obj is None:
            return
        self.expressions(path, obj, old, ratchet, state)
        if state.budget < 0:
            return
        for sub in self.all_of:
            sub.validate(path, obj, old, _Ratchet(parent=ratchet.parent), state)
            if state.budget < 0:
                return
        if isinstance(obj, list) and self.items is not None:
            for i, item in enumerate(obj):
                old_item = map_list_get(self.schema, old, item)
                self.items.validate(f"{path}[{i}]", item, old_item, ratchet.index(i), state)
                if state.budget < 0:
                    return
        elif isinstance(obj, dict):
            self._validate_map(path, obj, old if isinstance(old, dict) else None, ratchet, state)

    def _validate_map(
        self,
        path: str,
        obj: dict[str, Any],
        old: dict[str, Any] | None,
        ratchet: _Ratchet,
        state: _Run,
    ) -> None:
        correlatable = self.schema.get("x-kubernetes-map-type") in (None, "granular", "atomic")
        old = old if correlatable else None
        if self.additional is not None:
            for key, value in obj.items():
                old_value = old.get(key) if old else None
                self.additional.validate(
                    f"{path}[{key}]", value, old_value, ratchet.key(key), state
                )
                if state.budget < 0:
                    return
        if self.properties:
            for key, value in obj.items():
                sub = self.properties.get(key)
                if sub is None:
                    continue
                old_value = old.get(key) if old else None
                sub.validate(_child(path, key), value, old_value, ratchet.key(key), state)
                if state.budget < 0:
                    return

    def expressions(self, path: str, obj: Any, old: Any, ratchet: _Ratchet, state: _Run) -> None:
        if self.compile_error is not None:
            state.errors.append(
                fe.invalid(
                    path, self.type, f"rule compiler initialization error: {self.compile_error}"
                )
            )
            return
        if not self.rules:
            return
        if state.budget <= 0:
            state.errors.append(fe.invalid(path, self.type, OUT_OF_BUDGET))
            state.budget = -1
            return
        value = self.convert(obj) if self.convert else obj
        if any(rule.uses_old_self for rule in self.rules):
            old_value = self.convert(old) if self.convert and old is not None else old
        else:
            old_value = None  # no rule reads oldSelf: do not pay for converting it
        act = activation({SELF: value, OLD_SELF: old_value, OLD_PRESENT: old is not None})
        for rule in self.rules:
            if not self._rule(rule, path, obj, old, act, ratchet, state, (value, old_value)):
                return

    def _rule(
        self,
        rule: CompiledRule,
        path: str,
        obj: Any,
        old: Any,
        act: Any,
        ratchet: _Ratchet,
        state: _Run,
        values: tuple[Any, Any],
    ) -> bool:
        """Evaluate one rule; False stops the node (budget exhausted)."""
        if rule.error is not None:
            state.errors.append(fe.invalid(path, self.type, f"rule compile error: {rule.error}"))
            return True
        if rule.program is None:
            return True
        if rule.uses_old_self and old is None and not rule.optional_old_self:
            return True
        cost = _charge(rule, rule.max_cost, values, rule.program.checked)
        if cost > state.budget:
            state.errors.append(fe.invalid(path, self.type, OUT_OF_BUDGET))
            state.budget = -1
            return False
        state.budget -= cost
        if cost > PER_CALL_LIMIT:
            state.errors.append(fe.invalid(path, self.type, _call_limit_detail(rule)))
            state.budget = -1
            return False
        try:
            result = rule.program.eval(act)
        except CELError as e:
            state.errors.append(fe.invalid(path, self.type, _eval_error_detail(rule, str(e))))
            return True
        if result is True:
            return True
        where = _child(path, rule.field_path) if rule.field_path else path
        shown = self._message(rule, where, act, state, values)
        if shown is None:
            return False
        bad = fe.OMIT if self.type in ("object", "array") else obj
        error = _for_reason(where, bad, shown, rule.spec.get("reason"))
        if state.ratcheting and not rule.uses_old_self and ratchet.unchanged():
            if state.warnings is not None:
                state.warnings.append(str(error))
        else:
            state.errors.append(error)
        return True

    def _message(
        self, rule: CompiledRule, where: str, act: Any, state: _Run, values: tuple[Any, Any]
    ) -> str | None:
        program = rule.message_program
        if program is not None:
            cost = _charge(rule, rule.message_max_cost, values, program.checked)
            if cost > state.budget:
                state.errors.append(
                    fe.invalid(
                        where,
                        self.type,
                        (
                            "messageExpression evaluation failed due to running out of cost budget, "
                            "no further validation rules will be run"
                        ),
                    )
                )
                state.budget = -1
                return None
            state.budget -= cost
            try:
                message = program.eval(act)
            except CELError:
                message = None
            if isinstance(message, str):
                trimmed = message.strip()
                if trimmed and len(trimmed.encode()) <= MAX_MESSAGE and "\n" not in trimmed:
                    return trimmed
        explicit = (rule.spec.get("message") or "").strip()
        return explicit or f"failed rule: {_error_string(rule.spec)}"


def _call_limit_detail(rule: CompiledRule) -> str:
    return (
        "'operation cancelled: actual cost limit exceeded': no further validation rules will "
        f"be run due to call cost exceeds limit for rule: {_error_string(rule.spec)}"
    )


def _eval_error_detail(rule: CompiledRule, message: str) -> str:
    text = _error_string(rule.spec)
    if message.startswith("no such overload"):
        return (
            f"'{message}': call arguments did not match a supported operator, function or "
            f"macro signature for rule: {text}"
        )
    return f"{message} evaluating rule: {text}"


def _error_string(spec: dict[str, Any]) -> str:
    message = (spec.get("message") or "").strip()
    return message or (spec.get("rule") or "").strip()


def _charge(rule: CompiledRule, static: int, values: tuple[Any, Any], checked: Any) -> int:
    """The cost an evaluation is charged: the static bound, or the bound on actual sizes."""
    if static <= CHEAP or rule.decl is None:
        return static
    sizes = ActualSizes(rule.decl, {SELF: values[0], OLD_SELF: values[1]})
    return estimate(checked, sizes).hi


def _for_reason(path: str, value: Any, detail: str, reason: str | None) -> FieldError:
    if reason == "FieldValueForbidden":
        return fe.forbidden(path, detail)
    if reason == "FieldValueRequired":
        return fe.required(path, detail)
    if reason == "FieldValueDuplicate":
        return fe.FieldError(fe.DUPLICATE, path, value)
    return fe.invalid(path, value, detail)


def build_validator(
    schema: dict[str, Any], root: DeclType | None, scope_for: Callable[[DeclType], TypeScope]
) -> Validator | None:
    """kube's NewValidator(schema, isResourceRoot=true); ``root`` is the schema's CEL type."""
    if not _has_rules(schema):
        return None
    return _build(schema, schema, True, root, scope_for)


def _has_rules(schema: Any) -> bool:
    if not isinstance(schema, dict):
        return False
    if schema.get("x-kubernetes-validations"):
        return True
    if _has_rules(schema.get("items")) or _has_rules(schema.get("additionalProperties")):
        return True
    return any(_has_rules(p) for p in (schema.get("properties") or {}).values())


def _build(
    rules_schema: dict[str, Any],
    node: dict[str, Any],
    root: bool,
    decl: DeclType | None,
    scope_for: Callable[[DeclType], TypeScope],
) -> Validator | None:
    specs = rules_schema.get("x-kubernetes-validations") or []
    compiled: list[CompiledRule] = []
    error = None
    if specs:
        if decl is None:
            error = "failed to convert to declType for CEL validation rules"
        else:
            scope = scope_for(decl)
            compiled = [scope.compile(decl, node, spec) for spec in specs]
    items = additional = None
    elem = decl.elem if decl is not None else None
    if isinstance(rules_schema.get("items"), dict) and isinstance(node.get("items"), dict):
        sub = node["items"]
        items = _build(
            rules_schema["items"],
            sub,
            bool(sub.get("x-kubernetes-embedded-resource")),
            elem,
            scope_for,
        )
    properties = _build_properties(rules_schema, node, decl, scope_for)
    extra = rules_schema.get("additionalProperties")
    if isinstance(extra, dict) and isinstance(node.get("additionalProperties"), dict):
        sub = node["additionalProperties"]
        additional = _build(
            extra, sub, bool(sub.get("x-kubernetes-embedded-resource")), elem, scope_for
        )
    all_of = [
        v
        for nested in rules_schema.get("allOf") or []
        if isinstance(nested, dict) and (v := _build(nested, node, root, decl, scope_for))
    ]
    if not (compiled or error or items or additional or properties or all_of):
        return None
    shown = with_type_and_object_meta(node) if root else node
    return Validator(
        schema=node,
        type=node.get("type", ""),
        rules=compiled,
        compile_error=error,
        convert=converter(decl, shown) if compiled else None,
        items=items,
        additional=additional,
        properties=properties,
        all_of=all_of,
    )


def _build_properties(
    rules_schema: dict[str, Any],
    node: dict[str, Any],
    decl: DeclType | None,
    scope_for: Callable[[DeclType], TypeScope],
) -> dict[str, Validator]:
    """Validators of the properties: typed from the parent (unescapable names on their own)."""
    properties = {}
    for name, rules_prop in (rules_schema.get("properties") or {}).items():
        prop = (node.get("properties") or {}).get(name)
        if not isinstance(prop, dict):
            continue
        embedded = bool(prop.get("x-kubernetes-embedded-resource"))
        escaped = escape(name)
        if escaped is not None:
            ftype = decl.field_type(escaped) if decl is not None else None
        else:
            ftype = decl_type(prop, embedded)
        if ftype is None:
            continue
        built = _build(rules_prop, prop, embedded, ftype, scope_for)
        if built is not None:
            properties[name] = built
    return properties
