"""The CEL variables of admission match conditions, typed as kube declares them.

kube's ``admission/plugin/cel`` compiler gives a webhook's ``matchConditions`` (and the
admission policies) ``object`` and ``oldObject`` (dyn), ``request`` (a
``kubernetes.AdmissionRequest`` object type), ``namespaceObject`` (``kubernetes.Namespace``),
``authorizer`` and ``authorizer.requestResource``.  The object types are protobuf messages
of one pool (cel-cpp type-checks against messages), named as kube names its DeclTypes so
compile errors print the same type names.  Programs evaluate on plain dicts, as every
program of the server does.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Sequence
from typing import Any

from cel_expr_python import cel

from platform_api.cel.checked import type_text
from platform_api.cel.environment import Environment, Program
from platform_api.cel.errors import CELError
from platform_api.cel.protos import FieldSpec, file_proto, new_pool

_S, _TIME, _DYN = "string", ".google.protobuf.Timestamp", ".google.protobuf.Value"
_DURATION = ".google.protobuf.Duration"
_GVK, _GVR = ".kubernetes.GroupVersionKind", ".kubernetes.GroupVersionResource"
_STRING_MAP = "map:string"

# kube's BuildRequestType and BuildNamespaceType, field by field.
_MESSAGES: list[tuple[str, list[FieldSpec]]] = [
    ("GroupVersionKind", [("group", 1, _S, ""), ("version", 2, _S, ""), ("kind", 3, _S, "")]),
    (
        "GroupVersionResource",
        [("group", 1, _S, ""), ("version", 2, _S, ""), ("resource", 3, _S, "")],
    ),
    (
        "UserInfo",
        [
            ("username", 1, _S, ""),
            ("uid", 2, _S, ""),
            ("groups", 3, _S, "*"),
            # map(string, list(string)): protobuf has no repeated map values.
            ("extra", 4, ".google.protobuf.ListValue", _STRING_MAP),
        ],
    ),
    (
        "AdmissionRequest",
        [
            ("kind", 1, _GVK, ""),
            ("resource", 2, _GVR, ""),
            ("subResource", 3, _S, ""),
            ("requestKind", 4, _GVK, ""),
            ("requestResource", 5, _GVR, ""),
            ("requestSubResource", 6, _S, ""),
            ("name", 7, _S, ""),
            ("namespace", 8, _S, ""),
            ("operation", 9, _S, ""),
            ("userInfo", 10, ".kubernetes.UserInfo", ""),
            ("dryRun", 11, "bool", ""),
            ("options", 12, _DYN, ""),
        ],
    ),
    ("NamespaceSpec", [("finalizers", 1, _S, "*")]),
    (
        "NamespaceCondition",
        [
            ("status", 1, _S, ""),
            ("type", 2, _S, ""),
            ("lastTransitionTime", 3, _TIME, ""),
            ("message", 4, _S, ""),
            ("reason", 5, _S, ""),
        ],
    ),
    (
        "NamespaceStatus",
        [("conditions", 1, ".kubernetes.NamespaceCondition", "*"), ("phase", 2, _S, "")],
    ),
    (
        "NamespaceMetadata",
        [
            ("name", 1, _S, ""),
            ("generateName", 2, _S, ""),
            ("namespace", 3, _S, ""),
            ("labels", 4, _S, _STRING_MAP),
            ("annotations", 5, _S, _STRING_MAP),
            ("UID", 6, _S, ""),
            ("creationTimestamp", 7, _TIME, ""),
            ("deletionGracePeriodSeconds", 8, "int64", ""),
            ("deletionTimestamp", 9, _TIME, ""),
            ("generation", 10, "int64", ""),
            ("resourceVersion", 11, _S, ""),
            ("finalizers", 12, _S, "*"),
        ],
    ),
    (
        "Namespace",
        [
            ("metadata", 1, ".kubernetes.NamespaceMetadata", ""),
            ("spec", 2, ".kubernetes.NamespaceSpec", ""),
            ("status", 3, ".kubernetes.NamespaceStatus", ""),
        ],
    ),
]
_DEPS = [
    "google/protobuf/duration.proto",
    "google/protobuf/struct.proto",
    "google/protobuf/timestamp.proto",
]


VARIABLES_TYPE = "kubernetes.variables"
# A policy variable as a field of ``kubernetes.variables``: (name, field type, label).
VariableField = tuple[str, str, str]


@functools.lru_cache(maxsize=256)
def admission_environment(
    params: bool = False,
    authorizer: bool = True,
    variables: tuple[VariableField, ...] | None = None,
) -> Environment:
    """kube's admission CEL environments (``createEnvForOpts``), one per combination.

    ``params`` (dyn) exists when the policy has a paramKind, ``authorizer`` in all but
    message expressions; ``variables`` (None: not declared) are the typed fields of the
    ``kubernetes.variables`` object kube's composition compiler declares.
    """
    pool = new_pool()
    return Environment(admission_declarations(pool, params, authorizer, variables), pool=pool)


def admission_declarations(
    pool: Any,
    params: bool,
    authorizer: bool,
    variables: tuple[VariableField, ...] | None,
    object_type: Any = cel.Type.DYN,
    params_type: Any = cel.Type.DYN,
) -> dict[str, Any]:
    """Add kube's admission types to ``pool``; the variables to declare over it.

    ``object_type``/``params_type`` type ``object``, ``oldObject`` and ``params`` with a
    schema's message (of ``pool``), as kube's policy type checker does; dyn otherwise.
    """
    messages = list(_MESSAGES)
    if variables is not None:
        fields = [(name, i, ftype, label) for i, (name, ftype, label) in enumerate(variables, 1)]
        messages.append((VARIABLES_TYPE.split(".")[1], fields))
    pool.Add(file_proto("platform/cel_admission.proto", "kubernetes", messages, _DEPS))
    declared: dict[str, Any] = {
        "object": object_type,
        "oldObject": object_type,
        "namespaceObject": cel.Type("kubernetes.Namespace"),
        "request": cel.Type("kubernetes.AdmissionRequest"),
    }
    if params:
        declared["params"] = params_type
    if authorizer:
        declared["authorizer"] = cel.Type("kubernetes.authorization.Authorizer")
        declared["authorizer.requestResource"] = cel.Type("kubernetes.authorization.ResourceCheck")
    if variables is not None:
        declared["variables"] = cel.Type(VARIABLES_TYPE)
    return declared


def match_condition_environment() -> Environment:
    """The environment of a webhook's match conditions (no ``params``: webhooks have none)."""
    return admission_environment()


class AdmissionExpressionError(CELError):
    """An admission expression kube refuses; ``internal`` when kube reports an internal error."""

    def __init__(self, message: str, internal: bool = False) -> None:
        super().__init__(message)
        self.internal = internal


MatchConditionError = AdmissionExpressionError

# Result types kube's expression accessors accept (``ReturnTypes``); () accepts any.
BOOL: tuple[str, ...] = ("bool",)
STRING: tuple[str, ...] = ("string",)
STRING_OR_NULL: tuple[str, ...] = ("string", "null_type")
ANY: tuple[str, ...] = ()


def _compile(env: Environment, source: str, returns: tuple[str, ...]) -> Program:
    """kube's ``CompileCELExpression``: compile, check the result type exactly (dyn is
    refused where a type is required), then build the program."""
    checked, result = env.check(source)  # CompileError: "compilation failed: ..."
    found = type_text(checked.type_of(checked.ast.expr.id))
    if returns and found not in returns:
        if len(returns) == 1:
            raise AdmissionExpressionError(f"must evaluate to {returns[0]} but got {found}")
        wanted = " ".join(returns)
        raise AdmissionExpressionError(f"must evaluate to one of [{wanted}] but got {found}")
    try:
        return env.program(checked, result)
    except CELError as e:
        raise AdmissionExpressionError(str(e), internal=True) from None


def compile_match_condition(source: str, *, params: bool = False) -> Program:
    """A match condition (of a webhook, or of a policy: ``params`` with a paramKind)."""
    return _compile(admission_environment(params), source, BOOL)


_SCALAR_FIELDS = {"bool": "bool", "int": "int64", "uint": "uint64", "double": "double"}
_SCALAR_FIELDS |= {"string": "string", "bytes": "bytes"}
_MESSAGE_FIELDS = {"google.protobuf.Timestamp": _TIME, "google.protobuf.Duration": _DURATION}
_MAP_KEYS = ("string", "int", "uint", "bool")
_IDENT = re.compile(r"^[_a-zA-Z][_a-zA-Z0-9]*\Z")


def _element(text: str) -> str | None:
    return _SCALAR_FIELDS.get(text) or _MESSAGE_FIELDS.get(text)


def variable_field(name: str, checked_type: Any) -> VariableField:
    """A variable's type as kube's ``convertCelTypeToDeclType`` keeps it, in protobuf terms:
    scalars, timestamps, durations, lists and maps of them; anything else (messages, nested
    containers, optionals) is dyn, which kube also makes of objects."""
    text = type_text(checked_type)
    kind = checked_type.WhichOneof("type_kind")
    element = _element(text)
    if element is not None:
        return (name, element, "")
    if kind == "list_type":
        item = _element(type_text(checked_type.list_type.elem_type))
        return (name, item or _DYN, "*")
    if kind == "map_type":
        key = type_text(checked_type.map_type.key_type)
        value = _element(type_text(checked_type.map_type.value_type))
        if key in _MAP_KEYS:
            return (name, value or _DYN, f"map:{_SCALAR_FIELDS[key]}")
    return (name, _DYN, "")


class PolicyCompiler:
    """kube's admission CEL compiler for one policy's expressions.

    With ``composition`` (the policy has variables) ``variables`` is declared, and each
    variable compiled becomes a field typed by its expression, visible to everything
    compiled after it, as kube's ``CompositedCompiler`` does (a variable that fails to
    compile is dyn).  ``programs`` keeps each variable's program or error, by name.
    """

    def __init__(self, params: bool, composition: bool) -> None:
        self.params = params
        self._fields: dict[str, VariableField] | None = {} if composition else None
        self.programs: dict[str, Program | CELError] = {}

    def variable(self, name: str, source: str) -> Program:
        """Compile a variable (any result type) and declare it for what follows."""
        try:
            program = self.compile(source, ANY)
        except CELError as e:
            self.programs[name] = e
            self._declare((name, _DYN, ""))
            raise
        self.programs[name] = program
        self._declare(variable_field(name, program.checked.type_of(program.checked.ast.expr.id)))
        return program

    def _declare(self, variable: VariableField) -> None:
        if self._fields is not None and _IDENT.match(variable[0]):
            self._fields[variable[0]] = variable

    def parse(self, source: str) -> None:
        """Syntax errors only (CompileError), located in ``source`` as written."""
        admission_environment(self.params, True, None).parse(source)

    def compile(
        self, source: str, returns: tuple[str, ...] = BOOL, authorizer: bool = True
    ) -> Program:
        """A validation (BOOL), message expression (STRING, no authorizer), audit
        annotation value (STRING_OR_NULL) or match condition (BOOL)."""
        fields = None if self._fields is None else tuple(self._fields.values())
        return _compile(admission_environment(self.params, authorizer, fields), source, returns)


# A policy variable for ``compile_policy_expression``: a name (declared dyn) or a
# ``(name, expression)`` pair (typed by its expression).
PolicyVariable = str | tuple[str, str]


@functools.lru_cache(maxsize=128)
def policy_compiler(params: bool, variables: tuple[PolicyVariable, ...]) -> PolicyCompiler:
    """A compiler with the policy's variables declared (and compiled) in order."""
    compiler = PolicyCompiler(params, composition=bool(variables))
    for variable in variables:
        if isinstance(variable, str):
            compiler._declare((variable, _DYN, ""))
            continue
        # a failure is kept in ``programs``: evaluating the variable fails, as kube's does
        with contextlib.suppress(CELError):
            compiler.variable(*variable)
    return compiler


def compile_policy_expression(
    source: str,
    variables: Sequence[PolicyVariable] = (),
    *,
    returns: tuple[str, ...] = ANY,
    params: bool = True,
    authorizer: bool = True,
) -> Program:
    """Compile one expression of a ValidatingAdmissionPolicy for evaluation at admission.

    ``variables``: the policy's variables in order, as names (dyn) or ``(name,
    expression)`` pairs (typed as kube types them); ``variables`` is declared only when
    there are some, as kube's composition compiler does.  The defaults suit a stored
    policy, whose expressions passed kube's checks when written: ``params`` declared, any
    result type.  For kube's exact checks pass ``params`` (the policy has a paramKind) and
    ``returns``: BOOL (validations, match conditions), STRING (message expressions, with
    ``authorizer=False``), STRING_OR_NULL (audit annotation values).  Raises
    ``CompileError`` or ``AdmissionExpressionError`` with kube's messages.
    """
    compiler = policy_compiler(params, tuple(variables))
    return compiler.compile(source, returns, authorizer)
