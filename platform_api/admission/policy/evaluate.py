"""One policy against one request and parameter object: kube's policy validator.

Match conditions first (a false one skips the policy); then the variables, in order, each
seeing the ones before it; then every validation.  A validation that is not true is a
denial whose message is the ``messageExpression`` result (a trimmed one-line string), else
``message``, else ``failed expression: <expression>``.  An expression that errors is an
evaluation error, which the policy's ``failurePolicy`` turns into a denial (Fail) or
nothing (Ignore).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from platform_api.admission import matching
from platform_api.admission.policy.compiled import Policy, Validation
from platform_api.admission.request import AdmissionRequest, request_body
from platform_api.cel import CELError

Obj = dict[str, Any]
MAX_MESSAGE = 5 * 1024  # kube's MaxEvaluatedMessageExpressionSizeBytes


@dataclass(frozen=True)
class Decision:
    allowed: bool
    message: str = ""
    reason: str = ""
    error: bool = False


async def validate(
    policy: Policy,
    req: AdmissionRequest,
    param: Obj | None,
    namespace: Obj | None,
    authorize: matching.Authorize | None,
) -> list[Decision]:
    variables: dict[str, Any] = {
        "object": req.object,
        "oldObject": req.old_object,
        "request": request_body(req, ""),
        "params": param,
        "namespaceObject": namespace,
        "variables": {},
    }
    if policy.conditions:
        matched, failures = await matching.evaluate_conditions(
            policy.conditions, variables, req, authorize
        )
        if not matched:
            return []
        if failures:
            return [Decision(False, matching.aggregate(failures), error=True)]
    broken: dict[str, str] = {}
    for name, program in policy.variables:
        if isinstance(program, str):
            broken[name] = program
            continue
        try:
            variables["variables"][name] = await matching.evaluate_program(
                program, variables, req, authorize
            )
        except CELError as e:
            broken[name] = str(e)
    return [
        await _validation(validation, variables, broken, req, authorize)
        for validation in policy.validations
    ]


async def _validation(
    validation: Validation,
    variables: dict[str, Any],
    broken: dict[str, str],
    req: AdmissionRequest,
    authorize: matching.Authorize | None,
) -> Decision:
    expression = validation.expression
    failed = next((n for n in broken if f"variables.{n}" in expression), None)
    if failed is not None:
        return Decision(
            False, f"expression '{expression}' resulted in error: {broken[failed]}", error=True
        )
    try:
        value = await matching.evaluate_program(validation.program, variables, req, authorize)
    except CELError as e:
        return Decision(False, f"expression '{expression}' resulted in error: {e}", error=True)
    if value is True:
        return Decision(True)
    return Decision(
        False,
        await _message(validation, variables, req, authorize),
        validation.reason or "Invalid",
    )


async def _message(
    validation: Validation,
    variables: dict[str, Any],
    req: AdmissionRequest,
    authorize: matching.Authorize | None,
) -> str:
    message = ""
    if validation.message_program is not None:
        try:
            value = await matching.evaluate_program(
                validation.message_program, variables, req, authorize
            )
        except CELError:
            value = None
        if isinstance(value, str):
            message = value.strip()
            if len(message) > MAX_MESSAGE or "\n" in message:
                message = ""
    if not message and validation.message:
        message = validation.message.strip()
    return message or f"failed expression: {validation.expression.strip()}"
