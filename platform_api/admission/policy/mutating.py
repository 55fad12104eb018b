"""MutatingAdmissionPolicies compiled, and one policy's mutations run on one object.

A mutation is an ``applyConfiguration`` (merged into the object as structured-merge-diff
merges, refusing to touch atomic lists, maps and structs) or a ``jsonPatch`` (applied as
RFC 6902; a failed ``test`` leaves the object as it was).  Expressions compile through
``platform_api.cel.mutation``; kube's wording for each failure is kept, as the dispatcher
reports it under the policy's ``failurePolicy``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from platform_api.admission import matching
from platform_api.admission.patched import read_back_patched
from platform_api.admission.policy import evaluate
from platform_api.admission.policy.compiled import Policy, compile_common
from platform_api.admission.request import AdmissionRequest
from platform_api.cel import CELError
from platform_api.cel.admission import PolicyCompiler
from platform_api.cel.environment import Program
from platform_api.cel.mutation import (
    APPLY_CONFIGURATION,
    FieldTypeError,
    apply_configuration,
    compile_mutation,
    json_patch_operations,
)
from platform_api.patch import json_patch

Obj = dict[str, Any]
# live object, apply configuration -> merged object (structured-merge-diff's Merge)
Merge = Callable[[Obj, Obj], Obj]
# apply configuration -> the paths of atomic lists, maps and structs it sets
Atomics = Callable[[Obj], list[str]]


@dataclass(frozen=True)
class Mutation:
    patch_type: str
    expression: str
    program: Program | None
    error: str = ""  # the expression's compile error


@dataclass
class MutatingPolicy(Policy):
    mutations: tuple[Mutation, ...] = ()
    reinvocation: str = "Never"


def compile_mutating_policy(obj: Obj) -> MutatingPolicy:
    spec = obj.get("spec") or {}
    policy, compiler = compile_common(obj, MutatingPolicy)
    policy.reinvocation = str(spec.get("reinvocationPolicy") or "Never")
    policy.mutations = tuple(
        _mutation(compiler, m) for m in spec.get("mutations") or () if isinstance(m, dict)
    )
    return policy


def _mutation(compiler: PolicyCompiler, raw: Obj) -> Mutation:
    patch_type = str(raw.get("patchType") or "")
    member = raw.get("applyConfiguration" if patch_type == APPLY_CONFIGURATION else "jsonPatch")
    expression = str((member or {}).get("expression") or "")
    try:
        return Mutation(patch_type, expression, compile_mutation(compiler, expression, patch_type))
    except CELError as e:
        return Mutation(patch_type, expression, None, str(e))


@dataclass
class Outcome:
    """One policy's run: the object its mutations made (None: none was made), their
    failures, and whether its conditions let it run at all."""

    object: Obj | None
    failures: list[str] = field(default_factory=list)
    ran: bool = False


class MutationError(Exception):
    """A mutation that could not be made: reported under the policy's failure policy."""


async def mutate(
    policy: MutatingPolicy,
    req: AdmissionRequest,
    param: Obj | None,
    namespace: Obj | None,
    authorize: matching.Authorize | None,
    merge: Merge,
    atomics: Atomics,
) -> Outcome:
    """What the policy's mutations made of ``req.object``.  Each mutation sees the object
    as the ones before it left it; one that fails is passed over and the next ones run,
    as kube's dispatcher goes on."""
    ready = await evaluate.prepare(policy, req, param, namespace, authorize)
    if ready is None:
        return Outcome(None)
    if isinstance(ready, evaluate.Decision):
        return Outcome(None, [ready.message])
    obj = req.object
    assert obj is not None
    outcome = Outcome(None, ran=True)
    for mutation in policy.mutations:
        try:
            obj = outcome.object = await _mutated(mutation, ready, obj, merge, atomics, req.kind)
        except MutationError as e:
            outcome.failures.append(str(e))
    return outcome


async def _mutated(
    mutation: Mutation,
    ready: evaluate.Prepared,
    obj: Obj,
    merge: Merge,
    atomics: Atomics,
    kind: tuple[str, str, str],
) -> Obj:
    if mutation.program is None:
        raise MutationError(mutation.error)
    # kube words an evaluation's failure (a variable's too) as the expression's
    failed = next((n for n in ready.broken if f"variables.{n}" in mutation.expression), None)
    if failed is not None:
        raise MutationError(_failed(mutation, ready.broken[failed]))
    ready.runner.bind("object", obj)
    try:
        value = await ready.runner.run(mutation.program)
    except CELError as e:
        raise MutationError(_failed(mutation, e)) from None
    try:
        if mutation.patch_type == APPLY_CONFIGURATION:
            return _apply(obj, apply_configuration(value), merge, atomics)
        return _patch(obj, json_patch_operations(value), kind)
    except FieldTypeError as e:  # kube's evaluation fails building the value
        raise MutationError(_failed(mutation, e)) from None
    except CELError as e:
        raise MutationError(str(e)) from None


def _failed(mutation: Mutation, error: object) -> str:
    return f"expression '{mutation.expression}' resulted in error: {error}"


def _apply(obj: Obj, config: Obj, merge: Merge, atomics: Atomics) -> Obj:
    found = atomics(config)
    if found:
        raise MutationError(
            "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, "
            f"maps or structs: {', '.join(found)}"
        )
    return merge(obj, config)


def _patch(obj: Obj, operations: list[Obj], kind: tuple[str, str, str]) -> Obj:
    """The JSON patch applied as kube's library applies it, and the result read back
    strictly into the object's type: what does not decode is kube's internal error,
    whatever the failure policy (errors.StatusError, not a MutationError)."""
    decoded: dict[int, Any] = {}
    try:
        patched = json_patch.apply(copy.deepcopy(obj), operations, decoded)
    except json_patch.TestFailed:
        return obj  # kube: a failed test means the patch is not applied
    except json_patch.JSONPatchError as e:
        raise MutationError(f"JSON Patch: {e}") from None
    return read_back_patched(patched, kind, strict=True, decoded=decoded)
