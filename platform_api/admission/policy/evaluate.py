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
from platform_api.cel.environment import Program, activation
from platform_api.gotext import quote

Obj = dict[str, Any]
MAX_MESSAGE = 5 * 1024  # kube's MaxEvaluatedMessageExpressionSizeBytes


@dataclass(frozen=True)
class Decision:
    allowed: bool
    message: str = ""
    reason: str = ""
    error: bool = False


class _Runner:
    """Runs a policy's programs on one request.  Unless an expression asks the authorizer
    (bound afresh per evaluation), every program shares one activation until a variable
    is added: converting the objects to CEL values is most of an evaluation's cost."""

    def __init__(
        self,
        variables: dict[str, Any],
        req: AdmissionRequest,
        authorize: matching.Authorize | None,
        uses_authorizer: bool,
    ) -> None:
        self.variables = variables
        self.req = req
        self.authorize = authorize
        self.uses_authorizer = uses_authorizer
        self._act: Any = None

    async def run(self, program: Program) -> Any:
        if self.uses_authorizer:
            return await matching.evaluate_program(
                program, self.variables, self.req, self.authorize
            )
        if self._act is None:
            bound = {**self.variables, "authorizer": None, "authorizer.requestResource": None}
            self._act = activation(bound)
        return program.eval(self._act)

    def bind(self, name: str, value: Any) -> None:
        """Rebind a root variable (a mutation's ``object`` after the previous one)."""
        self.variables[name] = value
        self._act = None

    def add_variable(self, name: str, value: Any) -> None:
        self.variables["variables"] = {**self.variables["variables"], name: value}
        self._act = None


@dataclass
class Prepared:
    """A policy ready to evaluate on one request: its runner with the variables bound,
    and the variables that failed (by name, with the error)."""

    runner: _Runner
    broken: dict[str, str]


async def prepare(
    policy: Policy,
    req: AdmissionRequest,
    param: Obj | None,
    namespace: Obj | None,
    authorize: matching.Authorize | None,
) -> Prepared | Decision | None:
    """Match conditions, then the variables.  None: a condition skips the policy; a
    Decision: the conditions failed to evaluate."""
    variables: dict[str, Any] = {
        "object": req.object,
        "oldObject": req.old_object,
        "request": request_body(req, ""),
        "params": param,
        "namespaceObject": namespace,
        "variables": {},
    }
    runner = _Runner(variables, req, authorize, policy.uses_authorizer)
    if policy.conditions:
        matched, failures = await matching.evaluate_conditions(
            policy.conditions, variables, req, authorize, runner.run
        )
        if not matched:
            return None
        if failures:
            return Decision(False, matching.aggregate(failures), error=True)
    broken: dict[str, str] = {}
    for name, program in policy.variables:
        if isinstance(program, str):
            broken[name] = f"composited variable {quote(name)} fails to compile: {program}"
            continue
        try:
            runner.add_variable(name, await runner.run(program))
        except CELError as e:
            broken[name] = f"composited variable {quote(name)} fails to evaluate: {e}"
    return Prepared(runner, broken)


async def validate(
    policy: Policy,
    req: AdmissionRequest,
    param: Obj | None,
    namespace: Obj | None,
    authorize: matching.Authorize | None,
) -> list[Decision]:
    ready = await prepare(policy, req, param, namespace, authorize)
    if ready is None:
        return []
    if isinstance(ready, Decision):
        return [ready]
    decisions = [
        await _validation(validation, ready.runner, ready.broken)
        for validation in policy.validations
    ]
    return decisions + await _audit_annotations(policy, req, ready.runner)


async def _audit_annotations(
    policy: Policy, req: AdmissionRequest, runner: _Runner
) -> list[Decision]:
    """kube publishes each ``auditAnnotations`` value (a string; null publishes nothing)
    as ``<policy>/<key>`` on the request's audit event; an error is a failed decision."""
    failed = []
    for annotation in policy.audit_annotations:
        try:
            value = await runner.run(annotation.program)
        except CELError as e:
            message = f"expression '{annotation.expression}' resulted in error: {e}"
            failed.append(Decision(False, message, error=True))
            continue
        if isinstance(value, str):
            req.audit_annotations.setdefault(f"{policy.name}/{annotation.key}", value)
    return failed


async def _validation(validation: Validation, runner: _Runner, broken: dict[str, str]) -> Decision:
    expression = validation.expression
    failed = next((n for n in broken if f"variables.{n}" in expression), None)
    if failed is not None:
        return Decision(
            False, f"expression '{expression}' resulted in error: {broken[failed]}", error=True
        )
    try:
        value = await runner.run(validation.program)
    except CELError as e:
        return Decision(False, f"expression '{expression}' resulted in error: {e}", error=True)
    if value is True:
        return Decision(True)
    return Decision(False, await _message(validation, runner), validation.reason or "Invalid")


async def _message(validation: Validation, runner: _Runner) -> str:
    message = ""
    if validation.message_program is not None:
        try:
            value = await runner.run(validation.message_program)
        except CELError:
            value = None
        if isinstance(value, str):
            message = value.strip()
            if len(message) > MAX_MESSAGE or "\n" in message:
                message = ""
    if not message and validation.message:
        message = validation.message.strip()
    return message or f"failed expression: {validation.expression.strip()}"
