"""kube's ValidatingAdmissionPolicy type checker: expressions against the matched kinds' schemas.

Admission compiles a policy with ``object`` and ``params`` dyn, so a misspelt field only
fails when a request comes.  kube's ``validatingadmissionpolicy-status`` controller
(``validating.TypeChecker``) therefore compiles every validation ``expression`` and
``messageExpression`` once more per kind the policy's ``resourceRules`` name explicitly
(no wildcards, at most ``MAX_TYPES_TO_CHECK``), with ``object``/``oldObject`` typed by that
kind's OpenAPI schema and ``params`` by the paramKind's (dyn when it has none), and reports
each expression that fails for some kind in ``status.typeChecking.expressionWarnings``.
Variables are compiled first in the same environment, so ``variables.x`` is typed too.

Environments are the costly part (a descriptor pool of the whole schema): they are cached
per (schema, params schema, variable types), and ``check_kind`` pauses after each one so
that the caller can yield to the reactor in between.
"""

from __future__ import annotations

import re
import time
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from cel_expr_python import cel

from platform_api.cel.admission import VariableField, admission_declarations, variable_field
from platform_api.cel.environment import Environment
from platform_api.cel.errors import CELError, CompileError
from platform_api.cel.schematypes import DeclType, build_pool, decl_type
from platform_api.scheme.catalog import Scheme
from platform_api.scheme.schemas import INT_OR_STRING, QUANTITY, Node, Schemas

MAX_TYPES_TO_CHECK = 10
GVK = tuple[str, str, str]
Obj = dict[str, Any]
# kube's Go OpenAPI definitions of the one-of types: no ``type``, a ``format``.  IntOrString
# is dyn by its format; a Quantity has no CEL type, so kube drops its fields (and maps of
# them: ``resources.limits`` is an undefined field to the type checker).
_GO_DEFINITIONS: dict[str, Node] = {
    INT_OR_STRING: {"format": "int-or-string", "x-kubernetes-int-or-string": True},
    QUANTITY: {"format": "quantity"},
}
_DYN = ".google.protobuf.Value"
_CACHE_SIZE = 32


def gvk_string(gvk: GVK) -> str:
    """Go's ``GroupVersionKind.String()``: ``apps/v1, Kind=Deployment``, ``/v1, Kind=Pod``."""
    return f"{gvk[0]}/{gvk[1]}, Kind={gvk[2]}"


def populate_refs(schemas: Schemas, node: Node, stack: frozenset[str] = frozenset()) -> Node:
    """kube's ``PopulateRefs``: inline every ``$ref``; a ref already on the path (a recursive
    type) becomes a bare object.  KeyError when a definition is missing."""
    ref, target = schemas.resolve(node)
    if ref:
        if ref in stack:
            return {"type": "object"}
        if ref in _GO_DEFINITIONS:
            return _GO_DEFINITIONS[ref]
        stack, node = stack | {ref}, target
    out = dict(node)
    props = node.get("properties")
    if isinstance(props, dict):
        out["properties"] = {k: populate_refs(schemas, v, stack) for k, v in props.items()}
    for key in ("additionalProperties", "items"):
        sub = node.get(key)
        if isinstance(sub, dict):
            out[key] = populate_refs(schemas, sub, stack)
    return out


def _explicit(values: Any, reject: str) -> list[str] | None:
    """The names of a rule list, or None when one is a wildcard (kube then skips the rule)."""
    names = list(values or ())
    if any(c in name for name in names for c in reject):
        return None
    return names


@dataclass
class Plan:
    """What one check needs: kube's ``TypeCheckingContext`` plus the expressions."""

    kinds: list[tuple[GVK, Node]]  # the kinds whose schema was found
    has_params: bool
    params_schema: Node | None
    variables: list[tuple[str, str]]
    expressions: list[tuple[str, str]]  # (fieldRef, source)
    params_kind: str = ""
    results: list[dict[str, str]] = field(default_factory=list)  # per kind: fieldRef -> issues


class TypeChecker:
    """Type-checks policies against the schemas the ``scheme`` serves (custom ones too)."""

    def __init__(self, scheme: Scheme) -> None:
        self.scheme = scheme
        self._envs: OrderedDict[tuple[Any, ...], tuple[Environment, dict[str, str], Any]]
        self._envs = OrderedDict()
        # (definition, id of its node) -> (that node, its schema with references inlined):
        # the same dict for the same definition, so environments cache by its id
        self._schemas: OrderedDict[tuple[str, int], tuple[Node | None, Node]] = OrderedDict()

    def check(self, policy: Obj) -> list[dict[str, str]]:
        """The policy's ``expressionWarnings`` (all kinds at once)."""
        plan = self.plan(policy)
        for index in range(len(plan.kinds)):
            for _ in self.check_kind(plan, index):
                pass
        return warnings(plan)

    # -- planning ----------------------------------------------------------------------

    def plan(self, policy: Obj) -> Plan:
        spec = policy.get("spec") or {}
        kinds = [(gvk, self.resolve_schema(gvk)) for gvk in self.types_to_check(spec)]
        params_gvk = _params_gvk(spec.get("paramKind"))
        params_schema = self.resolve_schema(params_gvk) if params_gvk else None
        expressions: list[tuple[str, str]] = []
        for i, validation in enumerate(spec.get("validations") or ()):
            expressions.append(
                (f"spec.validations[{i}].expression", validation.get("expression", ""))
            )
            if validation.get("messageExpression"):
                ref = f"spec.validations[{i}].messageExpression"
                expressions.append((ref, validation["messageExpression"]))
        variables = [
            (v.get("name", ""), v.get("expression", "")) for v in spec.get("variables") or ()
        ]
        found = [(gvk, schema) for gvk, schema in kinds if schema is not None]
        params_kind = params_gvk[2] if params_gvk else ""
        has_params = params_gvk is not None
        return Plan(found, has_params, params_schema, variables, expressions, params_kind)

    def types_to_check(self, spec: Obj) -> list[GVK]:
        """kube's ``typesToCheck``: kinds of the explicitly named resources, sorted."""
        rules = (spec.get("matchConstraints") or {}).get("resourceRules") or ()
        found: set[GVK] = set()
        for rule in rules:
            groups = _explicit(rule.get("apiGroups"), "*")
            versions = _explicit(rule.get("apiVersions"), "*")
            resources = [r for r in rule.get("resources") or () if not set(r) & set("*/")]
            if not groups or not versions or not resources:
                continue
            count = 0
            for group in sorted(groups):
                for version in sorted(versions):
                    for resource in sorted(resources):
                        kind = self._kind_for(group, version, resource)
                        if kind is None:
                            continue
                        found.add((group, version, kind))
                        count += 1
                        if count == MAX_TYPES_TO_CHECK:
                            return sorted(found)
        return sorted(found)

    def _kind_for(self, group: str, version: str, resource: str) -> str | None:
        """The RESTMapper's ``KindsFor`` with an explicit version: plural or singular name."""
        rt = self.scheme.lookup(group, version, resource.lower())
        if rt is None:
            same = self.scheme.resources(group, version)
            rt = next((t for t in same if t.singular == resource.lower()), None)
        return rt.kind if rt is not None else None

    def resolve_schema(self, gvk: GVK) -> Node | None:
        """The kind's schema with references inlined; None when the scheme has none."""
        schemas = self.scheme.schemas
        try:
            name = schemas.for_kind(*gvk)
        except KeyError:
            rt = self.scheme.by_kind(*gvk)
            if rt is None or not rt.definition:
                return None
            name = rt.definition
        node = schemas.definitions.get(name)
        key = (name, id(node))
        found = self._schemas.get(key)
        if found is None or found[0] is not node:
            try:
                found = (node, populate_refs(schemas, {"$ref": name}))
            except KeyError:
                return None
            self._schemas[key] = found
            while len(self._schemas) > _CACHE_SIZE * 4:
                self._schemas.popitem(last=False)
        self._schemas.move_to_end(key)
        return found[1]

    # -- checking ----------------------------------------------------------------------

    def check_kind(self, plan: Plan, index: int) -> Iterator[None]:
        """Compile the variables, then every expression, for one kind, adding its issues by
        fieldRef to ``plan.results``; pauses after each environment it builds or reuses (a
        build takes tens of milliseconds) so that the caller can let other work run."""
        (_, _, kind), schema = plan.kinds[index]
        fields: dict[str, VariableField] = {}
        for name, source in plan.variables:
            env, _ = self._environment(schema, kind, plan, tuple(fields.values()))
            yield None
            try:
                checked, _ = env.check(source)
                fields[name] = variable_field(name, checked.type_of(checked.ast.expr.id))
            except CELError:
                fields[name] = (name, _DYN, "")
        env, names = self._environment(schema, kind, plan, tuple(fields.values()))
        yield None
        issues: dict[str, str] = {}
        for ref, source in plan.expressions:
            try:
                env.check(source)
            except CompileError as e:
                issues[ref] = _renamed(e.issues, names)
            except CELError as e:
                issues[ref] = f"type checking error: {e}"
        plan.results.append(issues)

    def _environment(
        self, schema: Node | None, kind: str, plan: Plan, fields: tuple[VariableField, ...]
    ) -> tuple[Environment, dict[str, str]]:
        params = plan.params_schema if plan.has_params else None
        # schemas are kept in the value: their ids stay theirs while the entry lives
        key = (id(schema), kind, id(params), plan.params_kind, plan.has_params, fields)
        entry = self._envs.get(key)
        if entry is not None:
            self._envs.move_to_end(key)
            return entry[0], entry[1]
        env, names = _build_environment(schema, kind, params, plan, fields)
        self._envs[key] = (env, names, (schema, params))
        while len(self._envs) > _CACHE_SIZE:
            self._envs.popitem(last=False)
        return env, names


def _build_environment(
    schema: Node | None,
    kind: str,
    params: Node | None,
    plan: Plan,
    fields: tuple[VariableField, ...],
) -> tuple[Environment, dict[str, str]]:
    """kube's ``buildEnvSet`` with the composition's ``variables``: one pool holds the
    object's and the params' messages and kube's admission types.  Also returns kube's
    names of the message types (``Deployment123456789.spec``) for the issues' texts."""
    holder = DeclType("object")
    obj = decl_type(schema, resource_root=True)
    par = decl_type(params, resource_root=True)
    for name, decl in (("object", obj), ("params", par)):
        if decl is not None:
            holder.fields[name] = (name, decl)
    pool = build_pool(holder)
    names: dict[str, str] = {}
    nanos = time.time_ns() % 1_000_000_000  # kube's generateUniqueTypeName
    if obj is not None:
        _kube_names(obj, f"{kind}{nanos}", names)
    if par is not None:
        _kube_names(par, f"{plan.params_kind}{nanos}", names)
    object_type = obj.cel_type() if obj is not None else cel.Type.DYN
    params_type = par.cel_type() if par is not None else cel.Type.DYN
    declared = admission_declarations(pool, plan.has_params, True, fields, object_type, params_type)
    return Environment(declared, pool=pool), names


def _kube_names(decl: DeclType, name: str, out: dict[str, str]) -> None:
    """kube's ``MaybeAssignTypeName``: objects are named by their path from the root."""
    if decl.kind == "object":
        if decl.message in out:
            return
        out[decl.message] = name
        for escaped, (_, ftype) in decl.fields.items():
            _kube_names(ftype, f"{name}.{escaped}", out)
    elif decl.elem is not None:
        _kube_names(decl.elem, f"{name}.@idx" if decl.kind == "list" else f"{name}.@elem", out)


def _renamed(issues: str, names: dict[str, str]) -> str:
    """Our message names in an issue's text replaced by kube's type names."""
    if not names:
        return issues
    pattern = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.sub(rf"(?<![\w.])({pattern})(?![\w])", lambda m: names[m.group(1)], issues)


def _params_gvk(param_kind: Obj | None) -> GVK | None:
    """kube's ``paramsGVK``: None without a paramKind or with an unparsable apiVersion."""
    if not param_kind:
        return None
    api_version = param_kind.get("apiVersion") or ""
    if api_version.count("/") > 1:
        return None
    group, _, version = ("", "", "") if api_version == "/" else api_version.rpartition("/")
    gvk = (group, version, param_kind.get("kind") or "")
    return gvk if any(gvk) else None


def warnings(plan: Plan) -> list[dict[str, str]]:
    """kube's ``ExpressionWarning`` list: per expression, the failing kinds' issues."""
    out = []
    for ref, _ in plan.expressions:
        texts = [
            f"{gvk_string(gvk)}: {issues[ref]}\n"
            for (gvk, _), issues in zip(plan.kinds, plan.results, strict=False)
            if ref in issues
        ]
        if texts:
            out.append({"fieldRef": ref, "warning": "\n".join(texts)})
    return out
