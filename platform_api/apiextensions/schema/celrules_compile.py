"""Compiling one schema node's ``x-kubernetes-validations`` (kube's ``cel.Compile``).

Rules are type-checked with ``self`` (and ``oldSelf``) of the node's CEL type, in a descriptor
pool holding the messages of the schema; property names escaped in CEL (``foo__dash__bar``) are
mapped back in the checked AST so rules evaluate on the object's plain dicts.  For rules with
``optionalOldSelf``, ``oldSelf`` is an optional: the runtime binds ``oldSelf`` and
``@oldSelfPresent`` and the checked AST builds the optional from them.  Messages name the
types as kube does: each node's ``self`` is a new ``selfType<n>``, its members by path
(``selfType<n>.spec.ports.@idx``), though the pool's messages are named otherwise.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from dataclasses import dataclass, field
from typing import Any

from platform_api.apiextensions.schema.celrules_paths import PathError, valid_field_path
from platform_api.cel import CELError, CompileError, Environment, Program, ProgramError
from platform_api.cel.checked import Checked
from platform_api.cel.cost import estimate
from platform_api.cel.library import listtypes
from platform_api.cel.schematypes import MAX_REQUEST_SIZE, DeclType, build_pool
from platform_api.cel.sizes import DeclSizes

SELF, OLD_SELF, OLD_PRESENT = "self", "oldSelf", "@oldSelfPresent"
_TYPE_NAME = re.compile(r"selfType\d+(?:\.\w+)*")
_node_numbers = itertools.count(1)


@dataclass
class CompiledRule:
    """kube's CompilationResult for one rule."""

    spec: dict[str, Any]
    program: Program | None = None
    message_program: Program | None = None
    error: str | None = None  # detail of a rule error ("compilation failed: ...")
    error_internal: bool = False
    message_error: str | None = None
    uses_old_self: bool = False
    max_cost: int = 0
    max_cardinality: int = 0
    message_max_cost: int = 0
    field_path: str = ""
    decl: DeclType | None = None

    @property
    def optional_old_self(self) -> bool:
        return bool(self.spec.get("optionalOldSelf"))


@dataclass
class TypeScope:
    """The pool of one converted schema and the renames its messages need."""

    root: DeclType
    pool: Any
    renames: dict[str, dict[str, str]] = field(default_factory=dict)
    envs: dict[tuple[int, bool], Environment] = field(default_factory=dict)
    members: set[int] = field(default_factory=set)
    compiled: dict[tuple[int, int], CompiledRule] = field(default_factory=dict)
    kube_names: dict[int, dict[str, str]] = field(default_factory=dict)

    @classmethod
    def of(cls, root: DeclType) -> TypeScope:
        scope = cls(root, build_pool(root))
        scope._collect(root)
        return scope

    def compile(self, decl: DeclType, schema: dict[str, Any], spec: dict[str, Any]) -> CompiledRule:
        """compile_rule, once per (type, rule): CRD validation and the validator share it."""
        key = (id(decl), id(spec))
        if key not in self.compiled:
            self.compiled[key] = compile_rule(self, decl, schema, spec)
        return self.compiled[key]

    def named_as_kube(self, decl: DeclType, text: str) -> str:
        """``text`` (a type checker's issues) with the pool's message names of ``decl``'s
        types written as kube names them (MaybeAssignTypeName on a fresh selfType)."""
        names = self.kube_names.get(id(decl))
        if names is None:
            names = self.kube_names[id(decl)] = {}
            _assign_names(decl, f"selfType{next(_node_numbers)}", names)
        return _TYPE_NAME.sub(lambda m: names.get(m.group(0), m.group(0)), text)

    def _collect(self, t: DeclType) -> None:
        if id(t) in self.members:
            return
        self.members.add(id(t))
        if t.kind == "object":
            renamed = {esc: name for esc, (name, _) in t.fields.items() if esc != name}
            if renamed:
                self.renames[t.message] = renamed
            for _, ftype in t.fields.values():
                self._collect(ftype)
        elif t.elem is not None:
            self._collect(t.elem)

    def env(self, decl: DeclType, optional: bool) -> Environment:
        key = (id(decl), optional)
        if key not in self.envs:
            if optional:
                text = decl.type_text()
                variables: dict[str, Any] = {SELF: text, OLD_SELF: f"optional({text})"}
            else:
                variables = {SELF: decl.cel_type(), OLD_SELF: decl.cel_type()}
            self.envs[key] = Environment(variables, pool=self.pool)
        return self.envs[key]

    def unescape_fields(self, checked: Checked, expr: Any, _parents: Any) -> None:
        """Rewriter: a select of an escaped property reads the property's real name."""
        if expr.WhichOneof("expr_kind") != "select_expr":
            return
        operand_type = checked.type_of(expr.select_expr.operand.id)
        if operand_type.WhichOneof("type_kind") != "message_type":
            return
        renamed = self.renames.get(operand_type.message_type)
        if renamed and expr.select_expr.field in renamed:
            expr.select_expr.field = renamed[expr.select_expr.field]


def _assign_names(t: DeclType, name: str, names: dict[str, str]) -> None:
    if t.kind == "object":
        if t.message:
            names.setdefault(t.message, name)
        for escaped, (_, ftype) in t.fields.items():
            _assign_names(ftype, f"{name}.{escaped}", names)
    elif t.elem is not None:
        _assign_names(t.elem, name + (".@idx" if t.kind == "list" else ".@elem"), names)


def _optional_old_self(checked: Checked, expr: Any, _parents: Any) -> Any | None:
    if expr.WhichOneof("expr_kind") == "ident_expr" and expr.ident_expr.name == OLD_SELF:
        present = checked.ident(OLD_PRESENT)
        value = checked.call("optional.of", checked.ident(OLD_SELF))
        return checked.call("_?_:_", present, value, checked.call("optional.none"))
    return None


def compile_rule(
    scope: TypeScope, decl: DeclType, schema: dict[str, Any], spec: dict[str, Any]
) -> CompiledRule:
    result = CompiledRule(spec, decl=decl)
    source = spec.get("rule") or ""
    if not source.strip():
        return result
    env = scope.env(decl, result.optional_old_self)
    rewriters: list[Any] = [scope.unescape_fields]
    if result.optional_old_self:
        rewriters.append(_optional_old_self)
    if listtypes.has_list_semantics(decl):  # kube's set- and map-lists: unordered
        rewriters.append(listtypes.rewriter({SELF: decl, OLD_SELF: decl}))
    try:
        checked, out = env.check(source)
    except CompileError as e:
        result.error = f"compilation failed: {scope.named_as_kube(decl, e.issues)}"
        return result
    if out.name().upper() != "BOOL":
        result.error = "cel expression must evaluate to a bool"
        return result
    result.uses_old_self = checked.uses(OLD_SELF)
    try:
        result.program = env.program(checked, out, rewriters)
    except ProgramError as e:
        result.error = str(e)
        return result
    sizes = DeclSizes(decl)
    result.max_cost = estimate(checked, sizes).hi
    result.max_cardinality = MAX_REQUEST_SIZE // (decl.min_size + 1)
    message = spec.get("messageExpression") or ""
    if message:
        _compile_message(scope, env, sizes, message, rewriters, result)
    path = spec.get("fieldPath") or ""
    if path:
        with contextlib.suppress(PathError):
            result.field_path = valid_field_path(path, schema)[0]
    return result


def _compile_message(
    scope: TypeScope,
    env: Environment,
    sizes: DeclSizes,
    source: str,
    rewriters: list[Any],
    result: CompiledRule,
) -> None:
    try:
        checked, out = env.check(source)
    except CompileError as e:
        issues = scope.named_as_kube(result.decl or scope.root, e.issues)
        result.message_error = f"messageExpression compilation failed: {issues}"
        return
    if out.name().upper() != "STRING":
        result.message_error = "messageExpression must evaluate to a string"
        return
    try:
        result.message_program = env.program(checked, out, rewriters)
    except (ProgramError, CELError) as e:
        detail = str(e).removeprefix("program instantiation failed: ")
        result.message_error = f"messageExpression instantiation failed: {detail}"
        return
    result.message_max_cost = estimate(checked, sizes).hi
