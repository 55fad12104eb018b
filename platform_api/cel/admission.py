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

import functools
from typing import Any

from cel_expr_python import cel

from platform_api.cel.checked import type_text
from platform_api.cel.environment import Environment, Program
from platform_api.cel.errors import CELError
from platform_api.cel.protos import FieldSpec, file_proto, new_pool

_S, _TIME, _DYN = "string", ".google.protobuf.Timestamp", ".google.protobuf.Value"
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
_DEPS = ["google/protobuf/struct.proto", "google/protobuf/timestamp.proto"]


@functools.cache
def match_condition_environment() -> Environment:
    """The environment of a webhook's match conditions (no ``params``: webhooks have none)."""
    pool = new_pool()
    pool.Add(file_proto("platform/cel_admission.proto", "kubernetes", _MESSAGES, _DEPS))
    variables: dict[str, Any] = {
        "object": cel.Type.DYN,
        "oldObject": cel.Type.DYN,
        "namespaceObject": cel.Type("kubernetes.Namespace"),
        "request": cel.Type("kubernetes.AdmissionRequest"),
        "authorizer": cel.Type("kubernetes.authorization.Authorizer"),
        "authorizer.requestResource": cel.Type("kubernetes.authorization.ResourceCheck"),
    }
    return Environment(variables, pool=pool)


class MatchConditionError(CELError):
    """A match condition kube refuses; ``internal`` when kube reports an internal error."""

    def __init__(self, message: str, internal: bool = False) -> None:
        super().__init__(message)
        self.internal = internal


def compile_match_condition(source: str) -> Program:
    """kube's ``CompileCELExpression`` for a condition: compile, the result must be exactly
    ``bool`` (dyn is refused too), then build the program."""
    env = match_condition_environment()
    checked, result = env.check(source)  # CompileError: "compilation failed: ..."
    found = type_text(checked.type_of(checked.ast.expr.id))
    if found != "bool":
        raise MatchConditionError(f"must evaluate to bool but got {found}")
    try:
        return env.program(checked, result)
    except CELError as e:
        raise MatchConditionError(str(e), internal=True) from None
