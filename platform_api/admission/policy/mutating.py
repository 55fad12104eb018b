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
from dataclasses import dataclass
from typing import Any

import jsonpatch
import jsonpointer

from platform_api.admission import matching
from platform_api.admission.policy import evaluate
from platform_api.admission.policy.compiled import Policy, compile_common
from platform_api.admission.request import AdmissionRequest
from platform_api.cel import CELError
from platform_api.cel.admission import PolicyCompiler
from platform_api.cel.environment import Program
from platform_api.cel.mutation import (
    APPLY_CONFIGURATION,
    apply_configuration,
    compile_mutation,
    json_patch,
)

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
) -> Obj | None:
    """The object after the policy's mutations (None: its conditions skip it).  Each
    mutation sees the object as the ones before it left it."""
    ready = await evaluate.prepare(policy, req, param, namespace, authorize)
    if ready is None:
        return None
    if isinstance(ready, evaluate.Decision):
        raise MutationError(ready.message)
    obj = req.object
    assert obj is not None
    for mutation in policy.mutations:
        if mutation.program is None:
            raise MutationError(mutation.error)
        failed = next((n for n in ready.broken if f"variables.{n}" in mutation.expression), None)
        if failed is not None:
            raise MutationError(ready.broken[failed])
        ready.runner.bind("object", obj)
        try:
            value = await ready.runner.run(mutation.program)
            if mutation.patch_type == APPLY_CONFIGURATION:
                obj = _apply(obj, apply_configuration(value), merge, atomics)
            else:
                obj = _patch(obj, json_patch(value))
        except CELError as e:
            raise MutationError(str(e)) from None
    return obj


def _apply(obj: Obj, config: Obj, merge: Merge, atomics: Atomics) -> Obj:
    found = atomics(config)
    if found:
        raise MutationError(
            "error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, "
            f"maps or structs: {', '.join(found)}"
        )
    return merge(obj, config)


def _patch(obj: Obj, operations: list[Obj]) -> Obj:
    try:
        patched: Obj = jsonpatch.JsonPatch(operations).apply(copy.deepcopy(obj))
    except jsonpatch.JsonPatchTestFailed:
        return obj  # kube: a failed test means the patch is not applied
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as e:
        raise MutationError(f"JSON Patch: {e}") from None
    except (TypeError, KeyError, ValueError) as e:
        raise MutationError(f"JSON Patch: {e}") from None
    return patched
